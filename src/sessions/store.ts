import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { SessionItem } from "../core/versions/items.js";
import { StateError, UsageError } from "../errors.js";
import type { SessionsConfig } from "../schema/config.js";
import {
  fsyncDirSync,
  STATE_DIR_MODE,
  STATE_FILE_MODE,
  writeFileAtomicSync,
} from "../state/atomic.js";
import { acquireLock } from "../state/lock.js";

/** The first line of a session buffer: who started it and from which version of memory. */
export interface SessionHeader {
  type: "session";
  session_id: string;
  name: string | null;
  parent_version: number;
  parent_catalog_hash: string;
  parent_commit: string | null;
  started_at: string;
}

export type SessionStatus = "open" | "ended" | "discarded";

/** `<id>.ended`: written once the whole buffer was delivered (or spooled) by `worker session end`. */
export interface EndedMarker {
  session_id: string;
  ended_at: string;
  parts: number;
  items: number;
  transport: string;
  spooled: boolean;
}

export interface SessionBuffer {
  header: SessionHeader;
  items: SessionItem[];
  bytes: number;
  /** Bytes of a torn last line (a writer killed mid-write) that reading left out. */
  torn_bytes: number;
}

const SESSION_ID_RE = /^s_[0-9a-f]{16}$/;

/** The git-ignored folder of session buffers inside the state folder. */
export function sessionsDir(stateRoot: string): string {
  return join(stateRoot, "sessions");
}

export function newSessionId(): string {
  return `s_${randomBytes(8).toString("hex")}`;
}

function bufferPath(dir: string, id: string): string {
  return join(dir, `${id}.ndjson`);
}

function tombstonePath(dir: string, id: string): string {
  return join(dir, `${id}.discarded`);
}

function endedPath(dir: string, id: string): string {
  return join(dir, `${id}.ended`);
}

/** The marker of an ended session, or undefined while it is open. */
export function readEnded(dir: string, id: string): EndedMarker | undefined {
  const path = endedPath(dir, id);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8")) as EndedMarker;
}

function refuseEnded(dir: string, id: string): void {
  const ended = readEnded(dir, id);
  if (ended !== undefined) {
    throw new StateError(
      `session ${id} was ended at ${ended.ended_at}: its buffer was sent to the Director; start a new one`,
    );
  }
}

/**
 * Runs `task` on an open session under its lock (no write can slip in), and marks it ended
 * once the task (the delivery) has returned: ending twice is refused.
 */
export async function endSessionWith<T>(
  dir: string,
  id: string,
  task: (buffer: SessionBuffer) => Promise<{ result: T; marker: Omit<EndedMarker, "session_id"> }>,
): Promise<T> {
  return underLock(dir, id, async () => {
    const { result, marker } = await task(readSession(dir, id));
    writeFileAtomicSync(
      endedPath(dir, id),
      `${JSON.stringify({ session_id: id, ...marker })}\n`,
      0o600,
    );
    return result;
  });
}

/**
 * Runs `task` under the session's lock, once the session is known to be open (checked before
 * waiting for the lock, to fail fast, and again under it: an end may have finished meanwhile).
 */
async function underLock<T>(dir: string, id: string, task: () => Promise<T> | T): Promise<T> {
  checkId(id);
  readSession(dir, id);
  refuseEnded(dir, id);
  const lock = await acquireLock(join(dir, `${id}.lock`), { timeoutMs: 10_000 });
  try {
    refuseEnded(dir, id);
    return await task();
  } finally {
    lock.release();
  }
}

function checkId(id: string): void {
  if (!SESSION_ID_RE.test(id)) {
    throw new UsageError(`session "${id}": expected an id like s_0123456789abcdef`);
  }
}

/** Creates the buffer with its header, whole or not at all. */
export function createSession(dir: string, header: SessionHeader): void {
  mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
  writeFileAtomicSync(bufferPath(dir, header.session_id), `${JSON.stringify(header)}\n`, 0o600);
}

