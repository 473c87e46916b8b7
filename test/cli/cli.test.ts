/**
 * Integration through the real bins (`dist/src/cli/{director,worker}.js`, built by `npm test`)
 * on real temporary git repositories: every command and its documented contract.
 */
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import {
  assertBuilt,
  type BinOptions,
  type BinResult,
  describeResult,
  director,
  type Env,
  jsonOf,
  worker,
} from "../support/bins.js";
import {
  type Envelope,
  envelope,
  fakeGithubToken,
  heartbeat,
  ndjson,
  note,
} from "../support/envelopes.js";
import {
  filesContaining,
  listFiles,
  readCatalogFile,
  readEngrams,
  readJournal,
  readNdjson,
  snapshot,
} from "../support/memory.js";
import { gitIgnores, TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const dirs = new TempDirs();
/** A repository after `git init` and `director init`, copied for each test that needs one. */
let template: TempRepo;
beforeAll(async () => {
  assertBuilt();
  template = dirs.repo("engram-template-");
  const r = await director(["init", "--json"], { cwd: template.dir });
  if (r.code !== 0) throw new Error(`director init failed: ${describeResult(r)}`);
});
afterAll(() => dirs.cleanup());

type Opts = Omit<BinOptions, "cwd"> & { env?: Env };
const dir = (repo: TempRepo, args: string[], opts: Opts = {}) =>
  director(args, { cwd: repo.dir, ...opts });
const wrk = (repo: TempRepo, args: string[], opts: Opts = {}) =>
  worker(args, { cwd: repo.dir, ...opts });

function expectExit(r: BinResult, code: number): void {
  expect(r.code, describeResult(r)).toBe(code);
}

/** A git repository with `director init` run and, if given, `config/dev.toml` replaced. */
async function initRepo(config?: string): Promise<TempRepo> {
  const repo = dirs.copy(template);
  if (config !== undefined) repo.writeConfig(config);
  return repo;
}

/** Writes NDJSON to a file outside the repository (so a secret in it is not "in the repo"). */
function inputFile(name: string, lines: readonly (Envelope | string)[]): string {
  const path = join(dirs.dir("engram-input-"), name);
  writeFileSync(path, ndjson(lines));
  return path;
}

interface IngestJson {
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
}

interface RunJson {
  catalog_version: number;
  catalog_hash: string;
  changed: boolean;
  engrams_written: number;
  engrams_evicted: number;
  engrams_promoted: number;
  compacted_events: number;
  compaction: string;
  written: string[];
  evicted: string[];
  buffer: { events: number; bytes: number };
  tiers: { st: { files: number; bytes: number }; lt: { files: number; bytes: number } };
  drained: { files: number; accepted: number };
}

interface QuarantineRecord {
  source: string;
  line: number;
  reason: string;
  detail: string;
  excerpt: string;
}

async function ingest(repo: TempRepo, file: string, env?: Env): Promise<IngestJson> {
  return jsonOf<IngestJson>(await dir(repo, ["ingest", file, "--json"], { env }));
}

async function runCycle(repo: TempRepo, args: string[] = [], env?: Env): Promise<RunJson> {
  return jsonOf<RunJson>(await dir(repo, ["run", "--json", ...args], { env }));
}

async function expectVerified(repo: TempRepo): Promise<void> {
  const r = await dir(repo, ["verify"]);
  expectExit(r, 0);
}

/** Files under memory/<scope> except .gitkeep: the engrams (and anything stray). */
function engramFiles(repo: TempRepo, scope: "st" | "lt"): string[] {
  return listFiles(repo.path("memory", scope), repo.dir).filter((p) => !p.endsWith("/.gitkeep"));
}

function spoolFiles(repo: TempRepo): string[] {
  try {
    return readdirSync(repo.path(".engram", "spool")).filter((n) => n.endsWith(".ndjson"));
  } catch {
    return [];
  }
}

const EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

describe.concurrent("director init", () => {
  it("lays out config, memory skeleton, catalog, MEMORY.md and ignores the state folder; a second run changes nothing", async () => {
    const repo = dirs.repo();
    const first = jsonOf<{ created: string[]; kept: string[] }>(
      await dir(repo, ["init", "--json"]),
    );
    for (const path of [
      "config/dev.toml",
      "memory/st/.gitkeep",
      "memory/lt/.gitkeep",
      "memory/catalog.json",
      "MEMORY.md",
    ]) {
      expect(first.created).toContain(path);
      expect(statSync(repo.path(path)).isFile()).toBe(true);
    }
    expect(first.kept).toEqual([]);
    const gitignore = readFileSync(repo.path(".gitignore"), "utf8").split("\n");
    expect(gitignore).toContain("/.engram/");
    expect(gitIgnores(repo.dir, ".engram/buffer/journal.ndjson")).toBe(true);
    expect(gitIgnores(repo.dir, "memory/catalog.json")).toBe(false);
    const catalog = readCatalogFile(repo.dir);
    expect(catalog.catalog_version).toBe(0);
    expect(catalog.entries).toEqual([]);

    const files = (r: TempRepo) => listFiles(r.dir, r.dir, [".git"]);
    const before = snapshot(repo.dir, files(repo));
    const mtimes = new Map(files(repo).map((p) => [p, statSync(repo.path(p)).mtimeMs]));
    const second = jsonOf<{ created: string[]; kept: string[] }>(
      await dir(repo, ["init", "--json"]),
    );
    expect(second.created).toEqual([]);
    for (const path of ["config/dev.toml", "memory/catalog.json", "MEMORY.md", ".gitignore"]) {
      expect(second.kept).toContain(path);
    }
    expect(files(repo)).toEqual([...before.keys()]);
    expect(snapshot(repo.dir, files(repo))).toEqual(before);
    for (const [path, mtime] of mtimes) expect(statSync(repo.path(path)).mtimeMs, path).toBe(mtime);

    // A fresh repository is consistent.
    const [verify, check] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify, 0);
    expect(jsonOf<{ ok: boolean }>(check).ok).toBe(true);
  });
});

