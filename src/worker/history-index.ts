import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { hasContent } from "../core/history/content.js";
import { type HistoryCommit, noteOfCommit, type RecallNote } from "../core/recall/notes.js";
import {
  buildRecallIndex,
  deserializeRecallIndex,
  type RecallIndex,
  type SerializedRecallIndex,
  serializeRecallIndex,
} from "../core/recall/recall.js";
import { gitText } from "../git/git-child.js";
import { readHead } from "../git/refs.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { counted } from "./note-tokens.js";

/**
 * The repository's commit history as recall's `history` scope: read through git (subjects
 * and bodies, never copied into memory files), indexed once per HEAD and cached in the
 * state folder; when HEAD moves forward only the new commits are read.
 */

const CACHE = "recall-history.json";
/** The newest commits searched: a bound on time and on the cache, whatever the history. */
export const HISTORY_MAX_COMMITS = 20_000;
/** A body longer than this is cut: the reasons come first in a commit message. */
const BODY_MAX_CHARS = 2_000;
// Record and field separators: characters no commit message is expected to hold.
const RS = "\x1e";
const FS = "\x1f";
const FORMAT = `${RS}%H${FS}%an${FS}%cI${FS}%s${FS}%b`;
/** The Director's own memory commits say nothing a reader asks about. */
const DIRECTOR_COMMIT = /^engram: memory catalog v\d+/;

/** The last index this process built or read: a long-lived server (MCP) asks on every call. */
let memo: { cachePath: string; head: string; index: RecallIndex } | undefined;

interface CachedHistory {
  format: "engram-recall-history/v1";
  head: string;
  index: SerializedRecallIndex;
}

/** The history index of HEAD; undefined when there is no history (no commit, no git). */
export async function historyIndexFor(ctx: RepoContext): Promise<RecallIndex | undefined> {
  const read = readHead(ctx.repoDir);
  // A new repository has no history: no git to start for that.
  if (read !== undefined && "unborn" in read) return undefined;
  const head =
    read?.commit ?? (await gitText(ctx.repoDir, ["rev-parse", "--verify", "-q", "HEAD"]))?.trim();
  if (!head) return undefined;
  const cachePath = join(ctx.paths.root, CACHE);
  if (memo?.cachePath === cachePath && memo.head === head) return memo.index;
  const cached = readCache(cachePath);
  if (cached?.head === head) {
    const index = deserializeRecallIndex(cached.index);
    if (index) {
      memo = { cachePath, head, index };
      return index;
    }
  }
  let notes: RecallNote[];
  const old =
    cached && (await isAncestor(ctx.repoDir, cached.head, head))
      ? deserializeRecallIndex(cached.index)
      : undefined;
  if (cached && old) {
    const fresh = commitNotes(await readCommits(ctx.repoDir, `${cached.head}..${head}`));
    // Newest first, as git gives them: the oldest fall off past the bound.
    const kept = [...old.notes]
      .map((n) => n.note)
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
    notes = [...fresh, ...kept].slice(0, HISTORY_MAX_COMMITS);
  } else {
    notes = commitNotes(await readCommits(ctx.repoDir, head));
  }
  const index = buildRecallIndex(counted(notes));
  memo = { cachePath, head, index };
  try {
    mkdirSync(ctx.paths.root, { recursive: true });
    const cache: CachedHistory = {
      format: "engram-recall-history/v1",
      head,
      index: serializeRecallIndex(index),
    };
    writeFileAtomicSync(cachePath, JSON.stringify(cache));
  } catch {
    // A cache that cannot be written costs the next recall a read of history, nothing more.
  }
  return index;
}

function readCache(path: string): CachedHistory | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as Partial<CachedHistory>;
    if (data.format !== "engram-recall-history/v1" || typeof data.head !== "string") return;
    if (!/^[0-9a-f]{40,64}$/.test(data.head) || typeof data.index !== "object") return;
    return data as CachedHistory;
  } catch {
    return undefined; // a damaged cache is rebuilt
  }
}

async function isAncestor(dir: string, older: string, newer: string): Promise<boolean> {
  return (await gitText(dir, ["merge-base", "--is-ancestor", older, newer])) !== undefined;
}

/** The commits of `range`, newest first, at most `HISTORY_MAX_COMMITS`. */
export async function readCommits(dir: string, range: string): Promise<HistoryCommit[]> {
  const text = await gitText(dir, [
    "-c",
    "log.showSignature=false",
    "log",
    "--no-color",
    "--no-mailmap",
    `--max-count=${HISTORY_MAX_COMMITS}`,
    `--format=${FORMAT}`,
    "--end-of-options",
    range,
    "--",
  ]);
  if (text === undefined) return [];
  const out: HistoryCommit[] = [];
  for (const record of text.split(RS)) {
    const [sha, author, at, subject, body] = record.split(FS);
    if (sha === undefined || body === undefined || !/^[0-9a-f]{40,64}$/.test(sha)) continue;
    if (DIRECTOR_COMMIT.test(subject ?? "")) continue;
    const iso = Date.parse(at ?? "");
    out.push({
      sha,
      author: author ?? "",
      at: Number.isFinite(iso) ? new Date(iso).toISOString() : "",
      subject: subject ?? "",
      body: body.trim().slice(0, BODY_MAX_CHARS),
    });
  }
  return out;
}

/** The commits as recall notes, without those that say nothing (a bare merge, "Never mind."). */
function commitNotes(commits: readonly HistoryCommit[]): RecallNote[] {
  return commits.map(noteOfCommit).filter((note) => hasContent(note.text));
}
