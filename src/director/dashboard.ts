import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import {
  buildDashboardModel,
  type DashboardModel,
  type EngramView,
  engramView,
  type SyncTargetInput,
} from "../core/dashboard/model.js";
import { dashboardFiles } from "../core/dashboard/page.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import { parseVersionLog, VERSION_LOG_PATH, type VersionRecord } from "../core/versions/log.js";
import { fileSystemError } from "../errors.js";
import { PathConfiner, readConfinedText } from "../repo/confine.js";
import { readKnowledge } from "../repo/knowledge.js";
import { readCatalog } from "../repo/memory-tree.js";
import { catalogOfSnapshot, gitRepoOf, snapshotCommit } from "../repo/version-snapshots.js";
import type { CatalogEntry } from "../schema/engram.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { QueueStore } from "../sync/queue-store.js";
import { syncDir } from "../sync/state-paths.js";
import { TARGETS } from "../sync/target-names.js";
import { readStatus } from "./status.js";

/** Versions whose size is read back from their snapshot for the bytes chart: the latest. */
const SIZED_VERSIONS = 30;

/**
 * Everything the dashboard shows, read from the repository and the state folder without
 * writing either: status, catalog, engrams, MEMORY.md, the version log, the sessions'
 * decisions and the sync queues.
 */
export async function readDashboardModel(ctx: RepoContext): Promise<DashboardModel> {
  const status = await readStatus(ctx);
  const catalog = await readCatalog(ctx.repoDir);
  const [engrams, focusText, logText, knowledge] = await Promise.all([
    readEngramViews(ctx.repoDir, catalog.entries),
    readConfinedText(ctx.repoDir, FOCUS_PATH),
    readConfinedText(ctx.repoDir, VERSION_LOG_PATH),
    readKnowledge(ctx.repoDir, catalog),
  ]);
  const versions = logText === undefined ? [] : parseVersionLog(logText);
  return buildDashboardModel({
    generatedAt: receiptTime(),
    name: basename(ctx.repoDir),
    status,
    catalog,
    engrams,
    focusText,
    versions,
    versionBytes: await versionSizes(ctx.repoDir, versions),
    knowledgeDecisions: knowledge
      .filter((k) => k.kind === "decision")
      .map((k) => ({
        id: k.id,
        text: k.text,
        rationale: k.rationale,
        version: k.version,
        written_at: k.written_at,
      })),
    sync: readSyncTargets(ctx),
  });
}

/**
 * What the page shows of each engram, read as plain JSON: the page displays, it does not
 * judge (`director verify` checks schemas and hashes, and costs seconds on 10,000 engrams).
 * Paths are confined to the repository as every reader's are; a file that cannot be read or
 * parsed is left out, and the page says so on its row.
 */
async function readEngramViews(
  repoDir: string,
  entries: readonly CatalogEntry[],
): Promise<Map<string, EngramView>> {
  const confiner = new PathConfiner(repoDir);
  const views = new Map<string, EngramView>();
  for (const entry of entries) {
    try {
      const full = confiner.resolve(entry.path, "engram", entry.path);
      views.set(entry.engram_id, engramView(JSON.parse(readFileSync(full, "utf8"))));
    } catch {
      // Unreadable: shown as such; `director verify` names the reason.
    }
  }
  return views;
}

/**
 * Bytes of memory (engrams and documents, as the catalog counts them) at the latest logged
 * versions, from their snapshot tags; a version without a readable snapshot is left out.
 */
async function versionSizes(
  repoDir: string,
  versions: readonly VersionRecord[],
): Promise<Map<number, number>> {
  const sizes = new Map<number, number>();
  if (versions.length === 0) return sizes;
  const repo = await gitRepoOf(repoDir);
  if (repo === null) return sizes;
  for (const record of versions.slice(-SIZED_VERSIONS)) {
    try {
      const commit = await snapshotCommit(repo, record.version);
      if (commit === undefined) continue;
      const catalog = await catalogOfSnapshot(repo, commit);
      if (catalog.hash !== record.catalog_hash) continue;
      let bytes = 0;
      for (const e of catalog.entries) bytes += e.bytes;
      for (const d of catalog.documents ?? []) bytes += d.bytes;
      sizes.set(record.version, bytes);
    } catch {
      // A snapshot that cannot be read only leaves a gap in the chart.
    }
  }
  return sizes;
}

/** The sync targets that have a queue in the state folder (they have run here). */
function readSyncTargets(ctx: RepoContext): SyncTargetInput[] {
  const dir = syncDir(ctx);
  const out: SyncTargetInput[] = [];
  for (const target of TARGETS) {
    if (
      !existsSync(join(dir, target, "queue.json")) &&
      !existsSync(join(dir, target, "queue.journal.ndjson"))
    ) {
      continue;
    }
    const queue = new QueueStore(dir, target).peek();
    out.push({
      target,
      state: queue.status?.state ?? null,
      records: Object.values(queue.records).map((r) => ({
        state: r.state,
        last_error: r.last_error,
        last_attempt_at: r.last_attempt_at,
      })),
      last_check_at: queue.status?.last_check_at ?? null,
      status_reason: queue.status?.reason ?? null,
    });
  }
  return out;
}

export interface DashboardWritten {
  dir: string;
  files: string[];
  bytes: number;
  engrams: number;
  decisions: number;
  workers: number;
  catalog_version: number;
}

/** Writes index.html, app.js and style.css into `outDir`, each atomically. */
export async function writeDashboard(ctx: RepoContext, outDir: string): Promise<DashboardWritten> {
  const model = await readDashboardModel(ctx);
  const files = dashboardFiles(model);
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (error) {
    throw fileSystemError(error, outDir, "write") ?? error;
  }
  let bytes = 0;
  for (const [name, text] of files) {
    const path = join(outDir, name);
    try {
      writeFileAtomicSync(path, text, 0o644);
    } catch (error) {
      throw fileSystemError(error, path, "write") ?? error;
    }
    bytes += Buffer.byteLength(text, "utf8");
  }
  return {
    dir: outDir,
    files: [...files.keys()],
    bytes,
    engrams: model.engrams.length,
    decisions: model.decisions.length,
    workers: model.workers.length,
    catalog_version: model.catalog.version,
  };
}