describe.concurrent("worker emit", () => {
  it("spools one memory_note.v1 envelope per call and prints its event_id", async () => {
    const repo = await initRepo();
    const args = ["emit", "--kind", "lesson", "--text", "Pin the Node version in CI"];
    const [a, b] = await Promise.all([
      wrk(
        repo,
        [
          ...args,
          "--topic",
          "ci",
          "--topic",
          "node",
          "--link",
          "#12",
          "--link",
          "src/a.ts",
          "--json",
        ],
        {
          env: { ENGRAM_WORKER_ID: "w-emit" },
        },
      ),
      wrk(repo, [...args, "--json"]),
    ]);
    const ja = jsonOf<{ event_id: string; spooled: boolean; path: string }>(a);
    const jb = jsonOf<{ event_id: string; spooled: boolean; path: string }>(b);
    expect(ja.spooled).toBe(true);
    expect(typeof ja.event_id).toBe("string");
    expect(ja.event_id.length).toBeGreaterThan(0);
    expect(ja.event_id).not.toBe(jb.event_id);
    expect(spoolFiles(repo)).toHaveLength(2);
    const [env] = readNdjson<Envelope & { payload: Record<string, unknown> }>(ja.path);
    expect(env).toMatchObject({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_note.v1",
      event_id: ja.event_id,
      sender: { role: "worker", id: "w-emit" },
      payload: {
        kind: "lesson",
        text: "Pin the Node version in CI",
        topics: ["ci", "node"],
        links: ["#12", "src/a.ts"],
      },
    });
  });

  it("refuses bad input with exit 2 and a message naming the flag, spooling nothing", async () => {
    const repo = await initRepo();
    const cases: [string[], string][] = [
      [["--kind", "nope", "--text", "x"], "--kind"],
      [["--kind", "fact"], "--text"],
      [["--text", "x"], "--kind"],
      [["--kind", "fact", "--text", "x", "--confidence", "2"], "--confidence"],
      [["--kind", "fact", "--text", "x", "--confidence", "high"], "--confidence"],
    ];
    const results = await Promise.all(
      cases.map(([args]) => wrk(repo, ["emit", ...args, "--json"])),
    );
    results.forEach((r, i) => {
      const flag = cases[i]?.[1] as string;
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain(flag);
    });
    expect(spoolFiles(repo)).toEqual([]);
  });
});

