import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLock, type LockHolder } from "../../src/state/lock.js";

const dir = mkdtempSync(join(tmpdir(), "engram-lock-wait-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a lock's holder and its waiters", () => {
  it("the holder writes what it runs; a waiter is told once who holds it", async () => {
    const path = join(dir, "director.lock");
    const held = await acquireLock(path, { purpose: "director run" });
    const [first, second] = readFileSync(path, "utf8").split("\n");
    expect(first).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}$`));
    expect(second).toBe("director run");
    const told: LockHolder[] = [];
    const waiting = acquireLock(path, {
      purpose: "director ingest",
      onWait: (holder) => {
        told.push(holder);
        // Released only once the waiter has said it waits: several polls happen before.
        setTimeout(() => held.release(), 200);
      },
    });
    const mine = await waiting;
    expect(told).toEqual([{ pid: process.pid, purpose: "director run" }]);
    expect(readFileSync(path, "utf8").split("\n")[1]).toBe("director ingest");
    mine.release();
  });

  it("a director serve lock still refuses at once, naming it", async () => {
    const path = join(dir, "serve.lock");
    const held = await acquireLock(path, { longLived: true, purpose: "director serve" });
    await expect(acquireLock(path, { onWait: () => {} })).rejects.toMatchObject({
      code: "lock_held",
      message: expect.stringContaining("held by director serve"),
    });
    held.release();
  });
});
