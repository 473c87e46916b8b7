/**
 * Invariant 5, nothing lost: `kill -9` of the Director at random points never loses an
 * acknowledged event and never duplicates one. The kill points come from a seeded PRNG
 * (ENGRAM_CRASH_SEED to reproduce, ENGRAM_CRASH_ITERATIONS to run more or fewer rounds);
 * the seed is printed with every failure.
 */

import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { readIntent } from "../../src/director/director-state.js";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  type Spawned,
  spawnBin,
  worker,
} from "../support/bins.js";
import { killAfter, killWhen, lockHeldBy, sizeOf } from "../support/crash.js";
import { type Envelope, heartbeat, type NoteKind, ndjson, note } from "../support/envelopes.js";
import { listFiles, readEngrams, readJournal } from "../support/memory.js";
import { Rng } from "../support/random.js";
import { TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const SEED = Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_122);
const ITERATIONS = Number(process.env.ENGRAM_CRASH_ITERATIONS ?? 26);

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

/** Budgets large enough that nothing is ever evicted, so every event stays accounted for. */
const CONFIG = tomlConfig({
  memory: {
    buffer_keep_recent_events: 3,
    st_max_files: 1_000_000,
    lt_max_files: 1_000_000,
    st_max_total_bytes: 1_073_741_824,
    lt_max_total_bytes: 1_073_741_824,
  },
});

const KINDS: readonly NoteKind[] = ["fact", "lesson", "decision", "convention", "incident"];
const TOPICS = ["auth", "ci", "db", "deploy", "docs", "api", "cache", "infra", "ui", "perf"];
/** Every note text carries one of these markers, so a test can find it in engrams cheaply. */
const MARKER = /\bk\d+[ne]\d+\b/g;

async function initRepo(): Promise<TempRepo> {
  const repo = dirs.repo("engram-crash-");
  const r = await director(["init", "--json"], { cwd: repo.dir });
  if (r.code !== 0) throw new Error(describeResult(r));
  repo.writeConfig(CONFIG);
  return repo;
}

/** What the test knows was acknowledged: event keys, and each note's marker and text. */
class Ledger {
  readonly keys = new Set<string>();
  readonly notes = new Map<string, string>();
  add(key: string, note?: { marker: string; text: string }): void {
    this.keys.add(key);
    if (note !== undefined) this.notes.set(note.marker, note.text);
  }
}

interface Batch {
  path: string;
  keys: string[];
  notes: Map<string, { marker: string; text: string }>;
}

/** N unique envelopes: notes with unique texts, and heartbeats. */
function makeBatch(dir: string, rng: Rng, tag: number, n: number): Batch {
  const lines: Envelope[] = [];
  const keys: string[] = [];
  const notes = new Map<string, { marker: string; text: string }>();
  for (let i = 0; i < n; i++) {
    const eventId = `c${tag}-${i}`;
    keys.push(eventIdKey(eventId));
    const sender = `w${rng.int(0, 3)}`;
    if (rng.chance(0.25)) {
      lines.push(heartbeat(`stage-${rng.int(0, 5)}`, { eventId, sender, seq: i }));
    } else {
      const marker = `k${tag}n${i}`;
      const text = `Observation ${marker}: ${rng.pick(TOPICS)} needs care ${rng.int(0, 1e9)}`;
      notes.set(eventIdKey(eventId), { marker, text });
      lines.push(
        note(rng.pick(KINDS), text, { eventId, sender, seq: i, topics: [rng.pick(TOPICS)] }),
      );
    }
  }
  const path = join(dir, `batch-${tag}.ndjson`);
  writeFileSync(path, ndjson(lines));
  return { path, keys, notes };
}

interface IngestJson {
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
}

function keysOfJournal(repo: TempRepo): Set<string> {
  return new Set(readJournal(repo.dir).events.map((e) => e.key));
}

interface Accounting {
  engramEvents: number;
  firstPartEvents: number;
  journalEvents: number;
  /** marker -> the texts (facts, decision titles, journal texts) that carry it. */
  found: Map<string, string[]>;
}

