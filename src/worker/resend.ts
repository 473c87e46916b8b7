/**
 * `worker resend`: a checkout's spooled envelopes sent over a bus, so that notes stranded in
 * a clone's spool (or spooled while the bus was down) reach the Director. Each envelope is
 * sent as it was written (its `event_id` unchanged), so the Director keeps it once however
 * often it arrives; a spool file is removed only once the bus acknowledged what it held (or,
 * when the bus failed part way, once the rest is in a new spool file).
 */
import { closeSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { openSender } from "../bus/sender.js";
import { type BusUrl, formatBusUrl } from "../bus/url.js";
import type { RepoContext } from "../context/repo-context.js";
import { UsageError } from "../errors.js";
import { Envelope } from "../schema/envelope.js";
import { listSpoolFiles, openSpoolFile, removeSpoolFiles } from "../state/spool.js";

export interface ResendResult {
  bus: string;
  /** The spool folder read. */
  spool: string;
  /** Spool files read, and the envelopes in them. */
  files: number;
  envelopes: number;
  /** Envelopes the bus acknowledged (made durable at the far end). */
  acknowledged: number;
  /** Spool files removed. */
  removed: number;
  /** Envelopes still waiting in the spool (the bus failed): run again once it is back. */
  left: number;
  fallback_reason?: string;
  /** Spool files kept as they are because a line is not an envelope, each with why. */
  unreadable: string[];
}

/** Envelopes per send: one ref commit, one NATS batch, one hub round trip. */
const BATCH = 500;

export async function resendSpool(ctx: RepoContext, bus: BusUrl): Promise<ResendResult> {
  if (bus.kind === "spool") {
    throw new UsageError(
      "worker resend sends the spool over a bus: give --bus URL (git:origin, tcp://HOST:PORT, nats://HOST:PORT), or set ENGRAM_BUS or [worker] bus",
    );
  }
  const result: ResendResult = {
    bus: formatBusUrl(bus),
    spool: ctx.paths.spool,
    files: 0,
    envelopes: 0,
    acknowledged: 0,
    removed: 0,
    left: 0,
    unreadable: [],
  };
  const batches: { paths: string[]; envelopes: Envelope[] }[] = [];
  let batch: { paths: string[]; envelopes: Envelope[] } = { paths: [], envelopes: [] };
  for (const path of listSpoolFiles(ctx.paths.spool)) {
    const read = readSpoolEnvelopes(path);
    if (read === undefined) continue; // gone, or no longer a regular file: never followed
    if (typeof read === "string") {
      result.unreadable.push(`${basename(path)}: ${read}`);
      continue;
    }
    result.files++;
    result.envelopes += read.length;
    batch.paths.push(path);
    batch.envelopes.push(...read);
    if (batch.envelopes.length >= BATCH) {
      batches.push(batch);
      batch = { paths: [], envelopes: [] };
    }
  }
  if (batch.paths.length > 0) batches.push(batch);
  if (batches.length === 0) return result;
  const sender = await openSender(ctx, bus);
  try {
    for (const [i, { paths, envelopes }] of batches.entries()) {
      const delivery = await sender.send(envelopes);
      // Either way every envelope of the batch is durable elsewhere now: acknowledged by the
      // bus, or (what it did not take) in the new spool file the fallback wrote.
      removeSpoolFiles(ctx.paths.spool, paths);
      result.removed += paths.length;
      if (!delivery.spooled) {
        result.acknowledged += envelopes.length;
        continue;
      }
      const left = delivery.path === undefined ? envelopes.length : linesIn(delivery.path);
      result.acknowledged += envelopes.length - left;
      result.left += left + batches.slice(i + 1).reduce((n, b) => n + b.envelopes.length, 0);
      if (delivery.fallback_reason !== undefined) result.fallback_reason = delivery.fallback_reason;
      break; // the bus is down: the rest waits for the next resend
    }
  } finally {
    await sender.close();
  }
  return result;
}

/** A spool file's envelopes; a string saying why when a line is not one; undefined if gone. */
function readSpoolEnvelopes(path: string): Envelope[] | string | undefined {
  const opened = openSpoolFile(path);
  if (opened === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(opened.fd, "utf8");
  } finally {
    closeSync(opened.fd);
  }
  const out: Envelope[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return `line ${i + 1}: not JSON`;
    }
    if (!Envelope.safeParse(value).success) return `line ${i + 1}: not an agent-bus envelope`;
    out.push(value as Envelope); // as written: the same bytes, the same event id
  }
  return out;
}

function linesIn(path: string): number {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "").length;
  } catch {
    return 0;
  }
}