/**
 * Reads a buffer. A last line without its newline was never acknowledged (the writer was
 * killed before its fsync returned): it is left out, and cut by the next write.
 */
export function readSession(dir: string, id: string): SessionBuffer {
  checkId(id);
  const path = bufferPath(dir, id);
  if (!existsSync(path)) {
    if (existsSync(tombstonePath(dir, id))) {
      throw new StateError(`session ${id} was discarded: start a new one`);
    }
    throw new StateError(`session ${id} is unknown (no ${path})`);
  }
  const text = readFileSync(path, "utf8");
  const end = text.lastIndexOf("\n") + 1;
  const lines = text.slice(0, end).split("\n").slice(0, -1);
  const parsed = lines.map((line, i) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw new StateError(`${path}:${i + 1}: not valid JSON (${(error as Error).message})`);
    }
  });
  const header = parsed[0];
  if (header?.type !== "session" || header.session_id !== id) {
    throw new StateError(`${path}:1: expected the session header of ${id}`);
  }
  const items = parsed.slice(1).map((line, i) => {
    if (line.type !== "item") throw new StateError(`${path}:${i + 2}: expected an item`);
    const { type: _type, ...item } = line;
    // The position in the file is the sequence number: concurrent appends cannot collide.
    return { ...item, seq: i + 1 } as SessionItem;
  });
  return {
    header: header as unknown as SessionHeader,
    items,
    bytes: Buffer.byteLength(text.slice(0, end)),
    torn_bytes: Buffer.byteLength(text) - Buffer.byteLength(text.slice(0, end)),
  };
}

export type Budget = Pick<SessionsConfig, "buffer_max_items" | "buffer_max_bytes">;

/**
 * Appends one item (without its seq) under the session's lock, after checking both budgets,
 * and fsyncs before returning: an acknowledged write survives kill -9.
 */
export async function appendItem(
  dir: string,
  id: string,
  item: Omit<SessionItem, "seq">,
  budget: Budget,
): Promise<SessionItem> {
  return underLock(dir, id, () => {
    const current = readSession(dir, id);
    const line = `${JSON.stringify({ type: "item", ...item })}\n`;
    const lineBytes = Buffer.byteLength(line);
    if (current.items.length + 1 > budget.buffer_max_items) {
      throw new StateError(
        `session ${id} is full: ${current.items.length} item(s), [sessions] buffer_max_items = ${budget.buffer_max_items}; end or discard it`,
      );
    }
    if (current.bytes + lineBytes > budget.buffer_max_bytes) {
      throw new StateError(
        `session ${id} is full: ${current.bytes} + ${lineBytes} bytes would pass [sessions] buffer_max_bytes = ${budget.buffer_max_bytes}; end or discard it`,
      );
    }
    const path = bufferPath(dir, id);
    if (current.torn_bytes > 0) truncateSync(path, current.bytes);
    const fd = openSync(path, "a", STATE_FILE_MODE);
    try {
      writeSync(fd, Buffer.from(line, "utf8"));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { ...item, seq: current.items.length + 1 } as SessionItem;
  });
}

/** Deletes the buffer, leaving a tombstone so a later write says "discarded", not "unknown". */
export async function discardSession(dir: string, id: string, at: string): Promise<number> {
  return underLock(dir, id, () => {
    const buffer = readSession(dir, id);
    writeFileAtomicSync(tombstonePath(dir, id), `${JSON.stringify({ session_id: id, at })}\n`);
    unlinkSync(bufferPath(dir, id));
    fsyncDirSync(dir);
    return buffer.items.length;
  });
}

/** The ids of the open sessions, sorted. */
export function listSessionIds(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".ndjson"))
    .map((name) => name.slice(0, -".ndjson".length))
    .filter((id) => SESSION_ID_RE.test(id))
    .sort();
}
