/**
 * Compaction for room as values: the slice's engrams and the ledger, the ledger and pending
 * files read back from a state folder that may be damaged or hostile, and a cycle that takes
 * the pending engrams in as its own.
 */
import { describe, expect, it } from "vitest";
import { planCycle } from "../../src/core/compaction/plan.js";
import { parsePending, planRoomCompaction, roomLinker } from "../../src/core/compaction/room.js";
import {
  emptyLedger,
  parseLedger,
  pendingFileName,
  roomReport,
  serializeLedger,
} from "../../src/core/compaction/room-ledger.js";
import { sha256Hex } from "../../src/core/model/canonical.js";
import { emptyCatalog } from "../../src/core/model/engram.js";
import { defaultConfig } from "../../src/schema/config.js";
import { Registry } from "../../src/schema/registry.js";
import { memoryEvent } from "./engine-fixtures.js";

const memory = defaultConfig().memory;
const slice = Array.from({ length: 12 }, (_, i) =>
  memoryEvent(i + 1, { text: `room fact ${i}`, topics: [`t${i % 3}`] }),
);

function plan() {
  const ledger = emptyLedger();
  return planRoomCompaction({ slice, memory, ledger, pendingFile: pendingFileName(ledger) });
}

describe("compaction for room", () => {
  it("makes the slice's engrams, as a cycle would, and counts them in the ledger", () => {
    const room = plan();
    const cycle = planCycle({
      slice,
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory,
      asOf: slice[slice.length - 1]?.received_at as string,
    });
    expect(room.engrams.map((e) => e.engram_id).sort()).toEqual(
      cycle.written.map((e) => e.engram_id).sort(),
    );
    expect(roomReport(room.ledger)).toEqual({
      compactions: 1,
      events: 12,
      engrams: room.engrams.length,
      written_by_ingest: 0,
    });
    expect(room.ledger.pending).toEqual([
      { file: "pending-00000001.ndjson", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(parseLedger(serializeLedger(room.ledger))).toEqual(room.ledger);
  });

  it("a cycle takes pending engrams as new ones, each once, and never those already listed", () => {
    const room = plan();
    const input = {
      slice: [],
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory,
      asOf: slice[slice.length - 1]?.received_at as string,
    };
    const taken = planCycle({ ...input, pending: [...room.engrams, ...room.engrams] });
    expect(taken.written.map((e) => e.engram_id).sort()).toEqual(
      room.engrams.map((e) => e.engram_id).sort(),
    );
    expect(taken.catalog.entries).toHaveLength(room.engrams.length);
    // Once listed (a cycle whose end was lost ran again), they are not new.
    const again = planCycle({ ...input, catalog: taken.catalog, pending: room.engrams });
    expect(again.written).toEqual([]);
  });

  it("reads back only what it wrote: a damaged or forged ledger or pending file is refused", () => {
    const room = plan();
    const digest = room.ledger.pending[0]?.sha256 as string;
    expect(parsePending(room.pendingText, digest)).toEqual(room.engrams);
    // One byte changed, a line cut, another file swapped in: the digest says so.
    expect(parsePending(room.pendingText.replace("room fact", "room fakt"), digest)).toMatch(
      /do not match the sha256/,
    );
    expect(parsePending(room.pendingText.slice(0, -10), digest)).toMatch(/sha256/);
    // A line of the wrong shape is refused even with a matching digest (a forged ledger).
    const forged = `${JSON.stringify({ ...room.engrams[0], scope: "lt" })}\n`;
    expect(parsePending(forged, sha256Hex(forged))).toMatch(/line 1: scope/);
    expect(parsePending("{not json\n", sha256Hex("{not json\n"))).toMatch(/line 1: not JSON/);

    expect(parseLedger("{")).toMatch(/not JSON/);
    expect(parseLedger('{"compactions":-1}')).toMatch(/compactions/);
    const bad = { ...room.ledger, pending: [{ file: "../../etc/passwd", sha256: digest }] };
    expect(parseLedger(JSON.stringify(bad))).toMatch(/pending/);
  });
});

describe("compaction for room: one entity linker for a command's compactions", () => {
  it("links every slice as a linker made for that slice alone would, byte for byte", () => {
    const registry = Registry.parse({
      people: [{ id: "ana", name: "Ana Silva", aliases: ["ana"] }],
      components: [{ id: "billing", name: "Billing", paths: ["src/billing/**"] }],
    });
    const slices = [0, 1, 2].map((k) =>
      Array.from({ length: 8 }, (_, i) =>
        memoryEvent(k * 8 + i + 1, {
          // The same facts come back in later slices: the kept linker answers from memory.
          text: `@ana reworked billing retries, step ${i % 4}`,
          topics: [`t${i % 2}`],
        }),
      ),
    );
    const kept = roomLinker(registry);
    let ledger = emptyLedger();
    for (const part of slices) {
      const shared = planRoomCompaction({
        slice: part,
        memory,
        entities: kept,
        ledger,
        pendingFile: pendingFileName(ledger),
      });
      const fresh = planRoomCompaction({
        slice: part,
        memory,
        registry,
        ledger,
        pendingFile: pendingFileName(ledger),
      });
      expect(shared.pendingText).toBe(fresh.pendingText);
      expect(shared.engrams.some((e) => e.entities?.includes("person:ana"))).toBe(true);
      ledger = shared.ledger;
    }
  });
});