/** What memory holds: event counts of the engrams and the journal, and the markers they carry. */
function account(repo: TempRepo): Accounting {
  let engramEvents = 0;
  let firstPartEvents = 0;
  const found = new Map<string, string[]>();
  const collect = (text: string) => {
    for (const m of text.matchAll(MARKER)) {
      const list = found.get(m[0]);
      if (list) list.push(text);
      else found.set(m[0], [text]);
    }
  };
  for (const { engram } of readEngrams(repo.dir)) {
    engramEvents += engram.provenance.event_count;
    if (engram.provenance.part === undefined) firstPartEvents += engram.provenance.event_count;
    for (const text of [...engram.facts, ...engram.decisions.map((d) => d.title)]) {
      collect(text);
    }
  }
  const journal = readJournal(repo.dir);
  for (const e of journal.events) {
    collect(e.text ?? "");
  }
  return { engramEvents, firstPartEvents, journalEvents: journal.events.length, found };
}

/** The end state every crash scenario must reach after one normal recovery run. */
async function expectNothingLost(repo: TempRepo, ledger: Ledger, context: string): Promise<void> {
  const recovery = await director(["run", "--json"], { cwd: repo.dir });
  expect(recovery.code, `${context}: recovery run\n${describeResult(recovery)}`).toBe(0);
  const intent = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
  expect.soft(existsSync(intent), `${context}: cycle-intent.json left after recovery`).toBe(false);

  const [verify, check] = await Promise.all([
    director(["verify"], { cwd: repo.dir }),
    worker(["check", "--json"], { cwd: repo.dir }),
  ]);
  expect.soft(verify.code, `${context}: director verify\n${describeResult(verify)}`).toBe(0);
  expect.soft(check.code, `${context}: worker check\n${describeResult(check)}`).toBe(0);

  const journal = readJournal(repo.dir);
  expect.soft(journal.bad, `${context}: torn or unparseable journal lines`).toEqual([]);
  const journalKeys = journal.events.map((e) => e.key);
  expect
    .soft(new Set(journalKeys).size, `${context}: duplicate keys in the journal`)
    .toBe(journalKeys.length);
  const strangers = journalKeys.filter((k) => !ledger.keys.has(k));
  expect.soft(strangers, `${context}: journal events never acknowledged`).toEqual([]);

  const a = account(repo);
  expect
    .soft(
      a.engramEvents + a.journalEvents,
      `${context}: sum of provenance.event_count (${a.engramEvents}; counting first parts only: ${a.firstPartEvents}) + journal lines (${a.journalEvents}) must equal the ${ledger.keys.size} acknowledged events`,
    )
    .toBe(ledger.keys.size);
  const lost = [...ledger.notes].filter(
    ([marker, text]) => !(a.found.get(marker) ?? []).some((t) => t.includes(text)),
  );
  expect
    .soft(
      lost.slice(0, 20).map(([, text]) => text),
      `${context}: ${lost.length} acknowledged notes found nowhere`,
    )
    .toEqual([]);
}