describe.concurrent("worker emit --from", () => {
  const notes = [
    '{"kind":"lesson","text":"Batch the notes of a task","topics":["bus"],"links":["#12"]}',
    "",
    '{"kind":"decision","text":"Use NATS across hosts","rationale":"CI runners","issue":12}',
    '{"kind":"fact","text":"the staging password is hunter2-staging","privacy":"sensitive"}',
  ];

  it("sends every note of a file in one delivery, sealing a sensitive one before it leaves", async () => {
    const repo = await initRepo();
    const file = inputFile("notes.ndjson", notes);
    const r = await wrk(repo, ["emit", "--from", file, "--json"], {
      env: { ENGRAM_WORKER_ID: "w-batch" },
    });
    expectExit(r, 0);
    const out = jsonOf<{ event_ids: string[]; spooled: boolean; path: string }>(r);
    expect(out).toMatchObject({ message_type: "memory_note.v1", spooled: true });
    expect(out.event_ids).toHaveLength(3);
    // One spool file holds the three envelopes, in order, numbered by seq.
    expect(spoolFiles(repo)).toHaveLength(1);
    const spooled = readNdjson<Envelope & { payload: Record<string, unknown> }>(out.path);
    expect(
      spooled.map((e) => [e.event_id, e.seq, (e.sender as { id: string }).id, e.payload.kind]),
    ).toEqual([
      [out.event_ids[0], 0, "w-batch", "lesson"],
      [out.event_ids[1], 1, "w-batch", "decision"],
      [out.event_ids[2], 2, "w-batch", "fact"],
    ]);
    expect(spooled[1]?.payload).toMatchObject({ rationale: "CI runners", issue: "12" });
    expect(readFileSync(out.path, "utf8")).not.toContain("hunter2");
    expect(spooled[2]?.payload.sealed).toHaveLength(1);
    // The Director takes them all.
    const run = await runCycle(repo);
    expect(run.drained).toMatchObject({ accepted: 3, files: 1 });
  });

  it("reads stdin, and refuses a bad note naming the file, line and field, sending nothing", async () => {
    const repo = await initRepo();
    const ok = await wrk(repo, ["emit", "--from", "-"], { input: `${notes[0]}\n` });
    expectExit(ok, 0);
    expect(ok.stdout).toBe("spooled 1 note(s)\n");
    const cases: [string, string[], string][] = [
      [`${notes[0]}\n{"kind":"lessn","text":"x"}\n`, [], "stdin:2: kind: Invalid option"],
      [`${notes[0]}\n\n{"kind":"fact","txt":"x"}\n`, [], "stdin:3: txt: unknown field"],
      ['{"kind":"fact","text":"x","topics":"db"}\n', [], "stdin:1: topics: expected an array"],
      ['{"kind":"fact","text":"x","confidence":2}\n', [], "stdin:1: confidence: Too big"],
      ["[1,2]\n", [], "stdin:1: expected a JSON object"],
      ["\n\n", [], "stdin: no notes"],
      [`${notes[0]}\n`, ["--kind", "fact"], "--from takes the notes from -: drop --kind"],
    ];
    for (const [input, extra, message] of cases) {
      const r = await wrk(repo, ["emit", "--from", "-", ...extra], { input });
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain(message);
    }
    expect(spoolFiles(repo)).toHaveLength(1);
  });
});

