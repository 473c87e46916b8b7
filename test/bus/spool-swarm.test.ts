/**
 * The local spool, the embedded transport, under a swarm: fifty writers spool two thousand
 * envelopes through the real sender while Directors drain the spool and are SIGKILLed at
 * random points. Every envelope a writer was told is durable ends up in the buffer exactly
 * once.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { deliver } from "../../src/worker/emit.js";
import { buildEnvelope } from "../../src/worker/envelope.js";
import { DIRECTOR_BIN, describeResult, director, spawnBin } from "../support/bins.js";
import { seededRandom } from "../support/random.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const WRITERS = 50;
const PER_WRITER = 40;

describe("the spool under fifty writers and a Director killed mid-drain", () => {
  it("loses no acknowledged envelope and counts none twice", async () => {
    const repo = dirs.repo("engram-spool-swarm-");
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    const ctx = await openContext({ repo: repo.dir });
    const acknowledged: string[] = [];
    let writing = true;

    const writer = async (w: number) => {
      for (let i = 0; i < PER_WRITER; i++) {
        const envelope = await buildEnvelope(
          "memory_note.v1",
          { kind: "fact", text: `writer ${w} note ${i}`, topics: ["swarm"] },
          { id: `w${w}` },
          new Date().toISOString(),
          i,
        );
        const delivery = await deliver(ctx, [envelope], { kind: "spool" });
        expect(delivery.spooled).toBe(true);
        acknowledged.push(envelope.event_id);
        // Writers keep going for some seconds, so Directors start and die among them.
        await new Promise((r) => setTimeout(r, 100 + ((w * 37 + i * 11) % 300)));
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w))).finally(
      () => {
        writing = false;
      },
    );

    // Directors drain while the writers write; most are killed at a random moment.
    const random = seededRandom(4242);
    const outcomes: string[] = [];
    while (writing) {
      const spawned = spawnBin(DIRECTOR_BIN, ["run", "--json"], {
        cwd: repo.dir,
        timeoutMs: 60_000,
      });
      // A drain takes 100-300 ms: most kills land inside one, some runs finish.
      const delay = 20 + Math.floor(random() * 300);
      const timer = setTimeout(() => spawned.child.kill("SIGKILL"), delay);
      const r = await spawned.done;
      clearTimeout(timer);
      outcomes.push(r.signal ? `killed at ${delay} ms` : `exit ${r.code}`);
      if (r.signal === null) expect(r.code, describeResult(r)).toBe(0);
    }
    await writers;
    const last = await director(["run", "--json"], { cwd: repo.dir, timeoutMs: 60_000 });
    expect(last.code, describeResult(last)).toBe(0);

    expect(acknowledged).toHaveLength(WRITERS * PER_WRITER);
    const journal = readFileSync(join(repo.dir, ".engram", "buffer", "journal.ndjson"), "utf8");
    const counts = new Map<string, number>();
    for (const line of journal.split("\n")) {
      if (line === "") continue;
      const key = (JSON.parse(line) as { key: string }).key;
      if (key.startsWith("ih:")) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const missing = acknowledged.filter((id) => !counts.has(eventIdKey(id)));
    const doubled = [...counts].filter(([, n]) => n > 1);
    const summary = `${outcomes.filter((o) => o.startsWith("killed")).length} kills of ${outcomes.length} runs`;
    expect(missing, summary).toEqual([]);
    expect(doubled, summary).toEqual([]);
    expect(
      outcomes.some((o) => o.startsWith("killed")),
      summary,
    ).toBe(true);
  }, 300_000);
});
