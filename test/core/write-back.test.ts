/**
 * The Director never writes what it cannot read back (issue 24), in process: arbitrary strings
 * (control characters, line breaks, lone surrogates, credentials, 10 KB values) in every
 * envelope field a worker or another writer fills go through ingest and two Director cycles;
 * every line is either quarantined with a reason or becomes memory that the readers' own
 * schemas and `director verify`'s checks accept.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkMemoryWrites } from "../../src/core/checks/write-check.js";
import { planCycle } from "../../src/core/compaction/plan.js";
import {
  parsePending,
  pendingEngrams,
  planRoomCompaction,
  roomLinker,
} from "../../src/core/compaction/room.js";
import { emptyLedger, pendingFileName } from "../../src/core/compaction/room-ledger.js";
import { entityMatcher } from "../../src/core/graph/entities.js";
import { normalizeLine } from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { emptyCatalog } from "../../src/core/model/engram.js";
import {
  entityId,
  isDocumentEntityId,
  linkRefProblem,
  normalizeTopic,
  notOneLine,
  oneLine,
} from "../../src/core/model/fields.js";
import { CATALOG_PATH, ENGRAM_PATH_PATTERN } from "../../src/core/model/paths.js";
import { Link } from "../../src/schema/common.js";
import { defaultConfig } from "../../src/schema/config.js";
import { Catalog, Engram, EntityRef } from "../../src/schema/engram.js";
import { ENVELOPE_SCHEMAS } from "../../src/schema/envelope.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";
import type { Registry } from "../../src/schema/registry.js";
import { fakeSecrets } from "../support/fake-secrets.js";

const config = defaultConfig();
const memory = { ...config.memory, buffer_keep_recent_events: 0 };
const redactor = createRedactor();
const SECRETS = fakeSecrets(24).map((s) => s.text);
const REGISTRY: Registry = {
  people: [{ id: "ada", name: "Ada Lovelace", aliases: ["ada"], emails: [] }],
  projects: [{ id: "core", name: "Core", aliases: [], paths: ["src/**"] }],
  components: [],
} as unknown as Registry;

/** Any UTF-16 (lone surrogates too), line breaks and controls, credentials, long runs. */
const hostile = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.constantFrom(
        "\n",
        "\r\n",
        "\t",
        "\u0000",
        "\u0085",
        "\u2028",
        "\uD800",
        "\uDFFF",
        " ",
        "#",
        "src/core/plan.ts",
        "PR #7",
        "https://example.com/x",
        "deadbeef1234",
        "@ghost",
      ),
      fc.constantFrom(...SECRETS),
      fc.constantFrom("API_KEY=", "SECRET_KEY=", "password: "),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join("") || "x");
/** Sometimes 10 KB: over every text limit, so the schemas or the checks must decide. */
const value = fc.oneof(
  { weight: 8, arbitrary: hostile },
  {
    weight: 1,
    arbitrary: hostile.map((s) => (s || "x").repeat(Math.ceil(10_240 / (s.length || 1)))),
  },
);
/** `value` mostly cut to a field's limit (so most lines reach memory), sometimes whole. */
const upTo = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: value.map((s) => s.slice(0, max)) },
    { weight: 1, arbitrary: value },
  );
const link = fc.oneof(
  value,
  fc.record({
    type: fc.constantFrom("issue", "pr", "file", "spec", "commit", "url"),
    ref: value,
  }),
);

const fields = fc.record({
  type: fc.constantFrom(
    "memory_note.v1",
    "memory_event.v1",
    "worker_error.v1",
    "task_progress.v1",
    "heartbeat.v1",
  ),
  kind: fc.constantFrom("decision", "fact", "lesson", "convention", "incident", "question"),
  text: value,
  rationale: value,
  topics: fc.array(upTo(64), { maxLength: 4 }),
  links: fc.array(link, { maxLength: 4 }),
  issue: upTo(128),
  stage: upTo(64),
  // Mostly a valid sender, so that most lines reach memory; sometimes anything.
  sender: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom("w1", "w-2") },
    { weight: 1, arbitrary: upTo(128) },
  ),
  runId: fc.oneof({ weight: 2, arbitrary: fc.constant("") }, { weight: 1, arbitrary: upTo(128) }),
  status: upTo(64),
  confidence: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
});