describe.concurrent("director ingest", () => {
  const LESSON = note("lesson", "Pin the Node version in CI", {
    eventId: "ev-lesson",
    topics: ["ci"],
    seq: 1,
  });
  const PROGRESS = envelope("task_progress.v1", { stage: "test", status: "running" }, { seq: 3 });

  function craftedLines(token: string, token2: string): (Envelope | string)[] {
    return [
      /* 1 */ LESSON,
      /* 2 */ heartbeat("build", { eventId: "ev-hb", seq: 2 }),
      /* 3 */ PROGRESS,
      /* 4 */ envelope(
        "worker_error.v1",
        { error_type: "Timeout", message: "npm install timed out", retryable: true },
        { eventId: "ev-err", seq: 4 },
      ),
      /* 5 */ envelope(
        "memory_event.v1",
        { kind: "observation", text: "the cache is cold on Mondays" },
        { eventId: "ev-obs", seq: 5 },
      ),
      /* 6 */ note("decision", "Use pnpm workspaces", {
        eventId: "ev-dec",
        rationale: "faster installs",
        seq: 6,
      }),
      // a resend: same event_id, another seq and clock
      /* 7 */ { ...LESSON, seq: 99, sent_at: "2026-01-02T00:00:00.000Z" },
      // a resend without event_id, identical
      /* 8 */ PROGRESS,
      /* 9 */ "",
      /* 10 */ '{"schema_version":"agentbus-envelope/v1","message_type":',
      /* 11 */ envelope("telepathy.v1", {}, { eventId: "ev-bad-type" }),
      /* 12 */ envelope(
        "memory_note.v1",
        { kind: "fact", text: "x", topics: "ci" },
        { eventId: "ev-bad-topics" },
      ),
      /* 13 */ { ...envelope("heartbeat.v1", {}, { eventId: "ev-bad-seq" }), seq: "seven" },
      /* 14 */ note("fact", "x".repeat(3000), { eventId: "ev-big" }),
      /* 15 */ note("fact", `the deploy token is ${token} do not share`, {
        eventId: "ev-secret",
        seq: 15,
      }),
      /* 16 */ `{"oops": "${token2}"`,
    ];
  }

  it("counts accepted, duplicates, quarantined and redacted; quarantines with line and reason; writes no secret", async () => {
    const repo = await initRepo(tomlConfig({ agent_bus: { max_message_bytes: 2048 } }));
    const token = fakeGithubToken("ingest-1");
    const token2 = fakeGithubToken("ingest-2");
    const file = inputFile("crafted.ndjson", craftedLines(token, token2));

    const r = await dir(repo, ["ingest", file, "--json"]);
    const counts = jsonOf<IngestJson>(r);
    expect(Object.keys(counts).sort()).toEqual([
      "accepted",
      "duplicates",
      "quarantined",
      "redacted",
    ]);
    expect(counts).toEqual({ accepted: 7, duplicates: 2, quarantined: 6, redacted: 2 });

    const quarantine = readNdjson<QuarantineRecord>(repo.path(".engram", "quarantine.ndjson"));
    expect(quarantine.map((q) => [q.line, q.reason])).toEqual([
      [10, "malformed-json"],
      [11, "invalid-envelope"],
      [12, "invalid-payload"],
      [13, "invalid-envelope"],
      [14, "oversized"],
      [16, "malformed-json"],
    ]);
    for (const q of quarantine) {
      expect(q.source).toBe(file);
      expect(q.detail.length).toBeGreaterThan(0);
    }
    expect(quarantine[1]?.detail).toContain("message_type");
    expect(quarantine[2]?.detail).toContain("topics");
    expect(quarantine[3]?.detail).toContain("seq");
    expect(quarantine[4]?.detail).toContain("2048");
    expect(quarantine[5]?.excerpt).toContain("REDACTED");

    const journal = readJournal(repo.dir);
    expect(journal.bad).toEqual([]);
    expect(journal.events.map((e) => e.key).filter((k) => k.startsWith("ih:"))).toEqual(
      ["ev-lesson", "ev-hb", "ev-err", "ev-obs", "ev-dec", "ev-secret"].map(eventIdKey),
    );
    expect(journal.events.filter((e) => e.key.startsWith("h:"))).toHaveLength(1);
    const secretEvent = journal.events.find((e) => e.key === eventIdKey("ev-secret"));
    expect(secretEvent?.text).toContain("REDACTED");

    // The same file on stdin: everything valid is now a duplicate, bad lines are kept again.
    const again = jsonOf<IngestJson>(
      await dir(repo, ["ingest", "-", "--json"], { input: readFileSync(file, "utf8") }),
    );
    expect(again).toEqual({ accepted: 0, duplicates: 9, quarantined: 6, redacted: 1 });
    const fromStdin = readNdjson<QuarantineRecord>(repo.path(".engram", "quarantine.ndjson")).slice(
      6,
    );
    expect(fromStdin.map((q) => [q.source, q.line])).toEqual(
      [10, 11, 12, 13, 14, 16].map((line) => ["stdin", line]),
    );
    // New input on stdin is accepted.
    const fresh = jsonOf<IngestJson>(
      await dir(repo, ["ingest", "-", "--json"], {
        input: ndjson([note("fact", "from stdin", { eventId: "ev-stdin" })]),
      }),
    );
    expect(fresh).toEqual({ accepted: 1, duplicates: 0, quarantined: 0, redacted: 0 });

    // Compacting does not bring the secret back either.
    await runCycle(repo, ["--force"]);
    for (const secret of [token, token2, token.slice(4), token2.slice(4)]) {
      expect(filesContaining(repo.dir, secret), "files holding a secret").toEqual([]);
    }
  });

  it("a secret cut by the end of a quarantine excerpt leaves no part of it behind", async () => {
    const repo = await initRepo();
    const token = fakeGithubToken("excerpt-boundary");
    // Malformed JSON: the token starts 30 characters before the 300-character excerpt ends.
    const head = `{"broken": "${"x".repeat(270 - 12)}`;
    expect(head.length).toBe(270);
    const file = inputFile("boundary.ndjson", [`${head}${token} and more"`]);
    const counts = await ingest(repo, file);
    expect(counts.quarantined).toBe(1);
    const body = token.slice(4);
    const leaks = filesContaining(repo.dir, body.slice(0, 16));
    expect(
      leaks,
      `a 16-character piece of the token ${token} is stored in ${leaks.join(", ")}`,
    ).toEqual([]);
  });
});

