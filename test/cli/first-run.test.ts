/**
 * A newcomer's first runs, through the built bins: a run that compacts nothing says why and
 * what would; `--flush` compacts the newest window too; a notes file given to `director
 * ingest` is named as the mistake it is, and reading it again does not grow the quarantine;
 * an oversized line's reason names the limit it broke.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { NotCompacted } from "../../src/core/compaction/decide.js";
import type { QuarantineRecord } from "../../src/state/quarantine.js";
import { type BinResult, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import { TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

interface RunJson {
  compaction: string;
  compacted_events: number;
  engrams_written: number;
  not_compacted: NotCompacted | null;
  buffer: { events: number };
}

/** A repository after `director init`, with the default config unless `config` is given. */
async function initRepo(config?: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-first-run-");
  if (config !== undefined) repo.writeConfig(config);
  const r = await director(["init"], { cwd: repo.dir });
  expect(r.code, describeResult(r)).toBe(0);
  return repo;
}

const EPOCH = { SOURCE_DATE_EPOCH: "1800000000" };

async function emit(repo: TempRepo, text: string): Promise<void> {
  const args = ["emit", "--kind", "lesson", "--text", text, "--topic", "tour"];
  const r = await worker(args, { cwd: repo.dir, env: EPOCH });
  expect(r.code, describeResult(r)).toBe(0);
}

async function run(repo: TempRepo, ...flags: string[]): Promise<BinResult> {
  return director(["run", ...flags], { cwd: repo.dir, env: EPOCH });
}

