/**
 * Version snapshots: the snapshot commit of a version of 10,000 engrams written into a fresh
 * repository (the first version a log records), then the next version's, which differs by a
 * few files (what a cycle adds): only the new objects are written.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { VersionRecord } from "../src/core/versions/log.js";
import { openRepo } from "../src/git/history.js";
import { writeSnapshot } from "../src/repo/version-snapshots.js";
import { log, removeDir, round, tempDir } from "./util.js";

export const SNAPSHOT_NEXT_TARGET_MS = 300;

export interface VersionSnapshotResult {
  engrams: number;
  first_ms: number;
  next_ms: number;
  target: string;
  pass: boolean;
}

function record(version: number): VersionRecord {
  return {
    version,
    catalog_hash: `sha256:${String(version).padStart(64, "0")}`,
    created_at: "2026-01-01T00:00:00.000Z",
    made_by: { kind: "cycle" },
    counts: { engrams: 0, episodes: 0, facts: 0, state: 0, core: 0 },
  };
}

export async function runVersionSnapshotScenario(engrams = 10_000): Promise<VersionSnapshotResult> {
  const dir = tempDir("snapshots");
  try {
    execFileSync("git", ["init", "-q", dir]);
    const repo = await openRepo(dir);
    const files = new Map<string, string>();
    for (let i = 0; i < engrams; i++) {
      const batch = `20260101-${String(Math.floor(i / 100)).padStart(6, "0")}Z`;
      const id = `e_${i.toString(16).padStart(32, "0")}`;
      files.set(
        join("memory/st", batch, `engram_${id}.json`),
        JSON.stringify({ engram_id: id, facts: [`fact ${i} `.repeat(40)] }, null, 2),
      );
    }
    files.set("memory/catalog.json", "{}\n");
    const t0 = performance.now();
    await writeSnapshot(repo, record(1), files);
    const first = round(performance.now() - t0, 1);
    files.set("memory/catalog.json", '{"next":true}\n');
    files.set("memory/st/20260102-000000Z/engram_e_new.json", "{}\n");
    files.set("memory/versions.ndjson", "");
    const t1 = performance.now();
    await writeSnapshot(repo, record(2), files);
    const next = round(performance.now() - t1, 1);
    log(`version snapshot: ${engrams} engrams, first ${first} ms, next ${next} ms`);
    return {
      engrams,
      first_ms: first,
      next_ms: next,
      target: `next version's snapshot < ${SNAPSHOT_NEXT_TARGET_MS} ms`,
      pass: next < SNAPSHOT_NEXT_TARGET_MS,
    };
  } finally {
    removeDir(dir);
  }
}
