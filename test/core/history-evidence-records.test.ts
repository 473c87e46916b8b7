/**
 * Evidence drawn from an application's history (issue 41, eighth round): a decision record
 * written, a named dependency taken out of the manifest, who may access what as a policy, and
 * choices that change only how screens look. Every message and path here is invented.
 */
import { describe, expect, it } from "vitest";
import { classifyCommit } from "../../src/core/history/classify.js";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import { readEvidence, writesDecisionRecord } from "../../src/core/history/evidence.js";

const changes = (...files: string[]) => ({
  paths: files.map((f) => ({ status: f.slice(0, 1), path: f.slice(2) })),
});
/** The confidence of the decision read from a commit, 0 when none is read. */
const weigh = (subject: string, files: string[]) =>
  classifyCommit({ subject, body: "", changes: changes(...files) }).decision?.confidence ?? 0;

describe("a decision record written", () => {
  it("makes the commit that adds it a decision, whatever its type", () => {
    const record = "A docs/adr/0007-store-attachments-by-hash.md";
    for (const subject of [
      "feat(storage): store attachments by content hash (#812)",
      "fix: define how attachment names are resolved",
      "Describe the attachment layout",
    ]) {
      expect(weigh(subject, [record, "M server/storage/blob.go"])).toBeGreaterThanOrEqual(
        DECISION_LINE,
      );
    }
    expect(
      weigh("chore: record the queue choice", ["A decisions/queue.md"]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
  });

  it("does not read an index, a template, an edited record or an architecture page as one", () => {
    for (const file of [
      "A docs/adr/README.md",
      "A docs/adr/template.md",
      "M docs/adr/0007-store-attachments-by-hash.md",
      "A docs/architecture/overview.md",
    ]) {
      expect(writesDecisionRecord(changes(file))).toBe(false);
    }
    expect(
      weigh("feat(storage): store attachments by content hash", [
        "A docs/adr/README.md",
        "M server/storage/blob.go",
      ]),
    ).toBe(0);
  });
});

describe("a named dependency taken out", () => {
  it("is a library dropped where the manifest changed, whatever the prefix", () => {
    for (const subject of [
      "fix: remove left-pad dependency, pad with String#padStart",
      "refactor(web): remove the date-fns dependency",
      "chore: replace `request` package with the fetch API",
    ]) {
      expect(weigh(subject, ["M package.json", "M src/pad.ts"])).toBeGreaterThanOrEqual(
        DECISION_LINE,
      );
    }
    expect(
      weigh("refactor(web): remove the date-fns dependency", [
        "M web/package.json",
        "M web/pnpm-lock.yaml",
      ]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
  });

  it("is not one without the manifest, nor when what goes was unused", () => {
    expect(weigh("refactor: remove the date-fns dependency", ["M src/dates.ts"])).toBe(0);
    expect(weigh("Remove unused left-pad dependency", ["M package.json"])).toBe(0);
  });
});

describe("who may access what", () => {
  it("keeps a fix's policy on access at the line, where another fix's choice is proposed", () => {
    const files = ["M server/router/share.go", "M server/router/share_test.go"];
    expect(weigh("fix(auth): enforce access checks on shared links", files)).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh("fix(share): enforce shorter link ids", files)).toBeLessThan(DECISION_LINE);
  });
});

describe("choices that change only how screens look", () => {
  it("are proposed, not remembered", () => {
    const ui = [
      "M web/src/components/Feed/Feed.tsx",
      "D web/src/components/Skeleton.tsx",
      "M web/src/hooks/useDelay.ts",
    ];
    const subject = "chore(web): replace the loading skeleton with a spinner";
    expect(readEvidence(changes(...ui))?.uiOnly).toBe(true);
    expect(weigh(subject, ui)).toBeGreaterThan(0);
    expect(weigh(subject, ui)).toBeLessThan(DECISION_LINE);
    // The same words over the server are not UI work.
    expect(weigh(subject, [...ui, "M server/api/feed.go"])).toBeGreaterThanOrEqual(DECISION_LINE);
  });

  it("keep a default set in a screen, which every user meets", () => {
    const dialog = ["M web/src/components/CreateTokenDialog.tsx"];
    expect(weigh("chore(tokens): default expiry to never", dialog)).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
  });

  it("need every path known: a commit with more paths than listed is not UI alone", () => {
    const listed = readEvidence({ ...changes("M web/src/components/A.tsx"), total: 80 });
    expect(listed?.uiOnly).toBe(false);
  });
});

describe("a browser security policy set", () => {
  it("is a decision however tersely worded, where a repair of it is not", () => {
    const view = ["M app/views/files.py", "M app/tests/test_files.py"];
    for (const subject of [
      "Use sandbox CSP for served files (#310)",
      "Added frame-ancestors to CSP.",
      "Allow sandboxed scripts when previewing files",
      "Updated CSP rules.",
    ]) {
      expect(weigh(subject, view)).toBeGreaterThanOrEqual(DECISION_LINE);
    }
    expect(weigh("Fix CSP violation on the settings page", view)).toBe(0);
    expect(weigh("chore(server): centralize CORS handling", view)).toBe(0);
    expect(weigh("Add sandbox environment for the demo", view)).toBe(0);
  });

  it("reads a server's views and a framework's API routes as no screen", () => {
    expect(readEvidence(changes("M app/views/files.py"))?.uiOnly).toBe(false);
    expect(
      readEvidence(changes("A src/pages/api/admin/users.ts", "M src/pages/index.tsx"))?.uiOnly,
    ).toBe(false);
    expect(readEvidence(changes("M src/pages/index.tsx", "M src/styles/main.css"))?.uiOnly).toBe(
      true,
    );
  });
});
