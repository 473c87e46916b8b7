/**
 * Version snapshots: the snapshot commit of a version of 10,000 engrams written into a fresh
 * repository (the first version a log records), then the next version's, made as a cycle
 * makes it (`snapshotNext`: the previous snapshot with the cycle's few changes grafted on).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { sealCatalog, serializeCatalog } from "../src/core/model/engram.js";
import { VERSION_LOG_PATH } from "../src/core/versions/log.js";
import { countsOf, logWith, recordFor } from "../src/core/versions/record.js";
import { snapshotNext } from "../src/director/versions.js";
import { openRepo } from "../src/git/history.js";
import { writeSnapshot } from "../src/repo/version-snapshots.js";
import type { CatalogEntry } from "../src/schema/engram.js";
import { log, removeDir, round, tempDir } from "./util.js";

export const SNAPSHOT_NEXT_TARGET_MS = 300;

export interface VersionSnapshotResult {
  engrams: number;
  first_ms: number;
  next_ms: number;
  target: string;
  pass: boolean;
}

const T = "2026-01-01T00:00:00.000Z";

function entry(i: number): CatalogEntry {
  const hex = i.toString(16).padStart(32, "0");
  const batch = `20260101-${String(Math.floor(i / 100)).padStart(6, "0")}Z`;
  return {
    engram_id: `e_${hex}`,
    scope: "st",
    version: batch,
    path: `memory/st/${batch}/engram_e_${hex}.json`,
    hash: `sha256:${hex}${hex}`,
    topics: ["bench"],
    bytes: 400,
  } as CatalogEntry;
}

export async function runVersionSnapshotScenario(engrams = 10_000): Promise<VersionSnapshotResult> {
  const dir = tempDir("snapshots");
  try {
    execFileSync("git", ["init", "-q", dir]);
    const repo = await openRepo(dir);
    const entries = Array.from({ length: engrams }, (_, i) => entry(i));
    const catalog = sealCatalog(1, T, entries);
    const v1 = recordFor(catalog, { kind: "cycle" }, countsOf(catalog, [], undefined));
    const files = new Map<string, string>([
      ["memory/catalog.json", serializeCatalog(catalog)],
      [VERSION_LOG_PATH, logWith(undefined, v1)],
    ]);
    for (const e of entries)
      files.set(
        e.path,
        `${JSON.stringify({ id: e.engram_id, facts: [`fact ${e.path} `.repeat(8)] })}\n`,
      );
    for (const [path, text] of files) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const t0 = performance.now();
    await writeSnapshot(repo, v1, files);
    const first = round(performance.now() - t0, 1);

    const added = entry(engrams);
    const next = sealCatalog(2, T, [...entries, added]);
    const v2 = recordFor(next, { kind: "cycle" }, countsOf(next, [], v1.counts));
    const writes = [
      { path: added.path, text: "{}\n" },
      { path: "memory/catalog.json", text: serializeCatalog(next) },
      { path: VERSION_LOG_PATH, text: logWith(files.get(VERSION_LOG_PATH), v2) },
    ];
    const t1 = performance.now();
    const snapshot = await snapshotNext(dir, dir, v2, {
      writes,
      deletes: [entries[0]?.path as string],
    });
    const nextMs = round(performance.now() - t1, 1);
    if (snapshot === null) throw new Error("no snapshot written");
    log(`version snapshot: ${engrams} engrams, first ${first} ms, next ${nextMs} ms`);
    return {
      engrams,
      first_ms: first,
      next_ms: nextMs,
      target: `next version's snapshot < ${SNAPSHOT_NEXT_TARGET_MS} ms`,
      pass: nextMs < SNAPSHOT_NEXT_TARGET_MS,
    };
  } finally {
    removeDir(dir);
  }
}