function quarantine(repo: TempRepo): QuarantineRecord[] {
  let text = "";
  try {
    text = readFileSync(repo.path(".engram", "quarantine.ndjson"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as QuarantineRecord);
}

describe("a run that compacts nothing says why", () => {
  it("with the defaults, --force keeps the newest window and says so; --flush compacts it", async () => {
    const repo = await initRepo();
    const empty = jsonOf<RunJson>(await run(repo, "--flush", "--json"));
    expect(empty.compaction).toBe("none");
    expect(empty.not_compacted?.cause).toBe("empty");
    for (const text of ["Use zod for every schema", "Run the fs tests in forked workers"]) {
      await emit(repo, text);
    }
    const forced = jsonOf<RunJson>(await run(repo, "--force", "--json"));
    expect(forced.compacted_events).toBe(0);
    expect(forced.not_compacted).toEqual({
      cause: "newest-window",
      reason: "all 2 events are inside the newest window (buffer_keep_recent_events = 200)",
      hint: "director run --flush compacts the whole buffer now",
    });

    const text = await run(repo, "--force");
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toContain(
      "nothing compacted: all 2 events are inside the newest window (buffer_keep_recent_events = 200); director run --flush",
    );

    const flushed = jsonOf<RunJson>(await run(repo, "--flush", "--json"));
    expect(flushed).toMatchObject({
      compaction: "flushed",
      compacted_events: 2,
      not_compacted: null,
    });
    expect(flushed.engrams_written).toBeGreaterThan(0);
    expect(flushed.buffer.events).toBe(0);
    const recall = await worker(["recall", "forked workers"], { cwd: repo.dir });
    expect(recall.stdout, describeResult(recall)).toContain("Run the fs tests in forked workers");
  });

  it("under the soft trigger, and within the rate limit, it names the keys that decided", async () => {
    const memory = {
      buffer_keep_recent_events: 0,
      buffer_max_events: 10,
      buffer_high_water_ratio: 0.8,
      buffer_low_water_ratio: 0.5,
    };
    const repo = await initRepo(tomlConfig({ memory }));
    await emit(repo, "one lesson");
    const under = jsonOf<RunJson>(await run(repo, "--json"));
    expect(under.compacted_events).toBe(0);
    expect(under.not_compacted?.cause).toBe("under-trigger");
    expect(under.not_compacted?.reason).toContain("buffer_high_water_ratio = 0.8");
    expect(under.not_compacted?.reason).toContain("buffer_max_events = 10");
    expect(under.not_compacted?.hint).toContain("director run --force");

    for (let i = 0; i < 8; i++) await emit(repo, `lesson number ${i}`);
    const soft = jsonOf<RunJson>(await run(repo, "--json"));
    expect(soft.compaction).toBe("soft-limit");
    expect(soft.not_compacted).toBeNull();
    for (let i = 0; i < 5; i++) await emit(repo, `later lesson ${i}`);
    const limited = jsonOf<RunJson>(await run(repo, "--json"));
    expect(limited.compaction).toBe("rate-limited");
    expect(limited.not_compacted?.cause).toBe("rate-limited");
    expect(limited.not_compacted?.reason).toContain("compaction_min_interval_seconds = 300");
  });
});

describe("director ingest of a worker notes file", () => {
  const NOTES = [
    { kind: "decision", text: "Use zod for every schema", rationale: "one source of truth" },
    { kind: "lesson", text: "Run the fs tests in forked workers", topics: ["testing"] },
    { kind: "fact", text: "The API listens on 8080", links: ["src/server.ts"] },
  ];

  it("names the mistake and the command to use, and quarantines each line once", async () => {
    const repo = await initRepo();
    const file = repo.write("notes.ndjson", ndjson(NOTES));
    const first = await director(["ingest", "notes.ndjson", "--json"], { cwd: repo.dir });
    expect(jsonOf(first)).toMatchObject({ accepted: 0, quarantined: 3 });
    expect(first.stderr).toContain("notes.ndjson: 3 line(s) are worker notes");
    expect(first.stderr).toContain("worker emit --from notes.ndjson");
    // Three lines in a row, rejected alike: one record of the run.
    const records = quarantine(repo);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ line: 1, last_line: 3, count: 3 });
    for (const record of records) {
      expect(record.reason).toBe("invalid-envelope");
      expect(record.detail).toContain("worker emit --from FILE");
    }

    const again = await director(["ingest", "notes.ndjson"], { cwd: repo.dir });
    expect(again.code, describeResult(again)).toBe(0);
    expect(again.stderr).toContain("worker emit --from notes.ndjson");
    expect(quarantine(repo)).toHaveLength(1);
    const status = jsonOf<{ quarantine: { records: number; lines: number } }>(
      await director(["status", "--json"], { cwd: repo.dir }),
    );
    expect(status.quarantine).toMatchObject({ records: 1, lines: 3 });

    // A line changed in place is a new rejection; envelopes in the file raise no hint.
    writeFileSync(file, ndjson([{ ...NOTES[0], text: "changed" }, note("fact", "an envelope")]));
    const mixed = await director(["ingest", "notes.ndjson", "--json"], { cwd: repo.dir });
    expect(jsonOf(mixed)).toMatchObject({ accepted: 1, quarantined: 1 });
    expect(mixed.stderr).toContain("1 line(s) are worker notes");
    expect(quarantine(repo)).toHaveLength(2);

    // The command it suggests takes the file as it is.
    writeFileSync(file, ndjson(NOTES));
    const sent = await worker(["emit", "--from", "notes.ndjson"], { cwd: repo.dir });
    expect(sent.code, describeResult(sent)).toBe(0);
  });

  it("an envelope file raises no notes warning", async () => {
    const repo = await initRepo();
    repo.write("events.ndjson", ndjson([note("fact", "a"), '{"kind": 3}']));
    const r = await director(["ingest", "events.ndjson"], { cwd: repo.dir });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).not.toContain("worker notes");
  });
});

describe("an oversized line", () => {
  it("is quarantined with the limit it broke, whether it ends or never does", async () => {
    const repo = await initRepo();
    const big = note("fact", "x".repeat(70_000));
    const endless = `{"schema_version":"agentbus-envelope/v1","payload":{"text":"${"y".repeat(1_300_000)}`;
    repo.write("big.ndjson", `${ndjson([big, note("fact", "small")])}${endless}`);
    const r = await director(["ingest", "big.ndjson", "--json"], { cwd: repo.dir });
    expect(jsonOf(r)).toMatchObject({ accepted: 1, quarantined: 2 });
    const records = quarantine(repo);
    expect(records.map((q) => [q.line, q.reason])).toEqual([
      [1, "oversized"],
      [3, "oversized"],
    ]);
    for (const record of records) {
      expect(record.detail).toContain("agent_bus.max_message_bytes = 65536");
      expect(record.detail).not.toContain("line longer than");
    }
  });
});
