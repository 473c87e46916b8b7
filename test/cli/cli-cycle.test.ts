/**
 * Integration through the real bins (`dist/src/cli/{director,worker}.js`, built by `npm test`)
 * on real temporary git repositories: every command and its documented contract.
 */
import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { jsonOf } from "../support/bins.js";
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
  readCatalogFile,
  readEngrams,
  readJournal,
  readNdjson,
} from "../support/memory.js";
import { tomlConfig } from "../support/repo.js";
import {
  dir,
  engramFiles,
  expectExit,
  type IngestJson,
  ingest,
  initRepo,
  inputFile,
  runCycle,
  useCliHarness,
} from "./cli-harness.js";

useCliHarness();

interface QuarantineRecord {
  source: string;
  line: number;
  reason: string;
  detail: string;
  excerpt: string;
}

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