describe.concurrent("director run, verify and status", () => {
  it("a forced run writes engrams; verify passes; status matches the files on disk", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 2 } }));
    const lines: Envelope[] = [
      note("fact", "Auth tokens expire after 15 minutes", { eventId: "r1", topics: ["auth"] }),
      note("lesson", "Refresh tokens before long jobs", { eventId: "r2", topics: ["auth"] }),
      note("decision", "Adopt vitest for unit tests", {
        eventId: "r3",
        topics: ["ci"],
        rationale: "speed",
      }),
      note("fact", "CI caches node_modules by lockfile hash", { eventId: "r4", topics: ["ci"] }),
      heartbeat("build", { eventId: "r5", sender: "w1" }),
      heartbeat("test", { eventId: "r6", sender: "w1" }),
      heartbeat("lint", { eventId: "r7", sender: "w2" }),
      note("convention", "Branch names start with the issue number", { eventId: "r8" }),
      note("fact", "Newest note one", { eventId: "r9" }),
      note("fact", "Newest note two", { eventId: "r10" }),
    ];
    await ingest(repo, inputFile("run.ndjson", lines));

    const idle = await runCycle(repo);
    for (const key of ["catalog_version", "catalog_hash", "engrams_written"])
      expect(idle).toHaveProperty(key);
    expect(idle.engrams_written).toBe(0);
    expect(idle.compacted_events).toBe(0);

    const forced = await runCycle(repo, ["--force"]);
    expect(forced.compaction).toBe("forced");
    expect(forced.compacted_events).toBe(8);
    expect(forced.engrams_written).toBeGreaterThanOrEqual(2);
    expect(forced.written).toHaveLength(forced.engrams_written);
    for (const path of forced.written) expect(statSync(repo.path(path)).isFile(), path).toBe(true);
    const catalog = readCatalogFile(repo.dir);
    expect(catalog.catalog_version).toBe(forced.catalog_version);
    expect(catalog.hash).toBe(forced.catalog_hash);
    expect(catalog.catalog_version).toBe(idle.catalog_version + 1);
    // The newest window stays in the buffer.
    expect(readJournal(repo.dir).events.map((e) => e.key)).toEqual([
      eventIdKey("r9"),
      eventIdKey("r10"),
    ]);
    for (const e of readEngrams(repo.dir)) {
      expect(e.path).toBe(
        `memory/${e.engram.scope}/${e.engram.version}/engram_${e.engram.engram_id}.json`,
      );
      expect(e.engram.engram_id).toBe(
        `e_${e.engram.hash.slice("sha256:".length, "sha256:".length + 32)}`,
      );
    }

    const verify = await dir(repo, ["verify"]);
    expectExit(verify, 0);
    expect(verify.stdout).toMatch(/^ok/);

    interface StatusJson {
      buffer: { events: number; bytes: number };
      tiers: Record<"st" | "lt", { files: number; bytes: number }>;
    }
    const status = jsonOf<StatusJson>(await dir(repo, ["status", "--json"]));
    const journalPath = repo.path(".engram", "buffer", "journal.ndjson");
    expect(status.buffer).toMatchObject({
      events: readJournal(repo.dir).events.length,
      bytes: statSync(journalPath).size,
    });
    for (const scope of ["st", "lt"] as const) {
      const files = engramFiles(repo, scope);
      expect(status.tiers[scope], scope).toMatchObject({
        files: files.length,
        bytes: files.reduce((sum, p) => sum + statSync(repo.path(p)).size, 0),
      });
    }
    expect(status.tiers.st.files).toBe(forced.tiers.st.files);
    expect(status.tiers.lt.files).toBe(forced.tiers.lt.files);
  });

  it("provenance.event_count over all engram files adds up to the events compacted, also when a group is split into parts", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    // One topic, 400 notes of ~100 bytes: more than one 16 KiB engram.
    const lines = Array.from({ length: 400 }, (_, i) =>
      note(
        "fact",
        `Service ${i} listens on port ${10_000 + i} and logs to /var/log/service-${i}.log`,
        {
          eventId: `split-${i}`,
          topics: ["ports"],
        },
      ),
    );
    await ingest(repo, inputFile("split.ndjson", lines));
    const forced = await runCycle(repo, ["--force"]);
    expect(forced.compacted_events).toBe(400);
    const engrams = readEngrams(repo.dir, "st");
    expect(engrams.length, "the group was split").toBeGreaterThan(1);
    const sum = engrams.reduce((s, e) => s + e.engram.provenance.event_count, 0);
    expect(
      sum,
      `event_count per file: ${engrams.map((e) => `${e.engram.provenance.event_count} (part ${e.engram.provenance.part ?? 1})`).join(", ")}`,
    ).toBe(400);
  });
});

