/**
 * The Director side of the git-ref transport: fetch every writer's event ref, ingest what is
 * new through the one Ingestor, and only after the journal fsync prune the refs made durable,
 * each with a lease, so a writer that pushed more meanwhile keeps its new events.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { quarantineLimits } from "../core/ingest/quarantine-plan.js";
import { StateError } from "../errors.js";
import { type GitRepo, openRepo } from "../git/history.js";
import type { SourceDrain } from "../ingest/ingest.js";
import { type Ingestor, ingestorFor } from "../ingest/ingest.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { EventBuffer } from "../state/buffer.js";
import { appendQuarantine } from "../state/quarantine.js";
import {
  deleteLocalRef,
  EVENTS_PREFIX,
  type EventFile,
  listLocalRefs,
  mirrorRefs,
  pushRefs,
  RemoteUnreachable,
  readBlob,
  readEventFiles,
} from "./git-ref-store.js";
import type { BusUrl } from "./url.js";

export interface GitRefDrain extends SourceDrain {
  /** Event refs found on the remote. */
  refs: number;
  /** Event files read (new since the last drain). */
  files: number;
  /** Refs left on the remote because their writer pushed again meanwhile (next drain). */
  kept: number;
}

/** An event file larger than this is quarantined unread (an envelope is at most 64 KiB). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Refs deleted per push: keeps the command line short. */
const PRUNE_BATCH = 200;

/** What this Director has ingested from a remote: per remote ref, the commit read through. */
interface DrainState {
  remote: string;
  ingested: Record<string, string>;
}

/**
 * Drains `git:REMOTE`: mirrors `refs/engram/events/*` into a private local namespace, ingests
 * each ref's new event files in name order, fsyncs, records what was ingested (atomically,
 * in the state folder), then deletes each ingested remote ref with a lease on the commit read.
 * A crash anywhere re-reads at most what was not yet pruned; the event ids deduplicate it.
 */
export async function drainGitRefs(
  ctx: RepoContext,
  buffer: EventBuffer,
  url: Extract<BusUrl, { kind: "git" }>,
): Promise<GitRefDrain> {
  const source = `git:${url.remote}`;
  const key = createHash("sha256").update(url.remote).digest("hex").slice(0, 16);
  const mirror = `refs/engram/inbox/${key}/`;
  const statePath = join(ctx.paths.root, "bus", `git-${key}.json`);
  const repo = await openRepo(ctx.repoDir);
  try {
    await mirrorRefs(ctx.repoDir, url.remote, EVENTS_PREFIX, mirror);
  } catch (error) {
    if (error instanceof RemoteUnreachable) {
      throw new RemoteUnreachable(`${source}: cannot fetch ${EVENTS_PREFIX}*: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
  const tips = new Map<string, string>();
  for (const [local, sha] of await listLocalRefs(repo, mirror)) {
    tips.set(`${EVENTS_PREFIX}${local.slice(mirror.length)}`, sha);
  }

  const state = readState(statePath, url.remote);
  // Refs gone from the remote were pruned (by us before a crash, or by someone else).
  for (const ref of Object.keys(state.ingested)) if (!tips.has(ref)) delete state.ingested[ref];

  const ingestor = ingestorFor(ctx, buffer);
  let files = 0;
  for (const [ref, tip] of tips) {
    const done = state.ingested[ref];
    if (done === tip) continue;
    files += await ingestRef(ctx, ingestor, repo, `${source} ${ref}`, tip, done);
  }
  await ingestor.commit();
  // Durable in the journal; now record it, so a crash before the prune re-reads nothing.
  for (const [ref, tip] of tips) state.ingested[ref] = tip;
  writeState(statePath, state);

  let pruned = 0;
  const refs = [...tips];
  for (let i = 0; i < refs.length; i += PRUNE_BATCH) {
    const batch = refs.slice(i, i + PRUNE_BATCH);
    const outcome = await pushRefs(
      ctx.repoDir,
      url.remote,
      batch.map(([ref, tip]) => ({ ref, to: null, expect: tip })),
    );
    if (!outcome.reached) break; // kept for the next drain, which re-reads nothing new
    for (const ref of outcome.updated) {
      delete state.ingested[ref];
      await deleteLocalRef(repo, `${mirror}${ref.slice(EVENTS_PREFIX.length)}`);
      pruned++;
    }
  }
  if (pruned > 0) writeState(statePath, state);
  return {
    source,
    ...ingestor.counts,
    acknowledged: pruned,
    refs: tips.size,
    files,
    kept: tips.size - pruned,
  };
}

/** Feeds the event files of `tip` that `done` (what was ingested before) did not hold. */
async function ingestRef(
  ctx: RepoContext,
  ingestor: Ingestor,
  repo: GitRepo,
  label: string,
  tip: string,
  done: string | undefined,
): Promise<number> {
  const seen = new Set<string>();
  if (done !== undefined) {
    try {
      for (const f of await readEventFiles(repo, done)) seen.add(`${f.name}\0${f.oid}`);
    } catch {
      // the old commit is gone: read everything, the event ids deduplicate
    }
  }
  const fresh = (await readEventFiles(repo, tip))
    .filter((f) => !seen.has(`${f.name}\0${f.oid}`))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const file of fresh) {
    const source = `${label}:events/${file.name}`;
    const text = await readEventText(repo, file);
    if (typeof text !== "string") {
      await ingestor.commit();
      appendQuarantine(
        ctx.paths.quarantine,
        [{ received_at: receiptTime(), source, line: 0, excerpt: "", ...text }],
        undefined,
        quarantineLimits(ctx.config.quarantine),
      );
      ingestor.counts.quarantined++;
      continue;
    }
    let line = 0;
    for (const t of text.split("\n")) ingestor.push({ text: t, source, line: ++line });
  }
  return fresh.length;
}

async function readEventText(
  repo: GitRepo,
  file: EventFile,
): Promise<string | { reason: string; detail: string; bytes: number }> {
  if (file.type !== "blob") {
    return { reason: "not-a-file", detail: `a ${file.type} in an event ref, not read`, bytes: 0 };
  }
  const blob = await readBlob(repo, file.oid);
  if (blob.byteLength > MAX_FILE_BYTES) {
    return {
      reason: "oversized",
      detail: `event file of ${blob.byteLength} bytes, over ${MAX_FILE_BYTES}; not read`,
      bytes: blob.byteLength,
    };
  }
  return Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("utf8");
}

function readState(path: string, remote: string): DrainState {
  if (!existsSync(path)) return { remote, ingested: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<DrainState>;
    if (typeof parsed.ingested !== "object" || parsed.ingested === null)
      throw new Error("no ingested map");
    return { remote, ingested: { ...parsed.ingested } };
  } catch (error) {
    throw new StateError(
      `${path}: unreadable git-ref drain state (${(error as Error).message}); remove it to re-read every ref (event ids deduplicate)`,
    );
  }
}

function writeState(path: string, state: DrainState): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomicSync(path, `${JSON.stringify(state, null, 2)}\n`);
}
