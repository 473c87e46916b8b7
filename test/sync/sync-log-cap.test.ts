import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendCapped, rotatedLogPath } from "../../src/state/capped-log.js";
import { SyncLog, type SyncLogEntry } from "../../src/sync/sync-log.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const entry = (i: number): SyncLogEntry => ({
  at: "2027-03-03T10:00:00Z",
  target: "notion",
  op: "recall",
  key: `k${String(i).padStart(6, "0")}`,
  ok: true,
});

describe("the sync log's disk bound", () => {
  it("keeps a week's flood within two files of its cap, the newest entries readable", () => {
    const dir = dirs.dir("engram-synclog-");
    const cap = 4096;
    const log = new SyncLog(dir, 4, cap);
    for (let i = 0; i < 2000; i++) log.append(entry(i));
    const files = readdirSync(dir).sort();
    expect(files).toEqual(["sync-2027-W09.1.ndjson", "sync-2027-W09.ndjson"]);
    for (const name of files) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(cap);
    const keys = log.read().map((e) => e.key);
    expect(keys.at(-1)).toBe("k001999"); // the newest is kept, in order
    expect(keys).toEqual([...keys].sort());
    expect(keys.length).toBeLessThan(2000); // what passed two caps was rotated away
  });

  it("prunes old weeks with their rotated generation", () => {
    const dir = dirs.dir("engram-synclog-weeks-");
    const log = new SyncLog(dir, 1, 200);
    for (let i = 0; i < 10; i++) log.append(entry(i));
    new SyncLog(dir, 1, 200).append({ ...entry(99), at: "2027-03-20T10:00:00Z" });
    expect(readdirSync(dir).sort()).toEqual(["sync-2027-W11.ndjson"]);
  });

  it("appendCapped never lets one file pass its cap with more than one append", () => {
    const path = join(dirs.dir("engram-capped-"), "archive.ndjson");
    for (let i = 0; i < 100; i++) appendCapped(path, `${"x".repeat(30)}\n`, 100);
    expect(statSync(path).size).toBeLessThanOrEqual(100);
    expect(statSync(rotatedLogPath(path)).size).toBeLessThanOrEqual(100);
  });
});
