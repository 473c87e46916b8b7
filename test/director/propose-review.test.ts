/**
 * Review in a minute (issue 37): items flagged as secrets are held off the pushed branch
 * until released; one item is rejected by id, the branch regenerated without it and the rest
 * kept, durably; the same from a GitHub comment event. Real repositories, a bare origin.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, director, jsonOf, worker } from "../support/bins.js";
import { BRANCH, factsAt, proposeRun, remember, setup } from "../support/proposals.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

// No known prefix, so the redaction keeps it; random enough for the review flags.
const SECRET = "zq9Vt4LmR7xKp2WcB8nYh3JdF6gSa1Ue";
const LEAK = `the staging deploy token is ${SECRET}`;

interface Review {
  knowledge: { id: string; kind: string; text: string }[];
  withheld?: { id: string; reason: string; text: string }[];
}
interface ProposalJson {
  proposal: {
    status: string;
    head_sha: string | null;
    review: Review | null;
    would_open: { title: string; body: string } | null;
  };
  item?: { action: string; ids: string[]; user?: string; pull?: number };
  ignored?: string;
}

/** Every byte of every commit the engram branch adds to main, as the origin has it. */
function branchBytes(origin: string): string {
  const commits = git(origin, ["rev-list", `main..${BRANCH}`])
    .trim()
    .split("\n");
  expect(commits.length).toBeGreaterThan(0);
  const texts: string[] = [git(origin, ["log", "-p", "--format=%B", `main..${BRANCH}`])];
  for (const commit of commits) {
    for (const path of git(origin, ["ls-tree", "-r", "--name-only", commit]).trim().split("\n")) {
      texts.push(git(origin, ["show", `${commit}:${path}`]));
    }
  }
  return texts.join("\n");
}

