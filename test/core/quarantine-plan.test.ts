import { describe, expect, it } from "vitest";
import {
  coalesceRuns,
  emptyGeneration,
  type PlannedRecord,
  planQuarantineAppend,
  senderOf,
} from "../../src/core/ingest/quarantine-plan.js";

const rec = (source: string, line: number, reason = "malformed-json"): PlannedRecord => ({
  source,
  line,
  reason,
  detail: reason,
  bytes: 2,
});
const encode = (r: PlannedRecord) => JSON.stringify(r);

describe("the quarantine's plan", () => {
  it("knows a TCP sender by its address, not its port or the id it names", () => {
    expect(senderOf("tcp/127.0.0.1:50123")).toBe("tcp/127.0.0.1");
    expect(senderOf("tcp/w-1@127.0.0.1:50123")).toBe("tcp/127.0.0.1");
    expect(senderOf("tcp/other@[::1]:7")).toBe("tcp/[::1]");
    expect(senderOf("spool/a.ndjson")).toBe("spool/a.ndjson");
  });

  it("makes one record of a run of consecutive alike lines, and only of consecutive ones", () => {
    const runs = coalesceRuns([rec("f", 1), rec("f", 2), rec("f", 3), rec("f", 5), rec("g", 6)]);
    expect(runs.map((r) => [r.line, r.count, r.last_line, r.bytes])).toEqual([
      [1, 3, 3, 6],
      [5, undefined, undefined, 2],
      [6, undefined, undefined, 2],
    ]);
  });

  it("rotates when a generation is full, and drops a sender's lines past its share", () => {
    const limits = { maxBytes: 1 << 20, maxRecords: 8, senderShare: 0.5 };
    const flood = Array.from({ length: 10 }, (_, i) => rec("f", i * 2 + 1));
    const plan = planQuarantineAppend(emptyGeneration(), [...flood, rec("g", 1)], limits, encode);
    // Four records a generation, two of them for one sender.
    expect(plan.segments.map((s) => s.records.length)).toEqual([3]);
    expect(plan.dropped).toMatchObject({ lines: 8, bytes: 16 });
    const more = Array.from({ length: 3 }, (_, i) => rec(`h${i}`, 1));
    const next = planQuarantineAppend(plan.after, more, limits, encode);
    expect(next.segments.map((s) => s.records.length)).toEqual([1, 2]);
  });
});
