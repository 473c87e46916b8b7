/**
 * A large input read on one thread is written in small batches and fsynced in the
 * background while the next lines are normalized. Nothing is acknowledged before it is
 * durable: when the ingest returns its counts, every journal write is covered by a finished
 * fsync, none is still running when the journal is closed, and the quarantine keeps the
 * input's order.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { Ingestor } from "../../src/ingest/ingest.js";
import { EventBuffer } from "../../src/state/buffer.js";
import { note } from "../support/envelopes.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Watches the journal's writes and fsyncs through the buffer's own methods. */
function watchJournal() {
  const state = {
    writes: 0,
    durableThrough: 0,
    running: 0,
    background: 0,
    drains: [] as string[],
    closes: [] as string[],
  };
  const proto = EventBuffer.prototype;
  const append = proto.append;
  vi.spyOn(proto, "append").mockImplementation(function (this: EventBuffer, items, sync = true) {
    const added = append.call(this, items, sync);
    if (added.length > 0) state.writes++;
    if (sync) state.durableThrough = state.writes;
    return added;
  });
  const sync = proto.sync;
  vi.spyOn(proto, "sync").mockImplementation(function (this: EventBuffer) {
    sync.call(this);
    // With a background fsync still running, what it covers is durable only once it ends.
    if (state.running === 0) state.durableThrough = state.writes;
  });
  const background = proto.syncInBackground;
  vi.spyOn(proto, "syncInBackground").mockImplementation(function (this: EventBuffer) {
    const covers = state.writes;
    state.running++;
    state.background++;
    return background.call(this).then(() => {
      state.running--;
      state.durableThrough = Math.max(state.durableThrough, covers);
    });
  });
  // The moment counts may be read: every write must be durable by then.
  const drain = Ingestor.prototype.drain;
  vi.spyOn(Ingestor.prototype, "drain").mockImplementation(async function (this: Ingestor) {
    await drain.call(this);
    state.drains.push(
      `running ${state.running}, durable through write ${state.durableThrough} of ${state.writes}`,
    );
  });
  const close = proto.closeJournal;
  vi.spyOn(proto, "closeJournal").mockImplementation(function (this: EventBuffer) {
    state.closes.push(
      `running ${state.running}, durable through write ${state.durableThrough} of ${state.writes}`,
    );
    close.call(this);
  });
  return state;
}

describe("a large input on one thread", () => {
  it("is fsynced in the background, and all of it before the ingest returns", async () => {
    const repo = mkdtempSync(join(tmpdir(), "engram-journal-sync-"));
    initRepository(await openContext({ repo }));
    const lines: string[] = [];
    const bad: number[] = [];
    for (let i = 0; i < 12_000; i++) {
      if (i % 1500 === 7) {
        lines.push(`{"not json ${i}`);
        bad.push(i + 1);
        continue;
      }
      const text = `fact ${i}: the build cache of area ${i % 40} ${"is warm again ".repeat(25)}`;
      lines.push(JSON.stringify(note("fact", text, { eventId: `e-${i}`, seq: i + 1 })));
    }
    const file = join(repo, "big.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);

    const previous = process.env.ENGRAM_INGEST_THREADS;
    process.env.ENGRAM_INGEST_THREADS = "0";
    const journal = watchJournal();
    let counts: Awaited<ReturnType<typeof ingestSource>>;
    try {
      counts = await ingestSource(await openContext({ repo }), { path: file });
    } finally {
      if (previous === undefined) delete process.env.ENGRAM_INGEST_THREADS;
      else process.env.ENGRAM_INGEST_THREADS = previous;
    }

    expect(counts.accepted).toBe(12_000 - bad.length);
    expect(counts.quarantined).toBe(bad.length);
    // The path under test ran: several batches, fsynced in the background.
    expect(journal.background).toBeGreaterThan(1);
    expect(journal.writes).toBeGreaterThan(journal.background);
    // Drained and closed once, with nothing running and every write covered by a finished fsync.
    expect(journal.drains).toEqual([
      `running 0, durable through write ${journal.writes} of ${journal.writes}`,
    ]);
    expect(journal.closes).toEqual([
      `running 0, durable through write ${journal.writes} of ${journal.writes}`,
    ]);
    const ctx = await openContext({ repo });
    expect(readFileSync(ctx.paths.journal, "utf8").trim().split("\n")).toHaveLength(
      counts.accepted,
    );
    const quarantined = readFileSync(ctx.paths.quarantine, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { line: number }).line);
    expect(quarantined).toEqual(bad);
  });
});
