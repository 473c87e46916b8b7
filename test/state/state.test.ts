import { type ChildProcess, spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { EventBuffer, type SerializedEvent, serializeEvent } from "../../src/state/buffer.js";
import { acquireLock, removeStaleLock } from "../../src/state/lock.js";
import { type StatePaths, statePaths } from "../../src/state/paths.js";
import { listSpoolFiles, removeSpoolFiles, writeSpoolFile } from "../../src/state/spool.js";
import { memoryEvent } from "../core/engine-fixtures.js";
import { ROOT } from "../support/bins.js";
import { reapedPid } from "../support/processes.js";

let dir: string;
let paths: StatePaths;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-state-"));
  paths = statePaths(dir, ".engram");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function pending(n: number, from = 1): SerializedEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const { seq: _seq, ...rest } = memoryEvent(from + i);
    return serializeEvent(rest);
  });
}

const lastSeq = (buffer: EventBuffer) => buffer.events[buffer.events.length - 1]?.event.seq;

describe("EventBuffer", () => {
  it("assigns increasing sequence numbers and survives a reopen", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(3));
    expect(buffer.events.map((e) => e.event.seq)).toEqual([1, 2, 3]);
    buffer.closeJournal();
    const again = EventBuffer.open(paths);
    expect(again.count).toBe(3);
    again.append(pending(1, 10));
    expect(lastSeq(again)).toBe(4);
    expect(again.totalBytes).toBe(statSync(paths.journal).size);
    again.closeJournal();
  });

  it("refuses a key it already holds, in the same batch or later", () => {
    const buffer = EventBuffer.open(paths);
    const [a] = pending(1);
    expect(buffer.append([a as SerializedEvent, a as SerializedEvent])).toHaveLength(1);
    expect(buffer.append([a as SerializedEvent])).toHaveLength(0);
    buffer.closeJournal();
  });

  it("cuts off a torn last line on open (it was never acknowledged) and keeps the rest", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(2));
    buffer.closeJournal();
    appendFileSync(paths.journal, '{"key":"id:torn","seq":3,"rece');
    const readOnly = EventBuffer.open(paths, { readOnly: true });
    expect(readOnly.count).toBe(2);
    expect(readFileSync(paths.journal, "utf8")).toContain("torn"); // a reader repairs nothing
    const repaired = EventBuffer.open(paths);
    expect(repaired.count).toBe(2);
    expect(readFileSync(paths.journal, "utf8").endsWith("}\n")).toBe(true);
    repaired.append(pending(1, 3));
    expect(lastSeq(repaired)).toBe(3);
    repaired.closeJournal();
  });

  it("drops compacted events but still rejects their resends", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(5));
    buffer.dropThrough(3, { compacted_events: 3 }, 1000);
    expect(buffer.events.map((s) => s.event.seq)).toEqual([4, 5]);
    buffer.closeJournal();
    const again = EventBuffer.open(paths);
    expect(again.count).toBe(2);
    expect(again.meta.compacted_events).toBe(3);
    expect(again.append(pending(5))).toHaveLength(0); // all five keys known
    again.append(pending(1, 6));
    expect(lastSeq(again)).toBe(6);
    again.closeJournal();
  });

  it("opened for ingest, keeps keys, count and size without the events, from either line layout", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(3));
    buffer.closeJournal();
    // An event whose key needs escaping, and a line in the older key-first layout.
    const odd = memoryEvent(4, { key: 'id:quote"d' });
    appendFileSync(paths.journal, `${JSON.stringify(odd)}\n`);
    const lean = EventBuffer.open(paths, { retainEvents: false });
    expect(lean.count).toBe(4);
    expect(lean.events).toEqual([]);
    expect(lean.has('id:quote"d')).toBe(true);
    expect(lean.has("id:ev-2")).toBe(true);
    expect(lean.totalBytes).toBe(statSync(paths.journal).size);
    expect(lean.append(pending(2, 3))).toHaveLength(1); // ev-3 is a resend
    expect(() => lean.dropThrough(1, {}, 10)).toThrow(/needs a buffer opened with its events/);
    lean.closeJournal();
    expect(EventBuffer.open(paths).events.map((e) => e.event.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("bounds the remembered keys by the dedup window", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(30));
    for (let through = 5; through <= 30; through += 5) buffer.dropThrough(through, {}, 4);
    buffer.closeJournal();
    const lines = readFileSync(paths.seen, "utf8").trim().split("\n");
    expect(lines.length).toBeLessThanOrEqual(8);
    // Written as today's key: the digest of the event id, never the id.
    expect(lines).toContain(eventIdKey("ev-30"));
  });

  it("reads a journal larger than its read buffer: lines across chunks, one longer than a chunk", () => {
    // Multi-byte text, so chunk ends fall inside characters too; the long line is over 8 MB,
    // twice the 4 MB the journal is read by.
    const text = (seq: number) =>
      seq === 1500 ? "é✓".repeat(1_600_000) : `${seq} ${"naïve ✓ ".repeat(250)}`;
    const events = Array.from({ length: 3000 }, (_, i) => {
      const { seq: _seq, ...rest } = memoryEvent(i + 1, { text: text(i + 1) });
      return serializeEvent(rest);
    });
    const buffer = EventBuffer.open(paths);
    buffer.append(events);
    buffer.closeJournal();
    const size = statSync(paths.journal).size;
    expect(size).toBeGreaterThan(3 * 4 * 1024 * 1024);
    appendFileSync(paths.journal, '{"seq":3001,"key":"id:torn","text":"é'); // never acknowledged

    const again = EventBuffer.open(paths);
    expect(again.count).toBe(3000);
    expect(again.totalBytes).toBe(size);
    expect(statSync(paths.journal).size).toBe(size);
    again.events.forEach((s, i) => {
      expect(s.event.seq).toBe(i + 1);
      expect(s.event.text).toBe(text(i + 1));
      expect(s.event.received_at).toBe(memoryEvent(i + 1).received_at);
    });
    again.closeJournal();
  });

  it("rewrites the keys past twice the window, and the journal, in pieces: every line whole", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(3000));
    buffer.dropThrough(500, {}, 1200);
    // 2,500 events kept: the journal is rewritten across three pieces of 1,024 lines.
    const kept = EventBuffer.open(paths, { readOnly: true });
    expect(kept.events.map((s) => s.event.seq)).toEqual(
      Array.from({ length: 2500 }, (_, i) => i + 501),
    );
    expect(kept.totalBytes).toBe(statSync(paths.journal).size);
    // 3,000 keys, past twice the window: the newest 1,200 are written again, in two pieces.
    buffer.dropThrough(3000, {}, 1200);
    buffer.closeJournal();
    const lines = readFileSync(paths.seen, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toEqual(Array.from({ length: 1200 }, (_, i) => eventIdKey(`ev-${i + 1801}`)));
    expect(readFileSync(paths.journal, "utf8")).toBe("");
  });

  it("appends the keys of a large drop whole, one a line", () => {
    const buffer = EventBuffer.open(paths);
    buffer.append(pending(2500));
    buffer.dropThrough(2500, {}, 10_000);
    buffer.closeJournal();
    const lines = readFileSync(paths.seen, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toEqual(Array.from({ length: 2500 }, (_, i) => eventIdKey(`ev-${i + 1}`)));
    expect(EventBuffer.open(paths, { retainEvents: false }).append(pending(2500))).toHaveLength(0);
  });
});

