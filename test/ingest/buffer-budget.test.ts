/**
 * The buffer's hard budgets hold after every ingest, not only after a cycle: an ingest that
 * would pass `buffer_max_events` or `buffer_max_bytes` compacts the oldest slice first. No
 * accepted event is lost or doubled, and what is compacted does not depend on how the input
 * was cut into ingests.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { EventBuffer } from "../../src/state/buffer.js";
import { heartbeat, ndjson, note } from "../support/envelopes.js";
import { tomlConfig } from "../support/repo.js";

const MAX_MESSAGE_BYTES = 1024;
beforeAll(() => {
  process.env.SOURCE_DATE_EPOCH = "1795000000";
});
afterAll(() => {
  delete process.env.SOURCE_DATE_EPOCH;
});

interface Budgets {
  maxEvents: number;
  maxBytes: number;
  keepRecent: number;
}

async function repoWith(b: Budgets): Promise<string> {
  const repo = mkdtempSync(join(tmpdir(), "engram-budget-"));
  initRepository(await openContext({ repo }));
  const config = tomlConfig({
    memory: {
      buffer_max_events: b.maxEvents,
      buffer_max_bytes: b.maxBytes,
      buffer_keep_recent_events: b.keepRecent,
      st_max_files: 10_000,
      lt_max_files: 10_000,
    },
    agent_bus: { max_message_bytes: MAX_MESSAGE_BYTES },
  });
  writeFileSync(join(repo, "config", "dev.toml"), config);
  return repo;
}

/** Event i: a note or a heartbeat, of varied size; `id` repeats for a resend. */
function line(i: number, id: number): string {
  const text = `fact ${i} about topic ${i % 5} ${"detail ".repeat(i % 17)}`;
  const env =
    i % 3 === 0
      ? heartbeat(`stage-${i % 4}`, { eventId: `e-${id}`, seq: i })
      : note("fact", text, { eventId: `e-${id}`, seq: i, topics: [`t${i % 5}`] });
  return ndjson([env]);
}

async function journalKeys(repo: string): Promise<string[]> {
  const path = (await openContext({ repo })).paths.journal;
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { key: string }).key);
}

async function seenKeys(repo: string): Promise<string[]> {
  const path = (await openContext({ repo })).paths.seen;
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** Every file of the memory tree, path and text, for comparing two repositories. */
function memoryFiles(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[relative(repo, full)] = readFileSync(full, "utf8");
    }
  };
  walk(join(repo, "memory"));
  out["MEMORY.md"] = readFileSync(join(repo, "MEMORY.md"), "utf8");
  return out;
}

/** The engram files of the memory tree: what compaction made, whoever wrote the catalog. */
function engramFiles(repo: string): Record<string, string> {
  const all = memoryFiles(repo);
  return Object.fromEntries(
    Object.entries(all).filter(([path]) => /^memory\/(st|lt)\/.*engram_/.test(path)),
  );
}

/** The notes' facts the ST engrams hold, sorted, and the events they count. */
function memoryContent(repo: string): { facts: string[]; events: number } {
  const engrams = Object.entries(engramFiles(repo))
    .filter(([path]) => path.startsWith("memory/st/"))
    .map(
      ([, text]) => JSON.parse(text) as { facts: string[]; provenance: { event_count: number } },
    );
  return {
    facts: engrams.flatMap((e) => e.facts.filter((f) => f.startsWith("fact "))).sort(),
    events: engrams.reduce((n, e) => n + e.provenance.event_count, 0),
  };
}

