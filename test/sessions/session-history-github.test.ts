/**
 * `director history` after pull requests were merged, through the built bins against the
 * local GitHub-compatible server (its bare repository is the git remote): sessions
 * consolidated by `director run --pr`, the pull request merged on the server, then a fresh
 * clone and the Director's own repository after a fetch list the versions with the sessions
 * that made them and the commit of main that brought them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGitHub } from "../../src/github/client.js";
import {
  assertBuilt,
  type BinResult,
  director,
  jsonOf,
  succeeded,
  worker,
} from "../support/bins.js";
import { useFakeGitHub } from "../support/fake-github-hooks.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());
beforeAll(() => assertBuilt());
const TOKEN = "ghs_fakeTokenForTheLocalServer0000000000";
const github = useFakeGitHub(dirs, TOKEN, "engram-history-github-");

interface Entry {
  version: number;
  made_by: { kind: string; session_id?: string };
  counts: { episodes: number; facts: number };
  tag: string | null;
  snapshot: string | null;
  commit: string | null;
}

interface RunJson {
  sessions: { session_id: string; to_version: number }[];
  proposal: { status: string; pr: { number: number } | null };
}

const env = (n: number) => ({
  GITHUB_TOKEN: TOKEN,
  GITHUB_REPOSITORY: `${github.fake.owner}/${github.fake.repo}`,
  GITHUB_API_URL: github.apiUrl,
  SOURCE_DATE_EPOCH: String(1_800_000_000 + n * 100),
});

/** A command that must succeed: its output on failure. */
const ok = async (r: Promise<BinResult>) => succeeded(await r);

/** A session with `episodes` episodes and one fact, ended: returns its id. */
async function session(repo: TempRepo, tag: string, episodes: number): Promise<string> {
  const run = (args: string[]) => ok(worker(args, { cwd: repo.dir, env: env(0) }));
  const id = jsonOf<{ session_id: string }>(await run(["session", "start", "--json"])).session_id;
  const write = (args: string[]) => run(["session", "write", "--session", id, ...args]);
  for (let i = 0; i < episodes; i++) {
    await write([
      "--kind",
      "episode",
      "--text",
      `${tag} ${i}`,
      "--outcome",
      "success",
      "--confidence",
      "0.6",
    ]);
  }
  await write(["--kind", "fact", "--text", `${tag} fact`, "--confidence", "0.9"]);
  await run(["session", "end", id]);
  return id;
}

const history = async (cwd: string, args: string[] = []) =>
  jsonOf<{ versions: Entry[] }>(await ok(director(["history", "--json", ...args], { cwd })))
    .versions;

/** The version numbers `memory/versions.ndjson` lists at a commit (none without a log). */
function loggedAt(cwd: string, rev: string): number[] {
  const listed = git(cwd, ["ls-tree", "--name-only", rev, "memory/versions.ndjson"]);
  if (listed.trim() === "") return [];
  const text = git(cwd, ["show", `${rev}:memory/versions.ndjson`]);
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { version: number }).version);
}

describe("director history after a pull request was merged on GitHub", () => {
  let repo: TempRepo;
  let epoch = 0;
  const merged: [number, string][] = [];

  /**
   * Sessions, each consolidated by its own `director run --pr`, the pull request merged on
   * the server with `method`; then a fresh clone's history lists every version so far with
   * the session that made it and the first-parent commit of main that brought it.
   */
  async function round(method: "merge" | "squash" | "rebase", episodes: number[]) {
    const { fake } = github;
    let pr = 0;
    for (const n of episodes) {
      const id = await session(repo, `${method} ${merged.length}`, n);
      const run = jsonOf<RunJson>(
        await ok(director(["run", "--pr", "--json"], { cwd: repo.dir, env: env(++epoch) })),
      );
      expect(run.sessions.map((s) => s.session_id)).toEqual([id]);
      merged.push([run.sessions[0]?.to_version as number, id]);
      pr = run.proposal.pr?.number as number;
    }
    const gh = createGitHub({ token: TOKEN, apiUrl: github.apiUrl });
    await gh.octokit.rest.pulls.merge({
      owner: fake.owner,
      repo: fake.repo,
      pull_number: pr,
      merge_method: method,
    });
    const main = fake.branchSha("main") as string;
    const clone = dirs.dir("engram-history-clone-");
    git(clone, ["clone", "-q", fake.git.dir, "."]);
    const h = await history(clone);
    expect(h.map((v) => [v.version, v.made_by])).toEqual(
      [...merged].reverse().map(([v, id]) => [v, { kind: "session", session_id: id }]),
    );
    for (const v of h) {
      // The commit brought the version: its log has it, its first parent's does not.
      expect(v.commit, `v${v.version}`).not.toBeNull();
      const commit = v.commit as string;
      expect(loggedAt(clone, commit)).toContain(v.version);
      expect(loggedAt(clone, `${commit}^`)).not.toContain(v.version);
      git(clone, ["merge-base", "--is-ancestor", commit, main]);
    }
    // This round's versions came with this merge (a merge or squash commit: one for all).
    const mine = h.slice(0, episodes.length);
    if (method !== "rebase") expect(mine.map((v) => v.commit)).toEqual(mine.map(() => main));
    else expect(mine[0]?.commit).toBe(main);
    return { clone, h, main };
  }

  it("a merge commit: a fresh clone and the Director's repository after a fetch", async () => {
    const { fake } = github;
    repo = dirs.repo("engram-history-director-");
    git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
    await ok(director(["init"], { cwd: repo.dir }));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    git(repo.dir, ["push", "-q", "origin", "main"]);

    const { clone, h } = await round("merge", [3, 2]);
    expect(h.map((v) => v.counts.episodes)).toEqual([5, 3]);

    // The Director's repository after a fetch, its work tree on what it proposed.
    git(repo.dir, ["fetch", "-q", "origin"]);
    const fetched = await history(repo.dir, ["--main", "origin/main"]);
    expect(fetched.map((v) => [v.version, v.made_by, v.commit])).toEqual(
      h.map((v) => [v.version, v.made_by, v.commit]),
    );

    // Its next run pushes the snapshot tags the merge made reachable; the clone fetches them.
    await ok(director(["run", "--pr", "--json"], { cwd: repo.dir, env: env(++epoch) }));
    git(clone, ["fetch", "-q", "--tags", "origin"]);
    const tagged = await history(clone);
    expect(tagged.map((v) => v.tag)).toEqual(["engram/v2", "engram/v1"]);
    for (const v of tagged) {
      expect(v.snapshot).toBe(git(clone, ["rev-parse", `engram/v${v.version}`]).trim());
    }
  });

  it("a squash merge, then a rebase merge of two sessions", async () => {
    await round("squash", [1]);
    await round("rebase", [2, 1]);
  });
});
