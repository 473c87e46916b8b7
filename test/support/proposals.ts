/** Repositories for `director run --pr`: a bare origin, Director clones, runs through the bins. */
import { expect } from "vitest";
import type { CatalogEntry } from "../../src/schema/engram.js";
import { describeResult, director, worker } from "./bins.js";
import { git, type TempDirs, type TempRepo } from "./repo.js";

export const CONFIG = "[memory]\nbuffer_keep_recent_events = 0\n";
export const BRANCH = "engram/memory";

export interface Proposal {
  status: string;
  head_sha: string | null;
  previous_head_sha: string | null;
  main_sha: string;
  pushed: boolean;
  attempts: number;
  carried: number;
  would_open: { title: string; body: string } | null;
}
export interface RunJson {
  catalog_version: number;
  compacted_events: number;
  proposal: Proposal;
}

/** A bare origin with an initialized engram repository on main, and a first clone. */
export async function setup(dirs: TempDirs): Promise<{ origin: string; clone: TempRepo }> {
  const origin = dirs.dir("engram-origin-");
  git(origin, ["init", "-q", "--bare", "-b", "main"]);
  const clone = dirs.repo("engram-director-");
  clone.writeConfig(CONFIG);
  expect((await director(["init"], { cwd: clone.dir })).code).toBe(0);
  clone.write("src/app.ts", "export const app = 1;\n");
  git(clone.dir, ["add", "-A"]);
  git(clone.dir, ["commit", "-q", "-m", "init"]);
  git(clone.dir, ["remote", "add", "origin", origin]);
  git(clone.dir, ["push", "-q", "origin", "main"]);
  return { origin, clone };
}

export function cloneOf(dirs: TempDirs, origin: string): TempRepo {
  const repo = dirs.repo("engram-clone-");
  git(repo.dir, ["remote", "add", "origin", origin]);
  git(repo.dir, ["fetch", "-q", "origin"]);
  git(repo.dir, ["checkout", "-q", "-B", "main", "origin/main"]);
  return repo;
}

export async function remember(repo: TempRepo, texts: string[], worker_ = "w1"): Promise<void> {
  for (const text of texts) {
    const r = await worker(
      ["emit", "--kind", "fact", "--text", text, "--topic", "pr", "--worker", worker_],
      {
        cwd: repo.dir,
      },
    );
    expect(r.code, describeResult(r)).toBe(0);
  }
}

export async function proposeRun(repo: TempRepo, extra: string[] = [], epoch = 1_800_000_000) {
  return director(["run", "--pr", "--force", "--json", ...extra], {
    cwd: repo.dir,
    env: { SOURCE_DATE_EPOCH: String(epoch) },
    timeoutMs: 60_000,
  });
}

/** Every fact of every engram on a ref of the origin. */
export function factsAt(origin: string, ref: string): string[] {
  const catalog = JSON.parse(git(origin, ["show", `${ref}:memory/catalog.json`])) as {
    entries: CatalogEntry[];
  };
  return catalog.entries.flatMap(
    (e) => (JSON.parse(git(origin, ["show", `${ref}:${e.path}`])) as { facts: string[] }).facts,
  );
}

export function catalogVersionAt(origin: string, ref: string): number {
  return (
    JSON.parse(git(origin, ["show", `${ref}:memory/catalog.json`])) as { catalog_version: number }
  ).catalog_version;
}

export function sha(dir: string, ref: string): string {
  return git(dir, ["rev-parse", ref]).trim();
}
