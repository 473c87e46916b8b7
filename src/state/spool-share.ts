/**
 * One sender's share of the spool (issue 40): every worker of a repository (and of its linked
 * worktrees) writes its notes to one spool folder, where they wait for a Director. Without a
 * bound, one runaway writer fills the disk before any Director drains it. A spool file's name
 * carries its sender (`spoolSenderTag`), so what each sender holds is counted from the folder
 * listing without reading a file; a send that would take its sender past `[agent_bus]
 * sender_share` of `[memory] buffer_max_bytes` is refused (nothing written) and counted in
 * `spool-refused.json`, which `director status` shows and the next drain reports and clears.
 * The spool's writers are the user's own processes (the folder is 0700), so a sender is the
 * id it names.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "./atomic.js";

/** The refusals of the spool, next to it in the state folder that holds it. */
export const SPOOL_REFUSED_FILE = "spool-refused.json";

/** Senders kept in the refusal counts: the ones refused most bytes. */
const MAX_REFUSED_SENDERS = 64;

/** A sender's id as a spool file name carries it: the id when file-safe, else a digest. */
export function spoolSenderTag(id: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(id)) return id;
  const crypto = process.getBuiltinModule("node:crypto"); // only for such an id
  return `h${crypto.createHash("sha256").update(id).digest("hex").slice(0, 16)}`;
}

/**
 * `<ms>-<pid>-<hex>-<bytes>.<sender>.ndjson` (`-<bytes>` missing in files written before it
 * was added): the sender of a spool file and its size, when its name carries them.
 */
const SENDER_NAME = /^\d+-\d+-[0-9a-f]+(?:-(\d{1,15}))?\.([A-Za-z0-9_-]{1,64})\.ndjson$/;

/**
 * The bytes of spool files each sender holds (files whose name names no sender: none), or
 * only `only`'s (the others' files are then not even looked at).
 */
export function spoolHoldings(spoolDir: string, only?: string): Map<string, number> {
  const held = new Map<string, number>();
  if (!existsSync(spoolDir)) return held;
  for (const name of readdirSync(spoolDir)) {
    const [, size, sender] = SENDER_NAME.exec(name) ?? [];
    if (sender === undefined || (only !== undefined && sender !== only)) continue;
    // A name that says its size is taken at its word: only this user writes the spool, and a
    // name that lies only changes its own sender's share. Older names are looked at.
    const bytes = size !== undefined ? Number(size) : plainFileSize(join(spoolDir, name));
    if (bytes !== undefined) held.set(sender, (held.get(sender) ?? 0) + bytes);
  }
  return held;
}

/** A regular file's size; undefined for anything else, or nothing. */
function plainFileSize(path: string): number | undefined {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat?.isFile() ? stat.size : undefined;
}

/** A refused send: the sender, what it holds, what it tried to add and its share. */
export interface SpoolShareRefusal {
  sender: string;
  held_bytes: number;
  adding_bytes: number;
  share_bytes: number;
}

/** Why `sender` may not add `bytes` to the spool (its share is `shareBytes`), or undefined. */
export function spoolShareRefusal(
  spoolDir: string,
  sender: string,
  bytes: number,
  shareBytes: number,
): SpoolShareRefusal | undefined {
  const tag = spoolSenderTag(sender);
  const held = spoolHoldings(spoolDir, tag).get(tag) ?? 0;
  if (held + bytes <= shareBytes) return undefined;
  return { sender, held_bytes: held, adding_bytes: bytes, share_bytes: shareBytes };
}

/** What was refused of one sender since the last drain reported it. */
export interface SpoolRefusals {
  sends: number;
  lines: number;
  bytes: number;
}

/** The refusal counts by sender (empty when none, or when the file is not what we write). */
export function readSpoolRefusals(path: string): Record<string, SpoolRefusals> {
  if (!existsSync(path)) return {};
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
    const out: Record<string, SpoolRefusals> = {};
    for (const [sender, c] of Object.entries(value as Record<string, Partial<SpoolRefusals>>)) {
      const count = (v: unknown) =>
        Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : 0;
      out[sender] = { sends: count(c?.sends), lines: count(c?.lines), bytes: count(c?.bytes) };
    }
    return out;
  } catch {
    // Counts that explain, not state: a damaged file starts afresh.
    return {};
  }
}

/**
 * Counts a refused send of `sender` (read, add, write atomically: two writers refused at
 * once may lose one count, never the file). Bounded: the senders refused most bytes.
 */
export function recordSpoolRefusal(
  path: string,
  sender: string,
  lines: number,
  bytes: number,
): void {
  const all = readSpoolRefusals(path);
  const c = all[sender] ?? { sends: 0, lines: 0, bytes: 0 };
  all[sender] = { sends: c.sends + 1, lines: c.lines + lines, bytes: c.bytes + bytes };
  const kept = Object.entries(all)
    .sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_REFUSED_SENDERS);
  writeFileAtomicSync(path, `${JSON.stringify(Object.fromEntries(kept))}\n`);
}

/** Takes the refusal counts to report them: read, then removed. */
export function takeSpoolRefusals(path: string): Record<string, SpoolRefusals> {
  const all = readSpoolRefusals(path);
  if (existsSync(path)) rmSync(path, { force: true });
  return all;
}
