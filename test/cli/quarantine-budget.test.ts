/**
 * The quarantine on a disk budget (issue 40): a flood of two-byte lines once became a record
 * of ~270 bytes each (1 MB of `x` lines: 143 MB), with no cap. Now a run of alike lines is one
 * record, the file rotates within `[quarantine] max_bytes` and `max_records`, one sender holds
 * at most `sender_share` of it, and what was dropped is counted. Through the bin.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { jsonOf } from "../support/bins.js";
import { type TempRepo, tomlConfig } from "../support/repo.js";
import {
  dir,
  expectExit,
  type IngestJson,
  initRepo,
  inputFile,
  useCliHarness,
} from "./cli-harness.js";

useCliHarness();

interface QuarantineStatus {
  records: number;
  lines: number;
  dropped: { lines: number; bytes: number; by_sender: Record<string, { lines: number }> };
}

async function quarantineStatus(repo: TempRepo): Promise<QuarantineStatus> {
  const r = await dir(repo, ["status", "--json"]);
  return jsonOf<{ quarantine: QuarantineStatus }>(r).quarantine;
}

interface Kept {
  source: string;
  bytes: number;
  count?: number;
}

function records(repo: TempRepo): Kept[] {
  const out: Kept[] = [];
  for (const name of ["quarantine.1.ndjson", "quarantine.ndjson"]) {
    const path = repo.path(".engram", name);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      if (line !== "") out.push(JSON.parse(line));
    }
  }
  return out;
}

function quarantineBytes(repo: TempRepo): number {
  let total = 0;
  for (const name of ["quarantine.1.ndjson", "quarantine.ndjson"]) {
    const path = repo.path(".engram", name);
    if (existsSync(path)) total += statSync(path).size;
  }
  return total;
}

async function withQuarantineConfig(keys: Record<string, number>): Promise<TempRepo> {
  return initRepo(tomlConfig({ quarantine: keys }));
}

/** Lines that are rejected for different reasons in turn, so no two neighbours make a run. */
function unlikeLines(n: number): string[] {
  return Array.from({ length: n }, (_, i) => (i % 2 === 0 ? "x" : "{}"));
}

describe("the quarantine's disk budget", () => {
  it("keeps a flood of two-byte lines as a few small records, and counts every line", async () => {
    const repo = await initRepo();
    const file = inputFile(
      "flood.ndjson",
      Array.from({ length: 50_000 }, () => "x"),
    );
    const r = await dir(repo, ["ingest", file, "--json"], { timeoutMs: 120_000 });
    expectExit(r, 0);
    expect(jsonOf<IngestJson>(r).quarantined).toBe(50_000);
    expect(quarantineBytes(repo)).toBeLessThan(2048);
    const status = await quarantineStatus(repo);
    expect(status.lines).toBe(50_000);
    // Read again: the same run is not recorded twice.
    expectExit(await dir(repo, ["ingest", file, "--json"], { timeoutMs: 120_000 }), 0);
    expect((await quarantineStatus(repo)).lines).toBe(50_000);
  }, 240_000);

  it("rotates within max_records and max_bytes and counts what it dropped", async () => {
    const repo = await withQuarantineConfig({
      max_records: 16,
      max_bytes: 65_536,
      sender_share: 1,
    });
    const file = inputFile("unlike.ndjson", unlikeLines(400));
    expectExit(await dir(repo, ["ingest", file, "--json"]), 0);
    const kept = records(repo);
    expect(kept.length).toBeLessThanOrEqual(16);
    expect(quarantineBytes(repo)).toBeLessThanOrEqual(65_536);
    const status = await quarantineStatus(repo);
    expect(status.dropped.lines).toBeGreaterThan(0);
    // Nothing silently lost: what is kept and what is counted as dropped are every line.
    expect(status.lines + status.dropped.lines).toBe(400);
    const keptBytes = kept.reduce((sum, r) => sum + r.bytes, 0);
    expect(keptBytes + status.dropped.bytes).toBe(200 * 1 + 200 * 2);
    const dropped = JSON.parse(
      readFileSync(repo.path(".engram", "quarantine-dropped.json"), "utf8"),
    );
    expect(dropped).toMatchObject({ lines: status.dropped.lines, bytes: status.dropped.bytes });
    const human = await dir(repo, ["status"]);
    expect(human.stdout).toMatch(/over its budget: \d+ line\(s\) dropped, \d+ bytes/);
  }, 120_000);

  it("lets one sender hold at most its share: another's records are not pushed out", async () => {
    const repo = await withQuarantineConfig({ max_records: 16 });
    const quiet = inputFile("quiet.ndjson", unlikeLines(2));
    const flood = inputFile("flood.ndjson", unlikeLines(400));
    expectExit(await dir(repo, ["ingest", quiet, "--json"]), 0);
    expectExit(await dir(repo, ["ingest", flood, "--json"]), 0);
    const kept = records(repo);
    expect(kept.filter((r) => r.source.endsWith("quiet.ndjson"))).toHaveLength(2);
    // Half of 16 records a generation, a quarter of that for one sender.
    expect(kept.filter((r) => r.source.endsWith("flood.ndjson")).length).toBeLessThanOrEqual(2);
    const status = await quarantineStatus(repo);
    expect(status.dropped.lines).toBe(398);
    expect(Object.keys(status.dropped.by_sender)).toEqual([flood]);
  }, 120_000);
});
