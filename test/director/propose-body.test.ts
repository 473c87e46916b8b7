/**
 * The engram pull request's body through the CLI (issue 37): each decision with who said it
 * and when, what agents will read (the MEMORY.md lines merging adds and removes), and who
 * contributed. Real repositories, a bare origin, two workers.
 */
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, jsonOf, worker } from "../support/bins.js";
import { proposeRun, remember, setup } from "../support/proposals.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

interface RunJson {
  proposal: { would_open: { title: string; body: string } | null };
}

async function decide(repo: TempRepo, text: string, why: string, who: string): Promise<void> {
  const r = await worker(
    ["emit", "--kind", "decision", "--text", text, "--rationale", why, "--topic", "jobs"],
    { cwd: repo.dir, env: { ENGRAM_WORKER_ID: who } },
  );
  expect(r.code, describeResult(r)).toBe(0);
}

describe("the engram pull request's body", () => {
  it("says who decided and when, what agents will read, and who contributed", async () => {
    const { clone } = await setup(dirs);
    await decide(clone, "Use Redis locks for the job queue", "advisory locks held the pool", "w1");
    await remember(clone, ["the build uses tsc"], "w2");
    await remember(clone, ["tests run on real git repositories"], "w2");
    const r = await proposeRun(clone);
    expect(r.code, describeResult(r)).toBe(0);
    const body = jsonOf<RunJson>(r).proposal.would_open?.body ?? "";
    expect(body).toMatch(
      /\*\*Use Redis locks for the job queue\*\* — why: advisory locks held the pool \(by `[^`]*w1[^`]*` on \d{4}-\d{2}-\d{2}\)/,
    );
    const read = body.slice(body.indexOf("### What agents will read: MEMORY.md (+3, −0)"));
    expect(read).toContain("- **+** Decisions: Use Redis locks for the job queue: advisory locks");
    expect(read).toContain("the build uses tsc");
    const who = body.slice(body.indexOf("### Who contributed (2)"));
    expect(who).toMatch(
      /- `[^`]*w2[^`]*`: 2 items \(2 facts\)\n- `[^`]*w1[^`]*`: 1 item \(1 decision\)/,
    );
  });
});
