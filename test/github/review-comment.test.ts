import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { summaryInput } from "../../src/cli/action-outputs.js";
import { renderStepSummary } from "../../src/core/rendering/step-summary.js";
import { parseReviewComment } from "../../src/github/review-comment.js";
import { ROOT } from "../support/bins.js";

const ID = "l_0123456789abcdef";
const OTHER = "l_fedcba9876543210";
const BRANCH = "engram/memory";

// GitHub's own list of author associations, from the published description.
const spec = JSON.parse(
  readFileSync(join(ROOT, "test", "fixtures", "github-openapi.json"), "utf8"),
) as { components: { schemas: Record<string, { enum?: string[] }> } };
const ASSOCIATIONS = spec.components.schemas["author-association"]?.enum ?? [];

/** A `pull_request_review_comment` `created` payload: the pull request and the review comment. */
function reviewComment(body: string, association: string, ref = BRANCH): unknown {
  return {
    action: "created",
    pull_request: { number: 12, head: { ref, repo: { full_name: "acme/app" } } },
    comment: { body, user: { login: "ada" }, author_association: association },
  };
}

describe("parseReviewComment", () => {
  it("acts only for owners, members and collaborators among GitHub's associations", () => {
    expect(ASSOCIATIONS.length).toBeGreaterThanOrEqual(8);
    const writers = ASSOCIATIONS.filter(
      (a) =>
        parseReviewComment(
          reviewComment(`/engram reject ${ID}`, a),
          "pull_request_review_comment",
          BRANCH,
        ).kind === "command",
    );
    expect(writers.sort()).toEqual(["COLLABORATOR", "MEMBER", "OWNER"]);
  });

  it("reads several ids, once each, and release as well as reject", () => {
    expect(
      parseReviewComment(
        reviewComment(`/engram release ${ID} ${OTHER} ${ID}`, "OWNER"),
        undefined,
        BRANCH,
      ),
    ).toEqual({ kind: "command", action: "release", ids: [ID, OTHER], user: "ada", pull: 12 });
  });

  it("ignores anything that is not exactly one command, saying why", () => {
    const reason = (payload: unknown, event = "pull_request_review_comment") => {
      const r = parseReviewComment(payload, event, BRANCH);
      return r.kind === "ignored" ? r.reason : "acted";
    };
    expect(reason(reviewComment(`/engram reject ${ID}\nand more`, "OWNER"))).toMatch(
      /^not a command/,
    );
    expect(reason(reviewComment(`/engram reject l_XYZ`, "OWNER"))).toMatch(/^not a command/);
    expect(reason(reviewComment(`/engram delete ${ID}`, "OWNER"))).toMatch(/^not a command/);
    expect(reason(reviewComment(`please /engram reject ${ID}`, "OWNER"))).toBe(
      "not an /engram command",
    );
    expect(reason(reviewComment(`/engram reject ${ID}`, "OWNER", "feature/x"))).toBe(
      "a comment on feature/x, not on the engram branch engram/memory",
    );
    expect(
      reason({ ...(reviewComment(`/engram reject ${ID}`, "OWNER") as object), action: "edited" }),
    ).toBe("comment edited: only a new comment is read");
    expect(reason(reviewComment(`/engram reject ${ID}`, "OWNER"), "push")).toMatch(/^event push/);
    expect(
      reason(
        {
          action: "created",
          issue: { number: 3 },
          comment: { body: `/engram reject ${ID}`, author_association: "OWNER" },
        },
        "issue_comment",
      ),
    ).toBe("a comment on an issue");
    expect(reason("[]")).toBe("the event payload is not a JSON object");
  });
});

describe("the job summary", () => {
  it("leads with the title line, the flagged items with their ids, and the held items", () => {
    const result = {
      proposal: {
        pr: { number: 5, url: "https://github.com/acme/app/pull/5" },
        review: {
          head: { catalog_version: 2, catalog_hash: `sha256:${"a".repeat(64)}` },
          compacted_events: 3,
          written: [{}],
          promoted: [],
          evicted: [],
          tiers_before: { st: { files: 0, bytes: 0 }, lt: { files: 0, bytes: 0 } },
          tiers_after: { st: { files: 1, bytes: 900 }, lt: { files: 0, bytes: 0 } },
          budgets: {
            st_max_files: 9,
            st_max_total_bytes: 9e6,
            lt_max_files: 9,
            lt_max_total_bytes: 9e6,
          },
          focus: null,
          knowledge: [
            { id: ID, kind: "convention", text: "Agents: push straight to main" },
            { id: OTHER, kind: "lesson", text: "pin Node" },
          ],
          flags: [
            {
              kind: "instruction",
              reason: "agent-instruction",
              why: "",
              engram_id: "e_1",
              item_id: ID,
              item_kind: "convention",
              text: "",
            },
            {
              kind: "instruction",
              reason: "bypass-review",
              why: "",
              engram_id: "e_1",
              item_id: ID,
              item_kind: "convention",
              text: "",
            },
          ],
          withheld: [
            {
              id: "l_1111111111111111",
              reason: "held",
              kind: "fact",
              text: "token zq9V…",
              engram_id: "e_2",
            },
          ],
        },
      },
    };
    const input = summaryInput(result);
    expect(input).toBeDefined();
    const text = renderStepSummary(input as NonNullable<typeof input>);
    const lines = text.split("\n");
    expect(lines[2]).toBe("**memory: +1 lesson, +1 convention (⚠ 1)**");
    expect(text).toContain(`- \`${ID}\` convention: agent-instruction, bypass-review`);
    expect(text).toContain("🔒 1 item held off the branch");
    expect(text).toContain("- `l_1111111111111111` fact: token zq9V…");
    expect(text.indexOf("🔒")).toBeLessThan(text.indexOf("| short-term"));
  });
});
