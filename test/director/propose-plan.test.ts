/**
 * `director run --pr --dry-run` through the bin: the plan of the proposal, printed as text
 * and JSON, with nothing committed, pushed or opened; the real run then does what it said.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ProposalPlan } from "../../src/core/proposal/plan.js";
import { describeResult, director, jsonOf } from "../support/bins.js";
import { BRANCH, proposeRun, type RunJson, remember, setup, sha } from "../support/proposals.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

type PlanJson = RunJson & { proposal: RunJson["proposal"] & { plan: ProposalPlan | null } };

function remoteBranches(origin: string): string {
  return git(origin, ["for-each-ref", "--format=%(refname)", "refs/heads"]);
}

describe("director run --pr --dry-run", () => {
  it("prints the plan, commits and pushes nothing, and the real run does what it planned", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["the plan comes before the commit", "a dry run pushes nothing"]);
    const headBefore = sha(clone.dir, "HEAD");

    const dry = await proposeRun(clone, ["--dry-run"]);
    expect(dry.code, describeResult(dry)).toBe(0);
    const planned = jsonOf<PlanJson>(dry);
    expect(planned.proposal.status).toBe("dry-run");
    const plan = planned.proposal.plan as ProposalPlan;
    expect(plan.action).toBe("commit");
    expect(plan.commit?.kind).toBe("create");
    expect(plan.commit?.message).toMatch(/^engram: memory catalog v1\n/);
    expect(plan.via).toBe("git");
    expect(plan.head_sha).toBeNull();
    const added = plan.changes.filter((c) => c.change === "add").map((c) => c.path);
    expect(added.length).toBeGreaterThan(0);
    expect(plan.changes).toContainEqual({ path: "memory/catalog.json", change: "modify" });
    expect(plan.changes).toContainEqual({ path: "MEMORY.md", change: "modify" });
    // Nothing left the machine, nothing was committed, the events still wait in the buffer.
    expect(remoteBranches(origin)).not.toContain(BRANCH);
    expect(() => git(clone.dir, ["rev-parse", "--verify", "-q", `refs/heads/${BRANCH}`])).toThrow();
    expect(sha(clone.dir, "HEAD")).toBe(headBefore);

    const text = await director(["run", "--pr", "--force", "--dry-run"], {
      cwd: clone.dir,
      env: { SOURCE_DATE_EPOCH: "1800000000" },
    });
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toContain("plan (dry run; nothing committed or pushed)");
    expect(text.stdout).toContain(`create ${BRANCH} on main`);
    for (const path of added) expect(text.stdout).toContain(`+ ${path}`);

    const real = await proposeRun(clone);
    expect(real.code, describeResult(real)).toBe(0);
    const done = jsonOf<PlanJson>(real);
    expect(done.proposal.status).toBe("created");
    expect(done.proposal.plan).toBeNull();
    const onBranch = git(origin, ["ls-tree", "-r", "--name-only", BRANCH])
      .split("\n")
      .filter(
        (p) => p.startsWith("memory/") && /\.(nd)?json$/.test(p) && p !== "memory/catalog.json",
      );
    expect(onBranch.sort()).toEqual([...added].sort());

    const again = await proposeRun(clone, ["--dry-run"]);
    expect(again.code, describeResult(again)).toBe(0);
    const idle = jsonOf<PlanJson>(again).proposal.plan as ProposalPlan;
    expect(idle.action).toBe("unchanged");
    expect(idle.commit).toBeNull();
    expect(idle.head_sha).toBe(done.proposal.head_sha);
  });
});
