/**
 * `director run --pr` on real repositories: a bare `origin`, clones for Directors and for
 * whoever merges. The proposal is a commit on `engram/memory`; the work tree is never touched.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { sealCatalog } from "../../src/core/model/engram.js";
import { rebaseCatalog } from "../../src/core/proposal/catalog-merge.js";
import { EXIT } from "../../src/errors.js";
import type { CatalogEntry } from "../../src/schema/engram.js";
import {
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
} from "../support/bins.js";
import {
  BRANCH,
  CONFIG,
  catalogVersionAt,
  cloneOf,
  factsAt,
  proposeRun,
  type RunJson,
  remember,
  setup,
  sha,
} from "../support/proposals.js";
import { seededRandom } from "../support/random.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("director run --pr", () => {
  it("commits on the engram branch, pushes it, and leaves the work tree and index alone", async () => {
    const { origin, clone } = await setup(dirs);
    const before = readFileSync(clone.path("MEMORY.md"), "utf8");
    await remember(clone, ["the build uses tsc", "tests run on real git repositories"]);
    const r = jsonOf<RunJson>(await proposeRun(clone));
    expect(r.proposal.status).toBe("created");
    expect(r.proposal.pushed).toBe(true);
    expect(r.compacted_events).toBe(2);
    expect(sha(origin, BRANCH)).toBe(r.proposal.head_sha);
    expect(sha(origin, `${BRANCH}^`)).toBe(sha(origin, "main"));
    expect(factsAt(origin, BRANCH).sort()).toEqual([
      "tests run on real git repositories",
      "the build uses tsc",
    ]);
    // The work tree and the index are untouched: memory there is still main's.
    expect(git(clone.dir, ["status", "--porcelain"])).toBe("");
    expect(readFileSync(clone.path("MEMORY.md"), "utf8")).toBe(before);
    // The branch verifies as an engram PR.
    const guard = await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`], {
      cwd: clone.dir,
    });
    expect(guard.code, describeResult(guard)).toBe(0);
    expect(r.proposal.would_open?.title).toMatch(/^memory: \+\d+ /);
    expect(r.proposal.would_open?.body).toMatch(
      /tests run on real git repositories|the build uses tsc/,
    );
  });

  it("changes nothing when nothing is new, and fast-forwards with new events", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["first fact"]);
    const first = jsonOf<RunJson>(await proposeRun(clone));
    const again = jsonOf<RunJson>(await proposeRun(clone));
    expect(again.proposal.status).toBe("unchanged");
    expect(sha(origin, BRANCH)).toBe(first.proposal.head_sha);

    await remember(clone, ["second fact"]);
    const next = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_000_100));
    expect(next.proposal.status).toBe("updated");
    expect(sha(origin, `${BRANCH}^`)).toBe(first.proposal.head_sha);
    expect(factsAt(origin, BRANCH).sort()).toEqual(["first fact", "second fact"]);
    expect(catalogVersionAt(origin, BRANCH)).toBeGreaterThan(
      catalogVersionAt(origin, `${BRANCH}^`),
    );
  });

  it("with nothing new proposes nothing, and a proposal keeps the tiers' .gitkeep files", async () => {
    const { origin, clone } = await setup(dirs);
    const idle = jsonOf<RunJson>(await proposeRun(clone));
    expect(idle.compacted_events).toBe(0);
    expect(idle.proposal).toMatchObject({ status: "nothing-to-propose", head_sha: null });
    expect(idle.proposal.would_open).toBeNull();
    expect(git(origin, ["branch", "--list", BRANCH]).trim()).toBe("");
    expect(git(clone.dir, ["branch", "--list", BRANCH]).trim()).toBe("");

    await remember(clone, ["a fact worth a proposal"]);
    const created = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_000_100));
    expect(created.proposal.status).toBe("created");
    const removed = git(origin, ["diff", "--name-status", "main", BRANCH]);
    expect(removed).not.toMatch(/^D/m);
    const merger = cloneOf(dirs, origin);
    git(merger.dir, ["merge", "-q", "--no-ff", "-m", "Merge engram PR", `origin/${BRANCH}`]);
    git(merger.dir, ["push", "-q", "origin", "main"]);
    const tree = git(origin, ["ls-tree", "-r", "--name-only", "main"]).split("\n");
    expect(tree).toEqual(expect.arrayContaining(["memory/st/.gitkeep", "memory/lt/.gitkeep"]));

    const after = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_000_200));
    expect(after.proposal.status).toBe("nothing-to-propose");
    expect(after.proposal.would_open).toBeNull();
    expect(sha(origin, BRANCH)).toBe(created.proposal.head_sha);
  });

  it("regenerates the branch on a moved main without reverting it or losing the proposal", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["proposed before main moved"]);
    const first = jsonOf<RunJson>(await proposeRun(clone));

    // Someone else merges a different proposal into main meanwhile.
    const other = cloneOf(dirs, origin);
    other.writeConfig(CONFIG);
    await remember(other, ["merged through another branch"], "w2");
    const elsewhere = jsonOf<RunJson>(
      await proposeRun(other, ["--branch", "engram/other"], 1_800_000_050),
    );
    expect(elsewhere.proposal.status).toBe("created");
    git(other.dir, ["fetch", "-q", "origin"]);
    git(other.dir, ["merge", "-q", "--ff-only", "origin/engram/other"]);
    git(other.dir, ["push", "-q", "origin", "main"]);
    const mainVersion = catalogVersionAt(origin, "main");

    await remember(clone, ["proposed after main moved"]);
    const next = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_000_200));
    expect(next.proposal.status).toBe("regenerated");
    expect(next.proposal.carried).toBeGreaterThan(0);
    expect(sha(origin, `${BRANCH}^`)).toBe(sha(origin, "main"));
    expect(sha(origin, BRANCH)).not.toBe(sha(origin, "main"));
    expect(sha(origin, BRANCH)).not.toBe(first.proposal.head_sha);
    expect(factsAt(origin, BRANCH).sort()).toEqual([
      "merged through another branch",
      "proposed after main moved",
      "proposed before main moved",
    ]);
    expect(catalogVersionAt(origin, BRANCH)).toBeGreaterThan(mainVersion);
  });

  it("after a merge, proposes only what is new, on top of main", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["merged soon"]);
    jsonOf<RunJson>(await proposeRun(clone));
    const merger = cloneOf(dirs, origin);
    git(merger.dir, ["merge", "-q", "--no-ff", "-m", "Merge engram PR", `origin/${BRANCH}`]);
    git(merger.dir, ["push", "-q", "origin", "main"]);

    const idle = jsonOf<RunJson>(await proposeRun(clone));
    expect(idle.proposal.status).toBe("nothing-to-propose");
    await remember(clone, ["after the merge"]);
    const next = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_000_300));
    expect(next.proposal.status).toBe("regenerated");
    expect(sha(origin, `${BRANCH}^`)).toBe(sha(origin, "main"));
    expect(factsAt(origin, BRANCH).sort()).toEqual(["after the merge", "merged soon"]);
  });

  it("keeps compacted events staged when the push fails, and pushes them on the next run", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["survives a failed push"]);
    git(clone.dir, ["remote", "set-url", "--push", "origin", `${origin}-missing`]);
    const failed = await proposeRun(clone);
    // A remote that fails is an external-service failure (exit 69), not a state of the repo.
    expect(failed.code, describeResult(failed)).toBe(EXIT.unavailable);
    expect(failed.stderr).toMatch(/git push origin engram\/memory/);
    git(clone.dir, ["remote", "set-url", "--push", "origin", origin]);
    const r = jsonOf<RunJson>(await proposeRun(clone));
    expect(r.proposal.status).toBe("created");
    expect(factsAt(origin, BRANCH)).toEqual(["survives a failed push"]);
  });

  it("two Directors at once make one branch holding both proposals, nothing lost or doubled", async () => {
    const { origin, clone } = await setup(dirs);
    const second = cloneOf(dirs, origin);
    second.writeConfig(CONFIG);
    const a = Array.from({ length: 5 }, (_, i) => `director A fact ${i}`);
    const b = Array.from({ length: 5 }, (_, i) => `director B fact ${i}`);
    await remember(clone, a, "wa");
    await remember(second, b, "wb");
    const runs = [clone, second].map(
      (repo) =>
        spawnBin(DIRECTOR_BIN, ["run", "--pr", "--force", "--json"], {
          cwd: repo.dir,
          env: { SOURCE_DATE_EPOCH: "1800000000" },
          timeoutMs: 60_000,
        }).done,
    );
    const results = (await Promise.all(runs)).map((r: BinResult) => jsonOf<RunJson>(r));
    const statuses = results.map((r) => r.proposal.status).sort();
    expect(statuses).toContain("created");
    expect(factsAt(origin, BRANCH).sort()).toEqual([...a, ...b].sort());
    const heads = git(origin, ["for-each-ref", "--format=%(refname)", "refs/heads/"]).split("\n");
    expect(heads.filter((h) => h.startsWith("refs/heads/engram/"))).toEqual([
      `refs/heads/${BRANCH}`,
    ]);
  });

  it("without a remote commits the branch locally and says what it would open", async () => {
    const repo = dirs.repo("engram-local-");
    repo.writeConfig(CONFIG);
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    await remember(repo, ["local only"]);
    const r = jsonOf<RunJson>(await proposeRun(repo));
    expect(r.proposal.pushed).toBe(false);
    expect(sha(repo.dir, BRANCH)).toBe(r.proposal.head_sha);
    expect(r.proposal.would_open?.body).toContain("local only");
    const text = await director(["run", "--pr"], { cwd: repo.dir });
    expect(text.stdout).toMatch(/proposal: unchanged/);
    expect(text.stdout).toMatch(/no remote: committed locally/);
  });

  it("killed at random points, loses no event and doubles none once a run completes", async () => {
    const { origin, clone } = await setup(dirs);
    const random = seededRandom(20261122);
    const texts: string[] = [];
    const kills: string[] = [];
    for (let round = 0; round < 8; round++) {
      const batch = [`crash round ${round} a`, `crash round ${round} b`];
      await remember(clone, batch);
      texts.push(...batch);
      const spawned = spawnBin(DIRECTOR_BIN, ["run", "--pr", "--force", "--json"], {
        cwd: clone.dir,
        env: { SOURCE_DATE_EPOCH: String(1_800_000_000 + round * 100) },
        timeoutMs: 60_000,
      });
      const delay = Math.floor(random() * 1200);
      const timer = setTimeout(() => spawned.child.kill("SIGKILL"), delay);
      const r = await spawned.done;
      clearTimeout(timer);
      kills.push(`${delay} ms: ${r.signal ?? `exit ${r.code}`}`);
      if (r.signal === null) expect(r.code, describeResult(r)).toBe(0);
    }
    const last = jsonOf<RunJson>(await proposeRun(clone, [], 1_800_001_000));
    expect(["created", "updated", "regenerated", "unchanged"], kills.join("; ")).toContain(
      last.proposal.status,
    );
    expect(factsAt(origin, BRANCH).sort(), kills.join("; ")).toEqual([...texts].sort());
    const verify = await director(["verify"], { cwd: clone.dir });
    expect(verify.code, describeResult(verify)).toBe(0);
  });

  it("refuses to work on a branch that is checked out", async () => {
    const { clone } = await setup(dirs);
    git(clone.dir, ["checkout", "-q", "-b", BRANCH]);
    const r = await proposeRun(clone);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/checked out/);
  });
});

describe("rebaseCatalog", () => {
  const entry = (id: string): CatalogEntry => ({
    engram_id: id,
    scope: "st",
    version: "20270101-000000Z",
    path: `memory/st/20270101-000000Z/engram_${id}.json`,
    hash: `sha256:${id.padEnd(64, "0").slice(0, 64)}`,
    topics: [],
    bytes: 100,
  });
  const at = (version: number, ids: string[]) =>
    sealCatalog(version, `2027-01-01T00:00:0${version}.000Z`, ids.map(entry));

  it("replays the proposal's additions and removals on a newer catalog", () => {
    const base = at(1, ["e_a", "e_b"]);
    const proposal = at(2, ["e_a", "e_p"]); // added e_p, removed e_b
    const onto = at(3, ["e_a", "e_b", "e_m"]); // main added e_m
    const r = rebaseCatalog({ base, proposal, onto });
    expect(r.catalog.entries.map((e) => e.engram_id).sort()).toEqual(["e_a", "e_m", "e_p"]);
    expect(r.catalog.catalog_version).toBe(4);
    expect(r.carried.map((e) => e.engram_id)).toEqual(["e_p"]);
  });

  it("keeps a proposal that nothing moved under as it is, and drops rejected engrams", () => {
    const base = at(1, ["e_a"]);
    const proposal = at(2, ["e_a", "e_p"]);
    expect(rebaseCatalog({ base, proposal, onto: base }).catalog).toBe(proposal);
    const r = rebaseCatalog({ base, proposal, onto: base, rejected: new Set(["e_p"]) });
    expect(r.changed).toBe(false);
    expect(r.catalog).toBe(base);
    expect(r.dropped.map((e) => e.engram_id)).toEqual(["e_p"]);
  });
});
