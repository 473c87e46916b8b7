import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { git } from "../support/repo.js";

// Large enough that `director ingest` (built) uses its worker threads; the in-process run
// from the TypeScript sources has no compiled worker and stays single-threaded.
const LINES = 20_000;
const DIRECTOR = join(import.meta.dirname, "..", "..", "dist", "src", "cli", "director.js");
let root: string;
let input: string;

function line(i: number): string {
  if (i % 997 === 0) return "{ not json";
  if (i % 1499 === 0)
    return JSON.stringify({ schema_version: "agentbus-envelope/v1", message_type: "nope.v1" });
  const id = i % 1201 === 0 ? i - 1 : i; // some resends
  return JSON.stringify({
    schema_version: "agentbus-envelope/v1",
    message_type: i % 3 === 0 ? "memory_note.v1" : "heartbeat.v1",
    sent_at: "2026-11-22T10:00:00.000Z",
    sender: { role: "worker", id: `w${i % 17}` },
    seq: i,
    event_id: `e-${id}`,
    payload:
      i % 3 === 0
        ? {
            kind: "fact",
            text: `fact ${id} password=hunter${id} ${"x".repeat(300)}`,
            topics: [`t${i % 5}`],
          }
        : { stage: `stage-${i % 4}`, progress: (i % 10) / 10 },
  });
}

async function repoWithConfig(name: string): Promise<string> {
  const dir = join(root, name);
  // The command line works only in a git work tree.
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q"]);
  const ctx = await openContext({ repo: dir });
  initRepository(ctx);
  writeFileSync(join(dir, "config", "dev.toml"), "[memory]\nbuffer_max_bytes = 200_000_000\n");
  return dir;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "engram-pool-"));
  input = join(root, "in.ndjson");
  writeFileSync(input, Array.from({ length: LINES }, (_, i) => line(i + 1)).join("\r\n"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("ingest with worker threads", () => {
  it("writes the same journal and quarantine as a single-threaded ingest, in input order", async () => {
    process.env.SOURCE_DATE_EPOCH = "1795000000";
    try {
      const single = await repoWithConfig("single");
      const counts = await ingestSource(await openContext({ repo: single }), {
        path: input,
        name: "in.ndjson",
      });

      const pooled = await repoWithConfig("pooled");
      const run = spawnSync(
        process.execPath,
        [DIRECTOR, "ingest", input, "--repo", pooled, "--json"],
        {
          encoding: "utf8",
          // Two workers whatever the machine: by default there are none on two cores.
          env: { ...process.env, SOURCE_DATE_EPOCH: "1795000000", ENGRAM_INGEST_THREADS: "2" },
        },
      );
      expect(run.status, run.stderr).toBe(0);
      const { buffer: _buffer, noteLines: _noteLines, ...expected } = counts;
      expect(JSON.parse(run.stdout)).toEqual(expected);
      expect(expected.quarantined).toBe(Math.floor(LINES / 997) + Math.floor(LINES / 1499));
      // One password per accepted note (a third of the lines, less the bad ones and resends).
      expect(expected.redacted).toBeGreaterThan(LINES / 3 - 50);

      const read = (dir: string, file: string) => readFileSync(join(dir, ".engram", file), "utf8");
      expect(read(pooled, "buffer/journal.ndjson")).toBe(read(single, "buffer/journal.ndjson"));
      const quarantine = (dir: string) =>
        read(dir, "quarantine.ndjson")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l))
          .map(({ source: _s, key: _k, ...r }) => r);
      expect(quarantine(pooled)).toEqual(quarantine(single));
      expect(
        quarantine(single)
          .map((r) => r.line)
          .slice(0, 2),
      ).toEqual([997, 1499]);
      expect(read(pooled, "buffer/journal.ndjson")).not.toContain("hunter");
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
  });
});
