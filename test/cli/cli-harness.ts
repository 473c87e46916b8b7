import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import {
  assertBuilt,
  type BinOptions,
  type BinResult,
  describeResult,
  director,
  type Env,
  jsonOf,
  worker,
} from "../support/bins.js";
import { type Envelope, ndjson } from "../support/envelopes.js";
import { listFiles } from "../support/memory.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

export const dirs = new TempDirs();
/** A repository after `git init` and `director init`, copied for each test that needs one. */
let template: TempRepo;

export type Opts = Omit<BinOptions, "cwd"> & { env?: Env };
export const dir = (repo: TempRepo, args: string[], opts: Opts = {}) =>
  director(args, { cwd: repo.dir, ...opts });
export const wrk = (repo: TempRepo, args: string[], opts: Opts = {}) =>
  worker(args, { cwd: repo.dir, ...opts });

export function expectExit(r: BinResult, code: number): void {
  expect(r.code, describeResult(r)).toBe(code);
}

/** A git repository with `director init` run and, if given, `config/dev.toml` replaced. */
export async function initRepo(config?: string): Promise<TempRepo> {
  const repo = dirs.copy(template);
  if (config !== undefined) repo.writeConfig(config);
  return repo;
}

/** Writes NDJSON to a file outside the repository (so a secret in it is not "in the repo"). */
export function inputFile(name: string, lines: readonly (Envelope | string)[]): string {
  const path = join(dirs.dir("engram-input-"), name);
  writeFileSync(path, ndjson(lines));
  return path;
}

export interface IngestJson {
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
}

export interface RunJson {
  catalog_version: number;
  catalog_hash: string;
  changed: boolean;
  engrams_written: number;
  engrams_evicted: number;
  engrams_promoted: number;
  compacted_events: number;
  compaction: string;
  written: string[];
  evicted: string[];
  buffer: { events: number; bytes: number };
  tiers: { st: { files: number; bytes: number }; lt: { files: number; bytes: number } };
  drained: { files: number; accepted: number };
}

export async function ingest(repo: TempRepo, file: string, env?: Env): Promise<IngestJson> {
  return jsonOf<IngestJson>(await dir(repo, ["ingest", file, "--json"], { env }));
}

export async function runCycle(repo: TempRepo, args: string[] = [], env?: Env): Promise<RunJson> {
  return jsonOf<RunJson>(await dir(repo, ["run", "--json", ...args], { env }));
}

export async function expectVerified(repo: TempRepo): Promise<void> {
  const r = await dir(repo, ["verify"]);
  expectExit(r, 0);
}

/** Files under memory/<scope> except .gitkeep: the engrams (and anything stray). */
export function engramFiles(repo: TempRepo, scope: "st" | "lt"): string[] {
  return listFiles(repo.path("memory", scope), repo.dir).filter((p) => !p.endsWith("/.gitkeep"));
}

export function spoolFiles(repo: TempRepo): string[] {
  try {
    return readdirSync(repo.path(".engram", "spool")).filter((n) => n.endsWith(".ndjson"));
  } catch {
    return [];
  }
}

export const EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

/** Registers the shared set-up and clean-up in the calling test file. */
export function useCliHarness(): void {
  beforeAll(async () => {
    assertBuilt();
    template = dirs.repo("engram-template-");
    const r = await director(["init", "--json"], { cwd: template.dir });
    if (r.code !== 0) throw new Error(`director init failed: ${describeResult(r)}`);
  });
  afterAll(() => dirs.cleanup());
}