describe.concurrent("determinism", () => {
  it("the same input gives byte-identical memory/ and MEMORY.md in any time zone", async () => {
    const config = tomlConfig({ memory: { buffer_keep_recent_events: 3 } });
    const sealKey = "5e".repeat(32);
    const batch = (from: number, to: number) => {
      const out: Envelope[] = [];
      const kinds = ["fact", "lesson", "decision", "convention", "incident", "question"] as const;
      for (let i = from; i < to; i++) {
        const sender = `w${i % 3}`;
        const sentAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
        switch (i % 5) {
          case 0:
            out.push(heartbeat(`stage-${i % 4}`, { eventId: `d-${i}`, sender, sentAt }));
            break;
          case 1:
            out.push(
              envelope(
                "worker_error.v1",
                { error_type: `E${i % 2}`, message: `failure ${i}`, retryable: i % 2 === 0 },
                { eventId: `d-${i}`, sender, sentAt },
              ),
            );
            break;
          default:
            out.push(
              note(
                kinds[i % kinds.length] as (typeof kinds)[number],
                `Note ${i}: café ✓ "quoted" text`,
                {
                  eventId: `d-${i}`,
                  sender,
                  sentAt,
                  topics: [`topic-${i % 4}`],
                  links: [`#${i}`, `src/mod${i % 3}/file.ts`],
                  rationale: "because",
                  privacy: i % 7 === 0 ? "sensitive" : i % 11 === 0 ? "public" : "private",
                },
              ),
            );
        }
      }
      return out;
    };
    const file1 = inputFile("det-1.ndjson", batch(0, 40));
    const file2 = inputFile("det-2.ndjson", batch(40, 70));

    const build = async (tz: string) => {
      const repo = await initRepo(config);
      const env = (epoch: number): Env => ({
        TZ: tz,
        SOURCE_DATE_EPOCH: String(epoch),
        ENGRAM_SEAL_KEY: sealKey,
      });
      await ingest(repo, file1, env(EPOCH));
      const r1 = await runCycle(repo, ["--force"], env(EPOCH));
      await ingest(repo, file2, env(EPOCH + 3600));
      const r2 = await runCycle(repo, ["--force"], env(EPOCH + 3600));
      expect(r1.engrams_written).toBeGreaterThan(0);
      expect(r2.engrams_written).toBeGreaterThan(0);
      return { repo, r2 };
    };
    const [a, b] = await Promise.all([build("UTC"), build("Asia/Kathmandu")]);
    expect(a.r2.catalog_hash).toBe(b.r2.catalog_hash);
    const roots = ["memory", "MEMORY.md"];
    const sa = snapshot(a.repo.dir, roots);
    const sb = snapshot(b.repo.dir, roots);
    expect([...sa.keys()]).toEqual([...sb.keys()]);
    expect(sa.size).toBeGreaterThan(4);
    for (const [path, bytes] of sa) {
      expect(sb.get(path)?.equals(bytes), `${path} differs`).toBe(true);
    }
    const [va, vb] = await Promise.all([dir(a.repo, ["verify"]), dir(b.repo, ["verify"])]);
    expectExit(va, 0);
    expectExit(vb, 0);
  });
});

describe.concurrent("tamper detection", () => {
  it("an edited engram fails verify and check (modified); a deleted one is missing", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    await ingest(
      repo,
      inputFile("tamper.ndjson", [
        note("fact", "The staging database is reset nightly", { eventId: "t1", topics: ["db"] }),
        note("fact", "Feature flags live in config/flags.json", {
          eventId: "t2",
          topics: ["flags"],
        }),
        note("fact", "Releases are cut on Tuesdays", { eventId: "t3", topics: ["release"] }),
      ]),
    );
    await runCycle(repo, ["--force"]);
    const engrams = readEngrams(repo.dir, "st");
    expect(engrams.length).toBeGreaterThanOrEqual(2);
    const [victim, other] = engrams as [(typeof engrams)[0], (typeof engrams)[0]];
    const original = readFileSync(repo.path(victim.path));
    const fact = victim.engram.facts[0] as string;
    const edited = original
      .toString("utf8")
      .replace(JSON.stringify(fact), JSON.stringify(fact.replace(/\w+$/, "never")));
    expect(edited).not.toBe(original.toString("utf8"));
    writeFileSync(repo.path(victim.path), edited);

    const [verify, check] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify, 1);
    const lines = verify.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) expect(line.startsWith(`${victim.path}: `), line).toBe(true);
    expectExit(check, 1);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: false,
      catalog_modified: false,
      modified: [victim.path],
      missing: [],
      unlisted: [],
    });

    writeFileSync(repo.path(victim.path), original);
    await expectVerified(repo);

    unlinkSync(repo.path(other.path));
    const [verify2, check2] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify2, 1);
    expect(verify2.stdout).toContain(other.path);
    expectExit(check2, 1);
    expect(JSON.parse(check2.stdout)).toMatchObject({
      ok: false,
      missing: [other.path],
      modified: [],
    });
  });
});