async function item(
  repo: TempRepo,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProposalJson> {
  const r = await director([...args, "--json"], {
    cwd: repo.dir,
    env: { SOURCE_DATE_EPOCH: "1800000100", ...env },
    timeoutMs: 60_000,
  });
  expect(r.code, describeResult(r)).toBe(0);
  return jsonOf<ProposalJson>(r);
}

/** Many notes in one `worker emit --from` delivery. */
async function rememberAll(repo: TempRepo, texts: string[]): Promise<void> {
  const file = join(dirs.dir("engram-notes-"), "notes.ndjson");
  writeFileSync(
    file,
    texts.map((text) => JSON.stringify({ kind: "fact", text, topics: ["pr"] })).join("\n"),
  );
  const r = await worker(["emit", "--from", file, "--worker", "w1"], { cwd: repo.dir });
  expect(r.code, describeResult(r)).toBe(0);
}

function idOf(review: Review | null, text: string): string {
  const found = review?.knowledge.find((k) => k.text === text);
  expect(found, `no item ${text}`).toBeDefined();
  return (found as { id: string }).id;
}

describe("review one item at a time", () => {
  it("holds a secret-like item off the pushed branch, the body and MEMORY.md until it is released", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["the build uses tsc", LEAK, "tests run on real git repositories"]);
    const first = jsonOf<ProposalJson>(await proposeRun(clone));
    expect(first.proposal.status).toBe("created");
    const held = first.proposal.review?.withheld ?? [];
    expect(held).toHaveLength(1);
    expect(held[0]?.reason).toBe("held");
    const id = held[0]?.id as string;
    expect(id).toMatch(/^l_[0-9a-f]{16}$/);

    const bytes = branchBytes(origin);
    expect(bytes).not.toContain(SECRET);
    expect(bytes).toContain("the build uses tsc");
    expect(factsAt(origin, BRANCH).sort()).toEqual([
      "tests run on real git repositories",
      "the build uses tsc",
    ]);
    const body = first.proposal.would_open?.body ?? "";
    expect(body).not.toContain(SECRET);
    expect(body).toContain("### 🔒 Held, not on this branch (1)");
    expect(body).toContain(`\`${id}\``);
    expect(body).toContain("`director release ITEM_ID`");
    // The branch verifies and passes the guard: nothing flagged as a secret is on it.
    const guard = await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`], {
      cwd: clone.dir,
    });
    expect(guard.code, describeResult(guard)).toBe(0);

    // The dry-run plan sees the branch as pushed: the held item is no change to make.
    const plan = jsonOf<{ proposal: { plan: { action: string; changes: { path: string }[] } } }>(
      await proposeRun(clone, ["--dry-run"], 1_800_000_010),
    );
    expect(plan.proposal.plan.action).toBe("unchanged");
    const onBranch = git(origin, ["diff", "--name-only", "main", BRANCH]).trim().split("\n");
    expect(plan.proposal.plan.changes.map((c) => c.path).sort()).toEqual(onBranch.sort());

    // A run with nothing new keeps it held: the staging tree still has it, the branch not.
    await remember(clone, ["recall ranks notes with BM25"]);
    const again = jsonOf<ProposalJson>(await proposeRun(clone, [], 1_800_000_050));
    expect(again.proposal.review?.withheld?.map((w) => w.id)).toEqual([id]);
    expect(branchBytes(origin)).not.toContain(SECRET);

    // Main moves: the staging tree is rebuilt from the branch, and the held item survives.
    clone.write("src/other.ts", "export const other = 2;\n");
    git(clone.dir, ["add", "-A"]);
    git(clone.dir, ["commit", "-q", "-m", "other"]);
    git(clone.dir, ["push", "-q", "origin", "main"]);
    const rebuilt = jsonOf<ProposalJson>(await proposeRun(clone, ["--flush"], 1_800_000_060));
    expect(rebuilt.proposal.status).toBe("regenerated");
    expect(rebuilt.proposal.review?.withheld?.map((w) => w.id)).toEqual([id]);
    expect(branchBytes(origin)).not.toContain(SECRET);

    const released = await item(clone, ["release", id]);
    expect(released.item).toEqual({ action: "release", ids: [id] });
    expect(released.proposal.review?.withheld ?? []).toEqual([]);
    expect(factsAt(origin, BRANCH)).toContain(LEAK);
    expect(factsAt(origin, BRANCH)).toContain("recall ranks notes with BM25");

    // Released, it is on the branch and the guard lets it through with a warning: the engram
    // records the release. (An item no reviewer released fails the guard: guard.test.ts.)
    const releasedGuard = await director(
      ["guard", "--base", "main", "--head", `origin/${BRANCH}`, "--json"],
      { cwd: clone.dir },
    );
    expect(releasedGuard.code, describeResult(releasedGuard)).toBe(0);
    const report = jsonOf<{ ok: boolean; warnings: { code: string; message: string }[] }>(
      releasedGuard,
    );
    const warned = report.warnings.filter((w) => w.code === "flagged-secret");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.message).toContain("a reviewer released it (director release)");
    expect(releasedGuard.stdout).not.toContain(SECRET);
  });

  it("rejects one item: the branch is regenerated without it, the rest kept, and it never comes back", async () => {
    const { origin, clone } = await setup(dirs);
    const good = Array.from({ length: 40 }, (_, i) => `good note number ${i} about the build`);
    const bad = "pin the database driver to version 2 forever";
    await rememberAll(clone, [...good.slice(0, 20), bad, ...good.slice(20)]);
    const first = jsonOf<ProposalJson>(await proposeRun(clone));
    const id = idOf(first.proposal.review, bad);
    const body = first.proposal.would_open?.body ?? "";
    // The first lines say what merge, close and reject do; every item shows its id.
    const lines = body.split("\n");
    expect(lines[2]).toMatch(/^\*\*memory: \+41 facts\*\*$/);
    expect(lines[4]).toMatch(/^\*\*Merge\*\*: .* \*\*Close\*\*: .* \*\*Reject one item\*\*: /);
    expect(lines[4]).toContain("`/engram reject ITEM_ID`");
    for (const k of first.proposal.review?.knowledge ?? []) expect(body).toContain(`\`${k.id}\``);

    const rejected = await item(clone, ["reject", id]);
    expect(rejected.item).toEqual({ action: "reject", ids: [id] });
    expect(["updated", "regenerated"]).toContain(rejected.proposal.status);
    expect(factsAt(origin, BRANCH).sort()).toEqual([...good].sort());
    expect(rejected.proposal.would_open?.body).toContain("_1 item rejected in review is left out:");

    // Not back on the next run, even when a worker says it again.
    await remember(clone, [bad, "one more good note"]);
    const next = jsonOf<ProposalJson>(await proposeRun(clone, [], 1_800_000_200));
    expect(["updated", "regenerated"]).toContain(next.proposal.status);
    const facts = factsAt(origin, BRANCH);
    expect(facts).not.toContain(bad);
    expect(facts).toContain("one more good note");
    expect(facts.filter((f) => f.startsWith("good note"))).toHaveLength(40);

    // An id the proposal does not hold is refused, naming it.
    const unknown = await director(["reject", "l_0000000000000000"], { cwd: clone.dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("l_0000000000000000: no item of the engram proposal");
  });

  it("takes /engram reject from a pull-request comment by a member, and ignores one by an outsider", async () => {
    const { origin, clone } = await setup(dirs);
    const bad = "the staging database lives on host db-7";
    await remember(clone, ["the build uses tsc", bad]);
    const first = jsonOf<ProposalJson>(await proposeRun(clone));
    const id = idOf(first.proposal.review, bad);
    const before = git(origin, ["rev-parse", BRANCH]).trim();

    const event = (association: string, body: string) => {
      const path = join(dirs.dir("engram-event-"), "event.json");
      writeFileSync(path, JSON.stringify(issueCommentEvent(association, body)));
      return path;
    };
    const env = { GITHUB_EVENT_NAME: "issue_comment" };
    const outsider = await item(
      clone,
      ["review-comment", "--event", event("NONE", `/engram reject ${id}`)],
      env,
    );
    expect(outsider.ignored).toBe(
      "octo is NONE: only an owner, member or collaborator may reject items",
    );
    const chatter = await item(
      clone,
      ["review-comment", "--event", event("MEMBER", `looks good, but /engram reject ${id}`)],
      env,
    );
    expect(chatter.ignored).toBe("not an /engram command");
    expect(git(origin, ["rev-parse", BRANCH]).trim()).toBe(before);

    const member = await item(
      clone,
      ["review-comment", "--event", event("MEMBER", `  /engram reject ${id}\r\n`)],
      env,
    );
    expect(member.item).toEqual({ action: "reject", ids: [id], user: "octo", pull: 7 });
    expect(factsAt(origin, BRANCH)).toEqual(["the build uses tsc"]);
  });
});

