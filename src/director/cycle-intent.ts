/**
 * The journal of one cycle: its plan made durable as an intent file before any memory file
 * changes, then carried out; a crash in between is finished from the file on restart.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { confinePath } from "../core/model/paths.js";
import type { VersionRecord } from "../core/versions/log.js";
import type { FileChanges } from "../core/versions/step.js";
import { StateError } from "../errors.js";
import { PathConfiner } from "../repo/confine.js";
import { applyFileChanges } from "../repo/memory-tree.js";
import { fsyncDirSync, STATE_DIR_MODE, tempName, withDirSyncsDeferred } from "../state/atomic.js";
import type { BufferMeta, EventBuffer } from "../state/buffer.js";
import { assertIntent } from "../state/state-file-check.js";
import { rememberSightings } from "./liveness-file.js";

/** What a crash between planning and finishing a cycle needs to finish it on restart. */
export interface CycleIntent {
  /**
   * Where the memory files go, relative to the state folder, when not the work tree: the
   * staging tree of `director run --pr`. Recovery after a crash applies the plan there too.
   */
  tree?: string;
  through_seq: number;
  writes: { path: string; text: string }[];
  deletes: string[];
  meta: Partial<BufferMeta>;
  /**
   * Sessions' consolidations: the versions they make, oldest first, each with the files it
   * changes (the intent's writes and deletes are their sum). Finishing the intent hands them
   * to `onVersions` (version snapshots) before it writes the files. Written by earlier
   * releases only: a consolidation now writes its snapshots before its intent.
   */
  versions?: { record: VersionRecord; files: FileChanges }[];
  /**
   * The room of compactions for room (`room-ledger.ts`), once the files are written: `null`
   * removes it (a run reported it), a text is its ledger after a settle.
   */
  room?: { ledger: string | null };
}

/**
 * The intent file is NDJSON: a header line, then one line per file to write, so a large
 * cycle is written piece by piece instead of as one huge string. It is complete only once
 * renamed into place (temp, fsync, rename).
 */