describe("spool", () => {
  it("writes one whole file per emit, lists them in order and removes drained ones", () => {
    const a = writeSpoolFile(paths.spool, ['{"a":1}'], 1000);
    const b = writeSpoolFile(paths.spool, ['{"b":2}', '{"c":3}'], 2000);
    writeFileSync(join(paths.spool, ".7.tmp"), "partial"); // a writer killed mid-write
    expect(listSpoolFiles(paths.spool)).toEqual([a, b]);
    expect(readFileSync(b, "utf8")).toBe('{"b":2}\n{"c":3}\n');
    removeSpoolFiles(paths.spool, [a]);
    expect(listSpoolFiles(paths.spool)).toEqual([b]);
  });
});

describe("lock", () => {
  const holderPid = (path: string) => Number(readFileSync(path, "utf8").split(" ")[0]);
  /** A pid no process holds: the lock files below name it as their dead holder. */
  let gone = 0;
  beforeAll(async () => {
    gone = await reapedPid();
  });

  it("is exclusive, and a lock left by a dead process is taken over", async () => {
    const lock = await acquireLock(join(dir, "x.lock"), { timeoutMs: 100 });
    await expect(acquireLock(join(dir, "x.lock"), { timeoutMs: 100 })).rejects.toThrow(
      /held by another Director/,
    );
    expect(lock.tookOver).toBe(false);
    lock.release();
    writeFileSync(join(dir, "dead.lock"), `${gone}\n`);
    const taken = await acquireLock(join(dir, "dead.lock"), { timeoutMs: 100 });
    expect(holderPid(join(dir, "dead.lock"))).toBe(process.pid);
    // The dead holder may have left temp files: the taker is told so.
    expect(taken.tookOver).toBe(true);
    taken.release();
    expect(existsSync(join(dir, "dead.lock"))).toBe(false);
  });

  it("a slower taker of the same dead lock never removes the lock that replaced it", async () => {
    const path = join(dir, "director.lock");
    const dead = `${gone} 0123456789abcdef\n`;
    writeFileSync(path, dead);
    const first = await acquireLock(path, { timeoutMs: 100 });
    const mine = readFileSync(path, "utf8");
    expect(mine).not.toBe(dead);
    // A second Director read the dead content before the first took over, and acts on it now.
    expect(removeStaleLock(path, dead)).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(mine);
    await expect(acquireLock(path, { timeoutMs: 100 })).rejects.toThrow(/held by another Director/);
    first.release();
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("waits while another taker holds the guard, and clears a guard whose taker died", async () => {
    const path = join(dir, "director.lock");
    const dead = `${gone} feedfacefeedface\n`;
    writeFileSync(path, dead);
    const guard = `${path}.takeover-${gone}-feedfacefeedface`;
    writeFileSync(guard, "");
    expect(removeStaleLock(path, dead)).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(dead);
    await expect(acquireLock(path, { timeoutMs: 100 })).rejects.toThrow(
      new RegExp(`held by another Director \\(pid ${gone}\\)`),
    );
    const old = new Date(Date.now() - 60_000);
    utimesSync(guard, old, old);
    const lock = await acquireLock(path, { timeoutMs: 1000 });
    expect(holderPid(path)).toBe(process.pid);
    expect(existsSync(guard)).toBe(false);
    lock.release();
  });

  it("takes over an empty lock only once it is old (its creator died before writing)", async () => {
    const path = join(dir, "director.lock");
    writeFileSync(path, "");
    await expect(acquireLock(path, { timeoutMs: 100 })).rejects.toThrow(/pid unknown/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    const lock = await acquireLock(path, { timeoutMs: 100 });
    expect(holderPid(path)).toBe(process.pid);
    lock.release();
  });

  it("fails at once, naming it, when director serve holds the lock for its whole life", async () => {
    const path = join(dir, "director.lock");
    const hub = await acquireLock(path, { longLived: true });
    expect(readFileSync(path, "utf8")).toMatch(
      new RegExp(`^${process.pid} [0-9a-f]{16} serve\\n$`),
    );
    const started = performance.now();
    await expect(acquireLock(path, { timeoutMs: 5000 })).rejects.toThrow(
      new RegExp(`held by director serve \\(pid ${process.pid}\\).*stop it \\(SIGTERM\\) first`),
    );
    // Refused without waiting out the 5 s.
    expect(performance.now() - started).toBeLessThan(4000);
    hub.release();
    (await acquireLock(path, { timeoutMs: 100 })).release();
  });

  it("a released handle never removes a lock another Director holds now", async () => {
    const path = join(dir, "director.lock");
    const lock = await acquireLock(path, { timeoutMs: 100 });
    // Another Director, alive (this test's parent process stands in for it).
    const other = `${process.ppid} another\n`;
    writeFileSync(path, other);
    lock.release();
    expect(readFileSync(path, "utf8")).toBe(other);
  });

  it("Directors racing to take over a dead lock: one holder at a time", async () => {
    const lockModule = join(ROOT, "dist", "src", "state", "lock.js");
    // Each racer loads the lock module, says it is ready, then waits for a line on stdin:
    // no racer starts before every one of them is loaded and waiting. (A racer that spun on
    // a file instead starved the ones still loading on a busy two-core machine.)
    const racer = `
      import { appendFileSync } from "node:fs";
      const [lockModule, path, log] = process.argv.slice(1);
      const { acquireLock } = await import(lockModule);
      process.stdout.write("ready\\n");
      await new Promise((resolve) => process.stdin.once("data", resolve));
      process.stdin.destroy();
      const lock = await acquireLock(path, { timeoutMs: 200000 });
      appendFileSync(log, "enter\\n");
      await new Promise((resolve) => setTimeout(resolve, 20));
      appendFileSync(log, "exit\\n");
      lock.release();
    `;
    const RACERS = 6;
    for (let round = 0; round < 6; round++) {
      const path = join(dir, `race-${round}.lock`);
      const log = join(dir, `race-${round}.log`);
      writeFileSync(path, `${gone}\n`);
      let ready = 0;
      const racers: ChildProcess[] = [];
      const exits = await Promise.all(
        Array.from(
          { length: RACERS },
          () =>
            new Promise<number | null>((resolve, reject) => {
              const child = spawn(
                process.execPath,
                ["--input-type=module", "-e", racer, lockModule, path, log],
                { stdio: ["pipe", "pipe", "inherit"] },
              );
              racers.push(child);
              child.stdout.once("data", () => {
                // The last racer ready: all see the dead lock, and all are let go at once.
                if (++ready === RACERS) for (const r of racers) r.stdin?.write("go\n");
              });
              child.once("error", reject);
              child.once("exit", (code) => resolve(code));
            }),
        ),
      );
      expect(ready).toBe(RACERS);
      expect(exits).toEqual(Array(RACERS).fill(0));
      const lines = readFileSync(log, "utf8").trim().split("\n");
      expect(lines).toEqual(Array(RACERS).fill(["enter", "exit"]).flat());
      expect(existsSync(path)).toBe(false);
    }
  });
});

describe("EventBuffer: keys written before event ids were hashed", () => {
  it("opens an old journal and seen.keys, deduplicates by today's key and drops raw ids", () => {
    const { seq: _seq, ...old } = memoryEvent(1);
    const oldLine = JSON.stringify({ seq: 1, ...old, key: "id:ev-raw-1" });
    mkdirSync(join(dir, ".engram", "buffer"), { recursive: true });
    writeFileSync(paths.journal, `${oldLine}\n`);
    writeFileSync(paths.seen, "id:ev-raw-0\nh:abc\n");
    const buffer = EventBuffer.open(paths);
    expect(buffer.count).toBe(1);
    expect(buffer.has(eventIdKey("ev-raw-1"))).toBe(true);
    expect(buffer.has(eventIdKey("ev-raw-0"))).toBe(true);
    expect(buffer.has("h:abc")).toBe(true);
    // A resend of either event is a duplicate.
    const resend = serializeEvent({ ...old, key: eventIdKey("ev-raw-1") });
    expect(buffer.append([resend])).toHaveLength(0);
    expect(readFileSync(paths.seen, "utf8")).not.toContain("ev-raw-0");
    buffer.closeJournal();
  });
});