/**
 * An `issue_comment` `created` payload as GitHub sends it for a comment on a pull request:
 * the `issue` (with its `pull_request` links) and the `issue-comment`, shaped as the
 * `issue` and `nullable-issue-comment` schemas of test/fixtures/github-openapi.json.
 */
function issueCommentEvent(association: string, body: string): unknown {
  const user = { login: "octo", id: 1, type: "User" };
  return {
    action: "created",
    issue: {
      id: 70,
      number: 7,
      title: "memory: +2 facts",
      state: "open",
      user: { login: "engram-bot", id: 2, type: "Bot" },
      pull_request: {
        url: "https://api.github.com/repos/acme/app/pulls/7",
        html_url: "https://github.com/acme/app/pull/7",
        diff_url: "https://github.com/acme/app/pull/7.diff",
        patch_url: "https://github.com/acme/app/pull/7.patch",
        merged_at: null,
      },
    },
    comment: {
      id: 900,
      node_id: "IC_kwDO",
      url: "https://api.github.com/repos/acme/app/issues/comments/900",
      html_url: "https://github.com/acme/app/pull/7#issuecomment-900",
      issue_url: "https://api.github.com/repos/acme/app/issues/7",
      body,
      user,
      created_at: "2026-11-29T07:00:00Z",
      updated_at: "2026-11-29T07:00:00Z",
      author_association: association,
    },
    repository: { full_name: "acme/app" },
    sender: user,
  };
}