export function writeIntent(path: string, intent: CycleIntent): void {
  const temp = tempName(path);
  const fd = openSync(temp, "w", 0o600);
  try {
    const { writes, ...header } = intent;
    writeSync(fd, `${JSON.stringify(header)}\n`);
    for (const write of writes) writeSync(fd, `${JSON.stringify(write)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDirSync(dirname(path));
}

export function readIntent(path: string): CycleIntent {
  const [header, ...writes] = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0);
  let parsed: { header: unknown; writes: unknown[] };
  try {
    parsed = { header: JSON.parse(header ?? ""), writes: writes.map((line) => JSON.parse(line)) };
  } catch (error) {
    throw new StateError(
      `${path}: not a cycle intent (${(error as Error).message}); if no Director wrote it, remove it`,
    );
  }
  // Its shape first (a hostile file is refused, never half read), then its paths.
  assertIntent(parsed.header, parsed.writes, path);
  const intent: CycleIntent = {
    ...(parsed.header as Omit<CycleIntent, "writes">),
    writes: parsed.writes as CycleIntent["writes"],
  };
  // The state folder may have been restored from a branch: its intent is content too.
  confineIntent(intent, path);
  return intent;
}

/**
 * Throws unless every path of the intent is where its kind belongs (`confinePath`): its
 * writes, deletes and versions' files in the memory tree, its tree a staging folder. The
 * file system's half (no link on the way) is checked when the intent is carried out.
 */
export function confineIntent(intent: CycleIntent, file: string): void {
  const named: [string, unknown][] = [];
  const changes = (prefix: string, c: Partial<FileChanges> | undefined): void => {
    if (!Array.isArray(c?.writes) || !Array.isArray(c?.deletes)) {
      named.push([`${prefix}writes`, undefined]);
      return;
    }
    for (const [i, w] of c.writes.entries()) named.push([`${prefix}writes[${i}].path`, w?.path]);
    for (const [i, d] of c.deletes.entries()) named.push([`${prefix}deletes[${i}]`, d]);
  };
  changes("", intent);
  for (const [k, v] of (intent.versions ?? []).entries())
    changes(`versions[${k}].files.`, v?.files);
  for (const [field, path] of named) {
    const problem = confinePath(path, "memory");
    if (problem !== undefined) refuseIntent(file, field, path, problem);
  }
  if (intent.tree !== undefined) {
    const problem = confinePath(intent.tree, "staging");
    if (problem !== undefined) refuseIntent(file, "tree", intent.tree, problem);
  }
}

function refuseIntent(file: string, field: string, path: unknown, problem: string): never {
  throw new StateError(
    `${file}: ${field} ${JSON.stringify(path)} ${problem}: refused, nothing was written; if no Director wrote this intent, remove it`,
  );
}

/**
 * Finishes a cycle interrupted by a crash: the plan is re-applied whole, then the buffer
 * trimmed. An intent its checks refuse (a restored state folder's) is set aside instead,
 * never replayed (`setAsideIntent`).
 */
export async function recoverIntent(ctx: RepoContext, buffer: EventBuffer): Promise<boolean> {
  if (!existsSync(ctx.paths.intent)) return false;
  let intent: CycleIntent;
  try {
    intent = readIntent(ctx.paths.intent);
    await checkRecoveredWrites(ctx, intent.writes, ctx.paths.intent);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    setAsideIntent(ctx, error);
    return false;
  }
  await finishCycle(ctx, buffer, intent);
  return true;
}

/**
 * Moves a refused intent to `buffer/set-aside/` and says why on stderr (the file, the field):
 * nothing of it was written, and the events it names are still in the buffer (an intent
 * trims the buffer only once carried out), so the next cycle compacts them itself.
 */
function setAsideIntent(ctx: RepoContext, refusal: StateError): void {
  const folder = join(dirname(ctx.paths.intent), "set-aside");
  mkdirSync(folder, { recursive: true, mode: STATE_DIR_MODE });
  let n = 1;
  while (existsSync(join(folder, `cycle-intent.${n}.json`))) n++;
  const target = join(folder, `cycle-intent.${n}.json`);
  renameSync(ctx.paths.intent, target);
  fsyncDirSync(dirname(ctx.paths.intent));
  // The refusal's advice (remove it) is what this does.
  const why = refusal.message.replace(
    /(: refused, nothing was written)?(; if no Director wrote|; the state folder was edited or damaged:).*$/s,
    "",
  );
  process.stderr.write(
    `engram: ${why}: refused, set aside as ${relative(ctx.repoDir, target)}, not replayed (nothing of it was written; the events it names stay in the buffer)\n`,
  );
}

/**
 * An intent found on disk may come from a state folder restored from a branch: before it is
 * replayed, its files are checked as their readers read them (`checkMemoryWrites`) and as
 * ingest reads a worker's line (the redactor finds nothing in them: a cycle writes only
 * redacted text). Either failure refuses the whole intent, nothing written.
 */
async function checkRecoveredWrites(
  ctx: RepoContext,
  writes: CycleIntent["writes"],
  file: string,
): Promise<void> {
  // Loaded only for an intent left on disk: the checks need zod and the secret scanner.
  const [{ formatFinding }, { checkMemoryWrites }, { redactorFor }] = await Promise.all([
    import("../core/checks/findings.js"),
    import("../core/checks/write-check.js"),
    import("../core/ingest/redact.js"),
  ]);
  const findings = checkMemoryWrites(writes, ctx.config);
  const first = findings[0];
  if (first !== undefined) {
    throw new StateError(
      `${file}: ${formatFinding(first)}${findings.length > 1 ? ` (and ${findings.length - 1} more)` : ""}: refused, nothing was written; if no Director wrote this intent, remove it`,
    );
  }
  const redactor = redactorFor(ctx.config);
  for (const write of writes) {
    const found = redactor.redact(write.text);
    if (found.count > 0) {
      throw new StateError(
        `${file}: writes[${JSON.stringify(write.path)}] holds ${found.count} secret(s) the redactor finds, which no Director writes: refused, nothing was written; if no Director wrote this intent, remove it`,
      );
    }
  }
}

export async function finishCycle(
  ctx: RepoContext,
  buffer: EventBuffer,
  intent: CycleIntent,
): Promise<void> {
  const target =
    intent.tree !== undefined
      ? new PathConfiner(ctx.paths.root).resolve(
          intent.tree,
          "staging",
          `${ctx.paths.intent}: tree`,
        )
      : ctx.repoDir;
  // Sessions' versions get their snapshots before the tree changes: the first one may need
  // the tree as it was before the step, and the intent makes a crash here harmless.
  if (intent.versions !== undefined && intent.versions.length > 0) {
    const { onVersions } = await import("./version-hook.js");
    await onVersions(ctx, intent.versions, target);
  }
  await applyFileChanges(target, intent.writes, intent.deletes, ctx.paths.intent);
  const room = intent.room === undefined ? undefined : await import("./room-ledger.js");
  // The intent replays every step below after a crash: their folders are synced once, at the
  // end, before the intent goes (a compaction for room runs this dozens of times an ingest).
  withDirSyncsDeferred(() => {
    if (room !== undefined && intent.room !== undefined) {
      room.updateRoom(ctx.paths, intent.room.ledger);
    }
    // A session step leaves the buffer alone: rewriting its journal for nothing costs a lot.
    if (intent.through_seq > 0 || Object.keys(intent.meta).length > 0) {
      // The workers' sightings outlive their heartbeats, so `director status` still knows them.
      rememberSightings(
        ctx.paths,
        buffer.events.filter((s) => s.event.seq <= intent.through_seq).map((s) => s.event),
      );
      buffer.dropThrough(intent.through_seq, intent.meta, ctx.config.memory.dedup_window_events);
    }
  });
  unlinkSync(ctx.paths.intent);
  fsyncDirSync(join(ctx.paths.intent, ".."));
}

/** Makes the plan durable before any memory file changes, then carries it out. */
export async function commitCycle(
  ctx: RepoContext,
  buffer: EventBuffer,
  intent: CycleIntent,
): Promise<void> {
  // A cycle on the staging tree says so, so that a crash is finished there, not in the work tree.
  const inState = relative(ctx.paths.root, ctx.repoDir);
  const staged =
    inState !== "" && !inState.startsWith("..") && !isAbsolute(inState)
      ? { ...intent, tree: inState.split(sep).join("/") }
      : intent;
  // Every file is checked as its readers will read it before the intent makes it durable
  // (loaded here: the check needs the zod schemas, which an idle run never loads).
  (await import("./write-check.js")).checkWrites(ctx, intent.writes);
  // A plan that names a path out of place is refused before it is made durable.
  confineIntent(staged, ctx.paths.intent);
  writeIntent(ctx.paths.intent, staged);
  await finishCycle(ctx, buffer, staged);
}
