import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { overflowNode, parsePart } from "../../core/sync/tana-nodes.js";
import { writeFileAtomicSync } from "../../state/atomic.js";
import type { TanaInputClient } from "./tana-input-client.js";
import type { TanaLocalClient } from "./tana-local-client.js";
import { SyncTargetError } from "./target.js";

/**
 * A node whose content went out in parts (the Input API takes 5000 characters a call): which
 * parts reached Tana. Part 1 is the node's own `content` field; parts 2..total are children.
 */
export interface PartsEntry {
  /** The learning's node. */
  node: string;
  /**
   * Where the parts go: the node itself, or the annotation child that carries an update;
   * null while the annotation's call has left without a recorded answer (it may exist).
   */
  parent: string | null;
  /** The content the parts are of. */
  hash: string;
  /** Where each child part (2..total) starts in the content, then where the content ends. */
  bounds: number[];
  /** Parts whose call was answered: they are in Tana. */
  posted: number[];
  /** The part whose call went out without a recorded answer: it may or may not be there. */
  sending: number | null;
}

const ID = /^[A-Za-z0-9_-]{7,16}$/;
const HASH = /^sha256:[0-9a-f]{64}$/;
const index = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

/** An entry as read from the state folder, or null when it is not one (hostile or torn). */
function validEntry(v: unknown): PartsEntry | null {
  const e = v as Partial<PartsEntry> | null;
  if (typeof e !== "object" || e === null) return null;
  if (typeof e.node !== "string" || !ID.test(e.node)) return null;
  if (e.parent !== null && (typeof e.parent !== "string" || !ID.test(e.parent))) return null;
  if (typeof e.hash !== "string" || !HASH.test(e.hash)) return null;
  if (!Array.isArray(e.bounds) || e.bounds.length < 2 || !e.bounds.every(index)) return null;
  if (!Array.isArray(e.posted) || !e.posted.every(index)) return null;
  if (e.sending !== null && !index(e.sending)) return null;
  return {
    node: e.node,
    parent: e.parent ?? null,
    hash: e.hash,
    bounds: e.bounds,
    posted: e.posted,
    sending: e.sending ?? null,
  };
}

/**
 * The durable record of content sent in parts, by item key (`<state>/sync/tana/parts.json`,
 * written atomically before each part's call and after its answer). It is what lets a run
 * without the Local API finish a node a killed or failed run left partial: the node's id
 * (the Input API cannot be searched) and exactly the parts still missing. A part whose call
 * went out unanswered is not sent again blind (it would be there twice): a run with the
 * Local API writes the content whole and removes the parts.
 */
export class PartsJournal {
  private readonly entries = new Map<string, PartsEntry>();

  constructor(private readonly path: string | null) {
    if (path === null || !existsSync(path)) return;
    try {
      const json = JSON.parse(readFileSync(path, "utf8")) as { entries?: unknown };
      for (const [key, v] of Object.entries((json.entries ?? {}) as Record<string, unknown>)) {
        const entry = validEntry(v);
        if (entry !== null) this.entries.set(key, entry);
      }
    } catch {
      // Unreadable: as if empty. An item it knew of is held until the Local API looks it up.
    }
  }

  get(key: string): PartsEntry | undefined {
    return this.entries.get(key);
  }

  /**
   * Entries whose parts are all in Tana and whose outcome the queue has recorded (`done`: the
   * key mapped to the node with this content): done with.
   */
  prune(done: (key: string, e: PartsEntry) => boolean): void {
    let changed = false;
    for (const [key, e] of this.entries) {
      if (e.parent !== null && missingParts(e).length === 0 && e.sending === null && done(key, e)) {
        this.entries.delete(key);
        changed = true;
      }
    }
    if (changed) this.save();
  }

  set(key: string, entry: PartsEntry): void {
    this.entries.set(key, entry);
    this.save();
  }

  forget(key: string): void {
    if (this.entries.delete(key)) this.save();
  }

  private save(): void {
    if (this.path === null) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const entries = Object.fromEntries([...this.entries].sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileAtomicSync(this.path, `${JSON.stringify({ version: 1, entries }, null, 1)}\n`);
  }
}

/** The child parts (2..total) not yet in Tana. */
export function missingParts(e: PartsEntry): number[] {
  const out: number[] = [];
  for (let i = 2; i <= e.bounds.length; i++) if (!e.posted.includes(i)) out.push(i);
  return out;
}

/** A new entry for parts of `content` about to go to `parent`, the node's head sent. */
export function partsEntry(
  node: string,
  parent: string | null,
  hash: string,
  content: string,
  parts: readonly string[],
): PartsEntry {
  const bounds: number[] = [];
  let at = content.length - parts.reduce((n, p) => n + p.length, 0);
  for (const p of parts) {
    bounds.push(at);
    at += p.length;
  }
  bounds.push(at);
  return { node, parent, hash, bounds, posted: [], sending: null };
}

/**
 * Posts the parts the entry says are missing, in order, one call each, journalling each
 * call before it leaves (`sending`) and after its answer (`posted`). A call that fails
 * keeps `sending` unless the failure proves nothing was written (a 429 or a refusal).
 */
export async function sendMissingParts(
  input: TanaInputClient,
  journal: PartsJournal,
  key: string,
  content: string,
): Promise<void> {
  const start = journal.get(key);
  if (start === undefined) return;
  if (start.parent === null) {
    throw new SyncTargetError(
      `${key}: the call of its annotation (an update through the Input API) left without an answer, so it may or may not be in Tana, and the Input API cannot be searched; it is not sent again until a run with the Local API (local_api_url, the desktop app running) writes the node in place`,
      "unavailable",
    );
  }
  if (start.sending !== null) {
    throw new SyncTargetError(
      `${key}: part ${start.sending} of ${start.bounds.length} of its content may or may not have reached Tana, and the Input API cannot be searched; it is not sent again until a run with the Local API (local_api_url, the desktop app running) writes the content whole`,
      "unavailable",
    );
  }
  const total = start.bounds.length;
  for (const i of missingParts(start)) {
    const text = content.slice(start.bounds[i - 2], start.bounds[i - 1]);
    const body = {
      targetNodeId: start.parent as string,
      nodes: [overflowNode(text, i, total, start.hash)],
    };
    try {
      await input.post(body, () => {
        const now = journal.get(key) as PartsEntry;
        if (now.sending !== i) journal.set(key, { ...now, sending: i });
      });
    } catch (error) {
      const e = error as SyncTargetError;
      const nothingWritten = e.kind === "rate_limited" || e.kind === "validation";
      const now = journal.get(key) as PartsEntry;
      if (nothingWritten && now.sending === i) journal.set(key, { ...now, sending: null });
      throw error;
    }
    const now = journal.get(key) as PartsEntry;
    journal.set(key, { ...now, posted: [...now.posted, i], sending: null });
  }
}

/**
 * Trashes the children of a node that its content written whole in place makes redundant:
 * content parts (`content, part i of n`) and Input API annotations (`engram update`). Every
 * other child (the user's own notes) is left alone.
 */
export async function trashStrays(local: TanaLocalClient, nodeId: string): Promise<number> {
  let trashed = 0;
  for (const child of await local.children(nodeId)) {
    if (child.inTrash) continue;
    const stray =
      parsePart(child.description) !== null ||
      /^Replaces the field values above: engram /.test(child.description ?? "");
    if (!stray) continue;
    await local.trash(child.id);
    trashed++;
  }
  return trashed;
}