/** Ingests the lines cut into `cuts` ingests; checks the budgets after each one. */
async function ingestInPieces(repo: string, lines: string[], cuts: number[], b: Budgets) {
  let accepted = 0;
  let at = 0;
  for (const size of [...cuts, lines.length]) {
    const piece = lines.slice(at, at + size);
    at += piece.length;
    if (piece.length === 0) continue;
    const ctx = await openContext({ repo });
    const r = await ingestSource(ctx, {
      stream: Readable.from([piece.join("")]),
      name: "test",
    });
    accepted += r.accepted;
    expect(r.buffer.events).toBeLessThanOrEqual(b.maxEvents);
    expect(r.buffer.bytes).toBeLessThanOrEqual(b.maxBytes);
    const held = EventBuffer.open(ctx.paths, { readOnly: true, retainEvents: false });
    expect(held.count).toBeLessThanOrEqual(b.maxEvents);
    expect(held.totalBytes).toBeLessThanOrEqual(b.maxBytes);
  }
  return accepted;
}

const budgets = fc
  .record({
    maxEvents: fc.integer({ min: 4, max: 40 }),
    maxBytes: fc.integer({ min: 2_500, max: 12_000 }),
    keepRecent: fc.integer({ min: 0, max: 3 }),
  })
  .filter((b) => b.keepRecent * MAX_MESSAGE_BYTES <= b.maxBytes * 0.5);

describe("the buffer's hard budgets at every ingest", () => {
  it("hold after any ingest; every accepted event is in the buffer or compacted, once", async () => {
    await fc.assert(
      fc.asyncProperty(
        budgets,
        fc.integer({ min: 1, max: 90 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (b, count, cuts, resends) => {
          const repo = await repoWith(b);
          try {
            // Resends repeat an earlier event id (a duplicate, dropped whenever it comes).
            const ids = Array.from({ length: count }, (_, i) => i);
            for (const r of resends) ids.splice(r % (ids.length + 1), 0, r % count);
            const lines = ids.map((id, i) => line(i, id));
            const accepted = await ingestInPieces(repo, lines, cuts, b);
            const unique = new Set(ids.map((id) => eventIdKey(`e-${id}`)));
            expect(accepted).toBe(unique.size);
            const buffered = await journalKeys(repo);
            const compacted = await seenKeys(repo);
            const all = [...buffered, ...compacted];
            // Exactly once: no key twice, none missing, none extra.
            expect(all.length).toBe(new Set(all).size);
            expect(new Set(all)).toEqual(unique);
          } finally {
            rmSync(repo, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it("compacts the same events into memory whatever the ingests' sizes", async () => {
    await fc.assert(
      fc.asyncProperty(
        budgets,
        fc.integer({ min: 10, max: 70 }),
        fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 4 }),
        async (b, count, cuts) => {
          const lines = Array.from({ length: count }, (_, i) => line(i, i));
          const whole = await repoWith(b);
          const pieces = await repoWith(b);
          try {
            await ingestInPieces(whole, lines, [], b);
            await ingestInPieces(pieces, lines, cuts, b);
            // The same notes and events in memory, and the same left in the buffer. Each ingest
            // packs what it compacted for room (each group's records joined, see room.ts), so
            // where one ingest ends can start a group's next engram: the files may differ.
            expect(memoryContent(pieces)).toEqual(memoryContent(whole));
            expect(await journalKeys(pieces)).toEqual(await journalKeys(whole));
          } finally {
            rmSync(whole, { recursive: true, force: true });
            rmSync(pieces, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 8 },
    );
  });

  it("compacts on ingest: the oldest events leave the buffer before a budget is passed", async () => {
    const b = { maxEvents: 10, maxBytes: 1_000_000, keepRecent: 2 };
    const repo = await repoWith(b);
    try {
      const lines = Array.from({ length: 25 }, (_, i) => line(i, i));
      await ingestInPieces(repo, lines, [], b);
      const compacted = await seenKeys(repo);
      // The oldest first: compacted keys are a prefix of the input order.
      expect(compacted.length).toBeGreaterThan(0);
      expect(compacted).toEqual(
        lines.slice(0, compacted.length).map((_, i) => eventIdKey(`e-${i}`)),
      );
      expect(readdirSync(join(repo, "memory", "st")).some((d) => d !== ".gitkeep")).toBe(true);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