function line(i: number, f: Fields): string {
  const payload: Record<string, unknown> =
    f.type === "memory_note.v1"
      ? {
          kind: f.kind,
          text: f.text,
          rationale: f.rationale,
          topics: f.topics,
          links: f.links,
          issue: f.issue,
          ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
        }
      : f.type === "memory_event.v1"
        ? { kind: f.stage, text: f.text, topics: f.topics, links: f.links, issue: f.issue }
        : f.type === "worker_error.v1"
          ? { error_type: f.stage, message: f.text, issue: f.issue, stage: f.stage }
          : { stage: f.stage, issue: f.issue, status: f.status, message: f.text };
  return JSON.stringify({
    schema_version: "agentbus-envelope/v1",
    message_type: f.type,
    sent_at: "2026-11-22T10:00:00Z",
    sender: { role: "worker", id: f.sender, ...(f.runId ? { run_id: f.runId } : {}) },
    seq: i,
    payload,
    event_id: `ev-${i}`,
  });
}
type Fields = {
  type: string;
  kind: string;
  text: string;
  rationale: string;
  topics: string[];
  links: unknown[];
  issue: string;
  stage: string;
  sender: string;
  runId: string;
  status: string;
  confidence: number | undefined;
};

let accepted = 0;
let total = 0;
const reasons = new Map<string, number>();

