/**
 * kill -9 of `director ingest` while it compacts for room (engrams and ledger into
 * `.engram/room/` through the intent) and while it settles them into the work tree: once
 * every input is ingested again and a run flushes the buffer, each event is in exactly one
 * engram, and the room's ledger was reported and removed.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
} from "../support/bins.js";
import { killAfter, killWhen } from "../support/crash.js";
import { ndjson, note } from "../support/envelopes.js";
import { readEngrams } from "../support/memory.js";
import { seededRandom } from "../support/random.js";
import { TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_127);

function config(publish: string): string {
  return tomlConfig({
    memory: {
      buffer_keep_recent_events: 0,
      buffer_max_events: 150,
      st_max_files: 1_000_000,
      lt_max_files: 1_000_000,
      st_max_total_bytes: 1_073_741_824,
      lt_max_total_bytes: 1_073_741_824,
      publish,
    },
  });
}

async function initRepo(publish: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-room-crash-");
  const r = await director(["init", "--json"], { cwd: repo.dir });
  if (r.code !== 0) throw new Error(describeResult(r));
  repo.writeConfig(config(publish));
  return repo;
}

describe.each(["pull-request", "work-tree"])(
  "kill -9 while compacting for room (%s)",
  (publish) => {
    it("loses no event and doubles none", async () => {
      const next = seededRandom(SEED + publish.length);
      const repo = await initRepo(publish);
      const inputs = dirs.dir("engram-room-crash-input-");
      const intent = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
      const files: string[] = [];
      let total = 0;
      const log: string[] = [];
      for (let i = 0; i < 8; i++) {
        const count = 300 + Math.floor(next() * 300);
        const lines = Array.from({ length: count }, (_, j) =>
          note("fact", `room crash ${i}-${j}`, { eventId: `rc-${i}-${j}`, topics: [`t${j % 5}`] }),
        );
        total += count;
        const file = join(inputs, `in-${i}.ndjson`);
        writeFileSync(file, ndjson(lines));
        files.push(file);
        const spawned = spawnBin(DIRECTOR_BIN, ["ingest", file, "--json"], { cwd: repo.dir });
        if (next() < 0.6) {
          const ms = Math.floor(next() * 8);
          killWhen(spawned, () => existsSync(intent), ms);
          log.push(`${i}: intent+${ms}ms`);
        } else {
          const ms = 200 + Math.floor(next() * 600);
          killAfter(spawned, ms);
          log.push(`${i}: delay ${ms}ms`);
        }
        const r = await spawned.done;
        log.push(`${i}: exit ${r.code ?? r.signal}`);
      }
      expect(
        log.some((l) => l.endsWith("exit SIGKILL")),
        log.join("; "),
      ).toBe(true);
      // Every input again, unkilled: what a killed ingest had not acknowledged comes in now,
      // what it had is a duplicate.
      for (const file of files) {
        const r = await director(["ingest", file, "--json"], { cwd: repo.dir });
        expect(r.code, `${log.join("; ")}\n${describeResult(r)}`).toBe(0);
      }
      const run = await director(["run", "--flush", "--json"], { cwd: repo.dir });
      expect(run.code, describeResult(run)).toBe(0);
      const json = jsonOf<{
        compacted_for_room: { events: number } | null;
        buffer: { events: number };
      }>(run);
      expect(json.compacted_for_room?.events ?? 0).toBeGreaterThan(0);
      expect(json.buffer.events).toBe(0);
      expect(existsSync(join(repo.dir, ".engram", "room"))).toBe(false);
      const verify = await director(["verify"], { cwd: repo.dir });
      expect(verify.code, describeResult(verify)).toBe(0);

      // Each event in exactly one engram: the events they count, and every fact once.
      const engrams = readEngrams(repo.dir).map((e) => e.engram);
      const counted = engrams.reduce((sum, e) => sum + e.provenance.event_count, 0);
      const facts = engrams.flatMap((e) => e.facts);
      expect(counted, log.join("; ")).toBe(total);
      expect(facts.length, log.join("; ")).toBe(total);
      expect(new Set(facts).size).toBe(total);
    }, 240_000);
  },
);