describe("kill -9 of the Director", () => {
  let seedNote = "";
  beforeAll(() => {
    seedNote = `ENGRAM_CRASH_SEED=${SEED} ENGRAM_CRASH_ITERATIONS=${ITERATIONS}`;
  });

  it("at random points of ingest and run loses no acknowledged event and duplicates none", async () => {
    onTestFailed(() => {
      console.error(`crash test failed; reproduce with ${seedNote}`);
    });
    const rng = new Rng(SEED);
    const repo = await initRepo();
    const inputs = dirs.dir("engram-crash-input-");
    const ledger = new Ledger();
    const journalPath = join(repo.dir, ".engram", "buffer", "journal.ndjson");
    const intentPath = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
    const lockPath = join(repo.dir, ".engram", "director.lock");
    // Typical durations, refined as commands complete: random delays span them.
    const typical = { ingest: 900, run: 900 };
    const log: string[] = [];
    let kills = 0;

    const trigger = (spawned: Spawned, kind: "ingest" | "run"): string => {
      const mode = rng.pick(["delay", "delay", "file", "lock"] as const);
      if (mode === "delay") {
        // Mostly after the ~300 ms a bin needs to start; now and then before it gets going.
        const ms = rng.chance(0.2)
          ? rng.int(0, 300)
          : rng.int(300, Math.max(400, Math.round(typical[kind] * 1.3)));
        killAfter(spawned, ms);
        return `delay ${ms}ms`;
      }
      if (mode === "lock") {
        const ms = rng.int(0, 60);
        killWhen(spawned, () => lockHeldBy(lockPath, spawned.child.pid), ms);
        return `lock+${ms}ms`;
      }
      if (kind === "ingest") {
        const before = sizeOf(journalPath);
        const ms = rng.int(0, 3);
        killWhen(spawned, () => sizeOf(journalPath) !== before, ms);
        return `journal-growth+${ms}ms`;
      }
      const ms = rng.int(0, 12);
      killWhen(spawned, () => existsSync(intentPath), ms);
      return `intent+${ms}ms`;
    };
    const outcome = (r: BinResult, what: string): "done" | "killed" => {
      if (r.signal === "SIGKILL") {
        kills++;
        return "killed";
      }
      expect(r.code, `${what}: ${seedNote}\n${describeResult(r)}`).toBe(0);
      return "done";
    };

    for (let iter = 0; iter < ITERATIONS; iter++) {
      if (iter === 0 || rng.chance(0.5)) {
        const batch = makeBatch(inputs, rng, iter, rng.int(300, 3000));
        const spawned = spawnBin(DIRECTOR_BIN, ["ingest", batch.path, "--json"], { cwd: repo.dir });
        const how = iter === 0 ? "no kill" : trigger(spawned, "ingest");
        const r = await spawned.done;
        const what = `iteration ${iter}: ingest of ${batch.keys.length} (${how})`;
        if (outcome(r, what) === "done") {
          typical.ingest = r.ms;
          const counts = jsonOf<IngestJson>(r);
          expect(counts, `${what}: ${seedNote}`).toEqual({
            accepted: batch.keys.length,
            duplicates: 0,
            quarantined: 0,
            redacted: 0,
          });
          log.push(`${what}: completed in ${r.ms}ms`);
        } else {
          // Not acknowledged: ingesting the file again must accept exactly what is missing.
          const stored = keysOfJournal(repo);
          const present = batch.keys.filter((k) => stored.has(k)).length;
          const again = jsonOf<IngestJson>(
            await director(["ingest", batch.path, "--json"], { cwd: repo.dir }),
          );
          expect(
            again,
            `${what}: re-ingest after the kill (${present} were stored); ${seedNote}`,
          ).toEqual({
            accepted: batch.keys.length - present,
            duplicates: present,
            quarantined: 0,
            redacted: 0,
          });
          log.push(`${what}: killed after ${r.ms}ms with ${present} stored`);
        }
        for (const key of batch.keys) ledger.add(key, batch.notes.get(key));
      } else {
        const emits = rng.int(1, 2);
        const results = await Promise.all(
          Array.from({ length: emits }, (_, j) => {
            const marker = `k${iter}e${j}`;
            const text = `Emitted ${marker}: remember ${rng.int(0, 1e9)}`;
            const args = ["emit", "--kind", rng.pick(KINDS), "--text", text];
            return worker([...args, "--topic", rng.pick(TOPICS), "--json"], {
              cwd: repo.dir,
              env: { ENGRAM_WORKER_ID: `emitter-${j}` },
            }).then((r) => ({ r, marker, text }));
          }),
        );
        for (const { r, marker, text } of results) {
          const { event_id } = jsonOf<{ event_id: string }>(r);
          ledger.add(eventIdKey(event_id), { marker, text });
        }
        const spawned = spawnBin(DIRECTOR_BIN, ["run", "--force", "--json"], { cwd: repo.dir });
        const how = trigger(spawned, "run");
        const r = await spawned.done;
        const what = `iteration ${iter}: run --force after ${emits} emit(s) (${how})`;
        if (outcome(r, what) === "done") {
          typical.run = r.ms;
          const json = jsonOf<{ catalog_version: number; compacted_events: number }>(r);
          log.push(`${what}: completed in ${r.ms}ms, ${json.compacted_events} compacted`);
        } else {
          log.push(`${what}: killed after ${r.ms}ms`);
        }
      }
    }

    onTestFailed(() => {
      console.error(log.join("\n"));
    });
    if (process.env.ENGRAM_CRASH_VERBOSE) console.log(log.join("\n"));
    await expectNothingLost(repo, ledger, seedNote);
    // The rounds must have exercised crashes at all.
    expect(kills, `${seedNote}\n${log.join("\n")}`).toBeGreaterThan(ITERATIONS / 4);
  });

  it("while run --force writes: the recovery run finishes the interrupted cycle from cycle-intent.json", async () => {
    onTestFailed(() => {
      console.error(`crash test failed; reproduce with ENGRAM_CRASH_SEED=${SEED}`);
    });
    const rng = new Rng(SEED ^ 0x5eed);
    const repo = await initRepo();
    const inputs = dirs.dir("engram-crash-input-");
    const ledger = new Ledger();
    const intentPath = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
    const lockPath = join(repo.dir, ".engram", "director.lock");

    const feed = async (tag: number, n: number) => {
      const batch = makeBatch(inputs, rng, tag, n);
      const counts = jsonOf<IngestJson>(
        await director(["ingest", batch.path, "--json"], { cwd: repo.dir }),
      );
      expect(counts.accepted).toBe(n);
      for (const key of batch.keys) ledger.add(key, batch.notes.get(key));
    };
    await feed(1000, 5000);

    const log: string[] = [];
    let interruptedCycles = 0;
    let interruptedRecoveries = 0;
    for (let attempt = 0; attempt < 16; attempt++) {
      const pending = existsSync(intentPath);
      const spawned = spawnBin(DIRECTOR_BIN, ["run", "--force", "--json"], { cwd: repo.dir });
      if (pending) {
        // A cycle is pending: this process recovers it first, right after taking the lock.
        killWhen(spawned, () => lockHeldBy(lockPath, spawned.child.pid), rng.int(0, 40));
      } else {
        killWhen(spawned, () => existsSync(intentPath), rng.int(0, 8));
      }
      const r = await spawned.done;
      const left = existsSync(intentPath);
      log.push(
        `attempt ${attempt}: ${pending ? "recovery" : "cycle"} ${r.signal ?? `exit ${r.code}`}, intent ${left ? "left" : "absent"}`,
      );
      if (r.signal !== "SIGKILL") {
        expect(r.code, describeResult(r)).toBe(0);
        // The cycle finished: give the next attempt something to compact.
        await feed(1001 + attempt, 3000);
        continue;
      }
      if (left && !pending) interruptedCycles++;
      if (left && pending) interruptedRecoveries++;
      // Enough: a cycle and (if the timing allows) some recoveries were interrupted.
      if (left && interruptedCycles >= 1 && (interruptedRecoveries >= 2 || attempt >= 10)) break;
    }
    onTestFailed(() => {
      console.error(log.join("\n"));
    });
    expect(interruptedCycles, log.join("\n")).toBeGreaterThanOrEqual(1);
    expect(existsSync(intentPath), `the last kill left a cycle to finish\n${log.join("\n")}`).toBe(
      true,
    );

    const intent = readIntent(intentPath);
    await expectNothingLost(repo, ledger, `seed ${SEED}`);
    // The interrupted cycle was finished as planned: its files are there, whole.
    for (const w of intent.writes) {
      const full = join(repo.dir, w.path);
      expect
        .soft(existsSync(full) && readFileSync(full, "utf8") === w.text, `${w.path} as planned`)
        .toBe(true);
    }
    for (const e of readJournal(repo.dir).events) {
      expect
        .soft(e.seq, "an event the interrupted cycle compacted is still buffered")
        .toBeGreaterThan(intent.through_seq);
    }
  });
});