describe.concurrent("worker recall", () => {
  it("returns ranked hits and records a recall signal in the spool unless --no-signal", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    await ingest(
      repo,
      inputFile("recall.ndjson", [
        note("lesson", "The flaky deploy job needs a retry on the staging cluster", {
          eventId: "c1",
          topics: ["deploy"],
        }),
        note("fact", "The deploy pipeline takes twelve minutes", {
          eventId: "c2",
          topics: ["pipeline"],
        }),
        note("fact", "Database migrations run before the API starts", {
          eventId: "c3",
          topics: ["db"],
        }),
      ]),
    );
    await runCycle(repo, ["--force"]);
    expect(spoolFiles(repo)).toEqual([]);

    interface Hit {
      engram_id: string;
      path: string;
      score: number;
    }
    const hits = jsonOf<Hit[]>(await wrk(repo, ["recall", "flaky deploy retry", "--json"]));
    expect(hits.length).toBeGreaterThanOrEqual(1);
    for (const h of hits) {
      expect(typeof h.engram_id).toBe("string");
      expect(typeof h.score).toBe("number");
      expect(h.path).toMatch(new RegExp(`^memory/st/[^/]+/engram_${h.engram_id}\\.json$`));
    }
    for (let i = 1; i < hits.length; i++) {
      expect((hits[i - 1] as Hit).score).toBeGreaterThanOrEqual((hits[i] as Hit).score);
    }
    const top = JSON.parse(readFileSync(repo.path((hits[0] as Hit).path), "utf8")) as {
      facts: string[];
    };
    expect(top.facts.join("\n")).toContain("flaky deploy job");

    const spooled = spoolFiles(repo);
    expect(spooled).toHaveLength(1);
    const [signal] = readNdjson<{
      message_type: string;
      payload: { kind: string; hits: string[] };
    }>(repo.path(".engram", "spool", spooled[0] as string));
    expect(signal?.message_type).toBe("memory_event.v1");
    expect(signal?.payload.kind).toBe("recall");
    expect(signal?.payload.hits).toEqual(hits.map((h) => h.engram_id));

    const [quiet, none] = await Promise.all([
      wrk(repo, ["recall", "flaky deploy retry", "--no-signal", "--json"]),
      wrk(repo, ["recall", "zebra xylophone", "--json"]),
    ]);
    expect(jsonOf<Hit[]>(quiet).map((h) => h.engram_id)).toEqual(hits.map((h) => h.engram_id));
    expect(jsonOf<Hit[]>(none)).toEqual([]);
    expect(spoolFiles(repo)).toEqual(spooled);

    // The next cycle drains the signal into the buffer.
    const next = await runCycle(repo);
    expect(next.drained.files).toBe(1);
    expect(next.drained.accepted).toBe(1);
    expect(spoolFiles(repo)).toEqual([]);
  });
});

describe.concurrent("budgets", () => {
  it("memory/st never holds more than st_max_files engrams; evicted files leave disk and catalog", async () => {
    const repo = await initRepo(
      tomlConfig({ memory: { buffer_keep_recent_events: 0, st_max_files: 2 } }),
    );
    let evictedSomething = false;
    for (let cycle = 0; cycle < 3; cycle++) {
      const env = { SOURCE_DATE_EPOCH: String(EPOCH + cycle * 60) };
      await ingest(
        repo,
        inputFile(
          `budget-${cycle}.ndjson`,
          ["alpha", "beta", "gamma"].map((topic) =>
            note("fact", `Cycle ${cycle} fact about ${topic}`, {
              eventId: `b-${cycle}-${topic}`,
              topics: [topic],
            }),
          ),
        ),
        env,
      );
      const r = await runCycle(repo, ["--force"], env);
      const files = engramFiles(repo, "st");
      expect(files.length, `cycle ${cycle}: ${files.join(", ")}`).toBeLessThanOrEqual(2);
      const catalog = readCatalogFile(repo.dir);
      const listed = catalog.entries
        .filter((e) => e.scope === "st")
        .map((e) => e.path)
        .sort();
      expect(listed).toEqual(files);
      for (const path of r.evicted) {
        evictedSomething = true;
        expect(files).not.toContain(path);
        expect(catalog.entries.map((e) => e.path)).not.toContain(path);
      }
      // Oldest first: what stays is from the newest batch.
      for (const e of catalog.entries)
        expect(e.path).toContain(r.written[0]?.split("/")[2] ?? "none");
      await expectVerified(repo);
    }
    expect(evictedSomething).toBe(true);
  });
});