/** Ingest: each line becomes an event or a quarantine record with its reason. */
function ingest(lines: readonly string[], from: number, at: string): MemoryEvent[] {
  const events: MemoryEvent[] = [];
  lines.forEach((text, i) => {
    total++;
    const r = normalizeLine(text, {
      receivedAt: at,
      maxMessageBytes: 65_536,
      schemas: ENVELOPE_SCHEMAS,
      redactor,
      sealKey: undefined,
    });
    if (r.ok) {
      events.push({ ...r.event, seq: from + i });
      accepted++;
    } else {
      expect(r.detail.length, `line ${i}: quarantined without a reason`).toBeGreaterThan(0);
      const why = r.detail.slice(0, 50);
      reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
  });
  return events;
}

/** Reads every written file back as the readers do; returns the memory for the next cycle. */
function readBack(writes: readonly { path: string; text: string }[]) {
  expect(checkMemoryWrites(writes, config)).toEqual([]);
  const engrams = new Map<string, Engram>();
  let catalog: Catalog | undefined;
  for (const w of writes) {
    if (w.path === CATALOG_PATH) catalog = Catalog.parse(JSON.parse(w.text)) as Catalog;
    else if (ENGRAM_PATH_PATTERN.test(w.path)) {
      const engram = Engram.parse(JSON.parse(w.text)) as Engram;
      engrams.set(engram.engram_id, engram);
      for (const l of engram.links) expect(notOneLine(l.ref), w.path).toBeUndefined();
      for (const t of engram.topics) expect(notOneLine(t), w.path).toBeUndefined();
    }
  }
  return { catalog, engrams };
}

describe("every field built from input reads back", () => {
  it("through ingest and two cycles, memory passes the readers' schemas and verify's checks", () => {
    fc.assert(
      fc.property(
        fc.array(fields, { minLength: 1, maxLength: 6 }),
        fc.array(fields, { minLength: 1, maxLength: 4 }),
        (first, second) => {
          const a = ingest(
            first.map((f, i) => line(i, f)),
            1,
            "2026-11-22T10:00:00.000Z",
          );
          const one = planCycle({
            slice: a,
            catalog: emptyCatalog(),
            engrams: new Map(),
            recalls: new Map(),
            memory,
            asOf: "2026-11-22T10:00:00.000Z",
            registry: REGISTRY,
          });
          const back = readBack(one.writes);
          const b = ingest(
            second.map((f, i) => line(100 + i, f)),
            100,
            "2026-11-22T11:00:00.000Z",
          );
          const catalog = back.catalog ?? emptyCatalog();
          const all = new Map(back.engrams);
          const two = planCycle({
            slice: b,
            catalog,
            engrams: all,
            recalls: new Map(),
            memory,
            asOf: "2026-11-22T11:00:00.000Z",
            registry: REGISTRY,
          });
          readBack(two.writes);
        },
      ),
      { numRuns: 150 },
    );
    // The property is about memory: most lines must have reached it.
    expect(accepted, JSON.stringify([...reasons])).toBeGreaterThan(total / 2);
  });
});

describe("one-line fields", () => {
  it("compacted for room, slice by slice, the records read back and make memory that does too", () => {
    fc.assert(
      fc.property(
        fc.array(fields, { minLength: 2, maxLength: 8 }),
        fc.integer({ min: 1, max: 3 }),
        (all, size) => {
          const events = ingest(
            all.map((f, i) => line(i, f)),
            1,
            "2026-11-22T10:00:00.000Z",
          );
          let ledger = emptyLedger();
          const contents = [];
          for (let at = 0; at < events.length; at += size) {
            const room = planRoomCompaction({
              slice: events.slice(at, at + size),
              memory,
              registry: REGISTRY,
              ledger,
              pendingFile: pendingFileName(ledger),
            });
            ledger = room.ledger;
            // What a later process reads: the file's text, against the ledger's digest.
            const read = parsePending(room.pendingText, ledger.pending.at(-1)?.sha256 ?? "");
            if (room.pendingText === "") continue;
            expect(typeof read, String(read)).toBe("object");
            contents.push(read as Exclude<typeof read, string>);
          }
          const pending = pendingEngrams(contents, memory, roomLinker(REGISTRY)).engrams;
          const taken = planCycle({
            slice: [],
            pending,
            catalog: emptyCatalog(),
            engrams: new Map(),
            recalls: new Map(),
            memory,
            asOf: "2026-11-22T10:00:00.000Z",
            registry: REGISTRY,
          });
          readBack(taken.writes);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("oneLine and normalizeTopic give one line; linkRefProblem passes only what Link keeps", () => {
    fc.assert(
      fc.property(value, (text) => {
        expect(notOneLine(oneLine(text))).toBeUndefined();
        const topic = normalizeTopic(text);
        expect(notOneLine(topic)).toBeUndefined();
        expect(topic.length).toBeLessThanOrEqual(64);
        if (linkRefProblem(text) === undefined) {
          expect(Link.safeParse({ type: "file", ref: text.trim() }).success).toBe(true);
          expect(notOneLine(text.trim())).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it("entityId makes only ids the engram schema accepts, or none", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("file", "issue", "pr", "commit", "person"),
        value,
        (kind, key) => {
          const id = entityId(kind, key);
          if (id === undefined) return;
          expect(EntityRef.safeParse(id).success, JSON.stringify(id)).toBe(true);
          expect(isDocumentEntityId(id)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the matcher never derives an entity the schema refuses, from links or text", () => {
    const matcher = entityMatcher(REGISTRY);
    fc.assert(
      fc.property(fc.array(link, { maxLength: 4 }), value, (links, text) => {
        const typed = links.map((l) =>
          typeof l === "string" ? { type: "file", ref: l } : (l as { type: string; ref: string }),
        );
        const { entities } = matcher.linkDocument({ texts: [text], links: typed, senders: [] });
        for (const id of entities) expect(EntityRef.safeParse(id).success, id).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("names the character and where it is", () => {
    expect(notOneLine("API_KEY=x\nSECRET")).toBe("a line break (U+000A) at character 10");
    expect(notOneLine("a\u2028b")).toBe("a line separator (U+2028) at character 2");
    expect(notOneLine("\uD800")).toBe("a lone surrogate (U+D800) at character 1");
    expect(notOneLine("src/x.ts")).toBeUndefined();
    expect(linkRefProblem("   ")).toBe("a link is empty");
    expect(linkRefProblem("x".repeat(513))).toBe(
      "a link is at most 512 characters: this one has 513",
    );
    expect(entityId("file", " a\n b ")).toBe("file:a b");
    expect(entityId("file", "x".repeat(501))).toBeUndefined();
    expect(entityId("issue", "")).toBeUndefined();
  });
});

describe("the write check", () => {
  it("refuses an engram whose entity holds a line break, naming the file and field", () => {
    const one = planCycle({
      slice: ingest(
        [line(1, { ...BASE, links: ["src/core/plan.ts"] })],
        1,
        "2026-11-22T10:00:00.000Z",
      ),
      catalog: emptyCatalog(),
      engrams: new Map(),
      recalls: new Map(),
      memory,
      asOf: "2026-11-22T10:00:00.000Z",
      registry: REGISTRY,
    });
    expect(checkMemoryWrites(one.writes, config)).toEqual([]);
    const write = one.writes.find((w) => ENGRAM_PATH_PATTERN.test(w.path)) as {
      path: string;
      text: string;
    };
    const poisoned = write.text.replace('"file:src/core/plan.ts"', '"file:a\\nb"');
    expect(poisoned).not.toBe(write.text);
    const findings = checkMemoryWrites([{ path: write.path, text: poisoned }], config);
    expect(findings.map((f) => f.code)).toContain("engram-invalid");
    expect(findings.find((f) => f.code === "engram-invalid")?.message).toContain("entities[0]");
    const catalog = one.writes.find((w) => w.path === CATALOG_PATH) as { text: string };
    expect(
      checkMemoryWrites(
        [
          {
            path: CATALOG_PATH,
            text: catalog.text.replace('"catalog_version": 1', '"catalog_version": "1"'),
          },
        ],
        config,
      ).length,
    ).toBeGreaterThan(0);
    expect(
      checkMemoryWrites([{ path: "memory/state/x.json", text: "{" }], config).map((f) => f.code),
    ).toEqual(["document-invalid"]);
  });
});

const BASE: Fields = {
  type: "memory_note.v1",
  kind: "decision",
  text: "Plan in the core",
  rationale: "pure",
  topics: ["core"],
  links: [],
  issue: "12",
  stage: "build",
  sender: "w1",
  runId: "",
  status: "ok",
  confidence: undefined,
};