describe("crash states of append-only files", () => {
  it("a quarantine record torn by a crash does not swallow the next record", async () => {
    const repo = await initRepo();
    const inputs = dirs.dir("engram-crash-input-");
    const bad = (name: string) => {
      const path = join(inputs, name);
      writeFileSync(path, "{not json\n");
      return path;
    };
    const quarantine = join(repo.dir, ".engram", "quarantine.ndjson");
    expect(
      jsonOf<IngestJson>(await director(["ingest", bad("a.ndjson"), "--json"], { cwd: repo.dir }))
        .quarantined,
    ).toBe(1);
    // A Director killed while appending a record leaves part of a line.
    const whole = readFileSync(quarantine, "utf8");
    appendFileSync(quarantine, whole.slice(0, 40));
    expect(
      jsonOf<IngestJson>(await director(["ingest", bad("b.ndjson"), "--json"], { cwd: repo.dir }))
        .quarantined,
    ).toBe(1);

    const records = readFileSync(quarantine, "utf8")
      .split("\n")
      .filter((l) => l.length > 0)
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as { source: string }];
        } catch {
          return [];
        }
      });
    expect(records.map((r) => r.source.replace(/^.*\//, ""))).toEqual(["a.ndjson", "b.ndjson"]);
    const status = jsonOf<{ quarantine: { records: number } }>(
      await director(["status", "--json"], { cwd: repo.dir }),
    );
    expect(status.quarantine.records).toBe(2);
  });

  it("a seen.keys line torn by a crash mid-cycle does not let a compacted event back in", async () => {
    const rng = new Rng(SEED ^ 0x7ea5);
    const repo = await initRepo();
    const inputs = dirs.dir("engram-crash-input-");
    const intentPath = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
    const seenPath = join(repo.dir, ".engram", "buffer", "seen.keys");
    const ledger = new Ledger();

    // Kill a cycle once its intent is durable (retrying with more events if it finishes first).
    let batch: Batch | undefined;
    for (let attempt = 0; attempt < 6 && !existsSync(intentPath); attempt++) {
      batch = makeBatch(inputs, rng, 2000 + attempt, 2000);
      expect(
        jsonOf<IngestJson>(await director(["ingest", batch.path, "--json"], { cwd: repo.dir }))
          .accepted,
      ).toBe(2000);
      for (const key of batch.keys) ledger.add(key, batch.notes.get(key));
      const spawned = spawnBin(DIRECTOR_BIN, ["run", "--force", "--json"], { cwd: repo.dir });
      killWhen(spawned, () => existsSync(intentPath), 0);
      await spawned.done;
    }
    expect(existsSync(intentPath), "a cycle was interrupted after its intent").toBe(true);
    const current = batch as Batch;

    // The state of a crash while dropThrough appends the keys of the compacted events: every
    // planned file written, the journal not yet rewritten, seen.keys ending in part of a key.
    const intent = readIntent(intentPath);
    for (const w of intent.writes) {
      const full = join(repo.dir, w.path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, w.text);
    }
    // Temporary files of the kill above are not part of the crash modelled here.
    for (const rel of listFiles(join(repo.dir, "memory"), repo.dir)) {
      if (rel.endsWith(".tmp")) unlinkSync(join(repo.dir, rel));
    }
    const seen = existsSync(seenPath) ? readFileSync(seenPath, "utf8") : "";
    const compactedNow = readJournal(repo.dir)
      .events.filter((e) => e.seq <= intent.through_seq && !seen.split("\n").includes(e.key))
      .map((e) => e.key);
    const first = compactedNow[0] as string;
    expect(first).toBeDefined();
    appendFileSync(seenPath, first.slice(0, first.length - 2));

    // Recovery, then the writer resends the whole batch: every event is a duplicate.
    const recovery = await director(["run", "--json"], { cwd: repo.dir });
    expect(recovery.code, describeResult(recovery)).toBe(0);
    const again = jsonOf<IngestJson>(
      await director(["ingest", current.path, "--json"], { cwd: repo.dir }),
    );
    expect(again, `resend after recovery; ${first} was the torn key`).toEqual({
      accepted: 0,
      duplicates: current.keys.length,
      quarantined: 0,
      redacted: 0,
    });
    await expectNothingLost(repo, ledger, `seed ${SEED}`);
  });
});