describe.concurrent("promotion", () => {
  it("a lesson repeated in promote_repeat_min (3) ST engrams is promoted to an LT engram that supersedes them", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    const text = "Always run the migrations before seeding the test database";
    for (let cycle = 0; cycle < 3; cycle++) {
      const env = {
        SOURCE_DATE_EPOCH: String(EPOCH + cycle * 3600),
        ENGRAM_WORKER_ID: `w-promo-${cycle}`,
      };
      jsonOf(
        await wrk(repo, ["emit", "--kind", "lesson", "--text", text, "--topic", "db", "--json"], {
          env,
        }),
      );
      const r = await runCycle(repo, ["--force"], env);
      expect(r.compacted_events, `cycle ${cycle}`).toBe(1);
      expect(engramFiles(repo, "lt"), `cycle ${cycle}`).toHaveLength(cycle < 2 ? 0 : 1);
    }
    const st = readEngrams(repo.dir, "st");
    const carrying = st.filter((e) => e.engram.facts.some((f) => f.includes(text)));
    expect(carrying).toHaveLength(3);
    const lt = readEngrams(repo.dir, "lt");
    expect(lt).toHaveLength(1);
    const promoted = lt[0]?.engram;
    expect(promoted?.facts.some((f) => f.includes(text))).toBe(true);
    expect([...(promoted?.supersedes ?? [])].sort()).toEqual(
      carrying.map((e) => e.engram.engram_id).sort(),
    );
    await expectVerified(repo);
  });
});

describe.concurrent("command line", () => {
  it("--help on every command exits 0 and prints its usage", async () => {
    const repo = dirs.repo();
    const calls: [typeof director, string[], string][] = [
      [director, ["--help"], "usage: director"],
      [worker, ["--help"], "usage: worker"],
      ...["init", "ingest", "run", "verify", "status"].map(
        (c) =>
          [director, [c, "--help"], `usage: director ${c}`] as [typeof director, string[], string],
      ),
      ...["emit", "recall", "check"].map(
        (c) => [worker, [c, "--help"], `usage: worker ${c}`] as [typeof director, string[], string],
      ),
    ];
    const results = await Promise.all(calls.map(([bin, args]) => bin(args, { cwd: repo.dir })));
    results.forEach((r, i) => {
      expectExit(r, 0);
      expect(r.stdout.startsWith(calls[i]?.[2] as string), describeResult(r)).toBe(true);
    });
    // --help reads no config and writes nothing.
    expect(listFiles(repo.dir, repo.dir, [".git"])).toEqual([]);
  });

  it("an unknown command or flag exits 2", async () => {
    const repo = dirs.repo();
    const [a, b, c] = await Promise.all([
      director(["frobnicate"], { cwd: repo.dir }),
      worker(["frobnicate"], { cwd: repo.dir }),
      director(["run", "--frobnicate"], { cwd: repo.dir }),
    ]);
    for (const r of [a, b]) {
      expectExit(r, 2);
      expect(r.stderr).toContain("unknown command 'frobnicate'");
    }
    expectExit(c, 2);
    expect(c.stderr).toContain("frobnicate");
  });

  it("a config with an unknown key exits 2 naming config/dev.toml, the line and the key", async () => {
    const repo = await initRepo();
    repo.writeConfig("[memory]\nst_max_files = 5\nbogus_key = 3\n");
    const results = await Promise.all([
      dir(repo, ["status"]),
      dir(repo, ["run"]),
      wrk(repo, ["check"]),
    ]);
    for (const r of results) {
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain("config/dev.toml:3");
      expect(r.stderr).toContain("bogus_key");
    }
    // Nothing was written by the refused run.
    expect(listFiles(repo.path(".engram", "buffer"))).toEqual([]);
  });
});
