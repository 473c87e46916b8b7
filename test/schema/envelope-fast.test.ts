/**
 * The hand-written envelope check ingest runs before zod must never pass what the zod
 * schemas refuse, and an envelope it passes must normalize to exactly the event zod's output
 * gives (same fields, same order, same bytes once serialized). Mutations reach every field
 * the check reads, nested upstream shapes included; values are chosen at the schemas' edges.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeEnvelope } from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { ENVELOPE_SCHEMAS, Envelope, PAYLOAD_SCHEMAS } from "../../src/schema/envelope.js";
import { envelopeSurelyValid } from "../../src/schema/envelope-fast.js";
import { serializeEvent } from "../../src/state/buffer.js";

const ctx = {
  receivedAt: "2026-11-22T10:00:00.000Z",
  maxMessageBytes: 1 << 20,
  schemas: ENVELOPE_SCHEMAS,
  redactor: createRedactor(),
  sealKey: new Uint8Array(32).fill(7),
};
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
const SHA = "e51f051ef0a3949e0ca5836d4d27e535094885ec";

function envelope(messageType: string, payload: Record<string, unknown>) {
  return {
    schema_version: "agentbus-envelope/v1",
    message_type: messageType,
    sent_at: "2026-11-02T09:00:00.019Z",
    sender: { role: "worker", id: "worker-36", run_id: "run-120383" },
    seq: 1,
    payload,
    event_id: "ev_d73c85d7e50e4500a156fa2df76ad435",
  };
}

/** What a swarm sends all day: both telemetry shapes, notes and recall signals. */
const COMMON = [
  envelope("heartbeat.v1", {
    stage: "plan",
    issue: 342,
    attempt: 2,
    progress: 0.753,
    main_ancestor_sha: SHA,
    catalog_hash_seen: `sha256:${"a".repeat(64)}`,
  }),
  envelope("heartbeat.v1", {
    state: {
      stage: "CODE",
      issue_number: 12,
      attempt: 1,
      progress: { step: "tests", percent: 40 },
      repo: {
        branch_name: "w/12",
        base_branch: "main",
        main_sha_seen: SHA,
        main_ancestor_sha: SHA,
      },
      last_error_id: "err-1",
      last_update_at: "2026-11-02T09:00:00Z",
    },
  }),
  envelope("task_progress.v1", {
    stage: "plan",
    issue: "#32",
    status: "running",
    progress: 0.059,
    message: `lint of scheduler with ${TOKEN}\n    at migrate.flush (src/a.ts:363:60)`,
    duration_ms: 503158,
  }),
  envelope("task_progress.v1", { step: "build", percent: 55.5, issue_number: 7 }),
  envelope("worker_error.v1", {
    error_type: "ENOSPC",
    message: "disk full",
    retryable: true,
    issue: 4,
    stage: "test",
    attempt: 3,
  }),
  envelope("worker_error.v1", {
    error: {
      error_id: "e-77",
      worker_id: "worker-36",
      issue_number: 9,
      stage: "VALIDATE",
      attempt: 2,
      error_type: "Timeout",
      is_transient: true,
      should_retry: false,
      escalate_to_human: false,
      message: "timed out",
      exit_code: -1,
    },
  }),
  envelope("memory_note.v1", {
    kind: "question",
    text: "Should csv-importer retry ENOSPC?",
    topics: ["csv-importer", "Cdn-Purge"],
    links: ["https://ci.example.com/runs/14679", { type: "file", ref: "src/a.ts" }, "#12"],
    rationale: `because ${TOKEN}`,
    privacy: "private",
    confidence: 0.41,
    outcome: "success",
    issue: 12,
  }),
  envelope("memory_note.v1", { kind: "fact", text: "secret", privacy: "sensitive" }),
  envelope("memory_event.v1", { kind: "recall", query: "cache", hits: ["e_0123"], topics: [] }),
];

const ODD: unknown[] = [
  null,
  0,
  -0,
  -1,
  0.5,
  1,
  1.5,
  42,
  100,
  100.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  "",
  "x",
  "x".repeat(65),
  "x".repeat(81),
  "x".repeat(129),
  "x".repeat(201),
  "x".repeat(513),
  "x".repeat(1001),
  "x".repeat(8001),
  "fact",
  "bad id",
  "worker",
  "sensitive",
  "success",
  SHA,
  "ABCDEF0",
  "2026-01-02T03:04:05Z",
  "2026-02-30T03:04:05Z",
  "2026-01-02T03:04:05+01:00",
  "agentbus-envelope/v2",
  "heartbeat.v1",
  "worker_error.v1",
  "session_end.v1",
  [],
  ["a"],
  [""],
  [1],
  [{ type: "url", ref: "https://a.example" }],
  [{ type: "url", ref: "x", extra: 1 }],
  Array.from({ length: 33 }, () => "t"),
  {},
  { a: 1 },
  { step: "s", percent: 50 },
  { step: 1 },
  { percent: 101 },
  { stage: "x", issue_number: -1 },
  { main_sha_seen: "nothex" },
  [{ alg: "A256GCM", iv: "a", ct: "b", tag: "c", field: "text" }],
];

const HEAD_KEYS = ["schema_version", "message_type", "sent_at", "sender", "seq", "payload"];
const PAYLOAD_KEYS = [
  ...["kind", "text", "topics", "links", "rationale", "confidence", "outcome", "privacy"],
  ...["issue", "sealed", "query", "hits", "state", "stage", "issue_number", "attempt"],
  ...["progress", "main_ancestor_sha", "catalog_hash_seen", "step", "percent", "status"],
  ...["message", "duration_ms", "error", "error_type", "retryable"],
];
const NESTED: string[][] = [
  ...["role", "id", "run_id"].map((k) => ["sender", k]),
  ...["stage", "issue_number", "attempt", "progress", "repo", "last_error_id"].map((k) => [
    "payload",
    "state",
    k,
  ]),
  ...["last_update_at"].map((k) => ["payload", "state", k]),
  ...["branch_name", "main_sha_seen", "main_ancestor_sha", "catalog_hash_seen"].map((k) => [
    "payload",
    "state",
    "repo",
    k,
  ]),
  ...["step", "percent"].map((k) => ["payload", "state", "progress", k]),
  ...["step", "percent"].map((k) => ["payload", "progress", k]),
  ...["error_id", "worker_id", "issue_number", "stage", "attempt", "error_type"].map((k) => [
    "payload",
    "error",
    k,
  ]),
  ...["is_transient", "should_retry", "escalate_to_human", "message", "exit_code"].map((k) => [
    "payload",
    "error",
    k,
  ]),
  ["payload", "links", "1", "type"],
  ["payload", "topics", "0"],
];

const PATHS = [
  ...HEAD_KEYS.map((k) => [k]),
  ["event_id"],
  ...PAYLOAD_KEYS.map((k) => ["payload", k]),
  ...NESTED,
];

/** `base` with the value at `path` replaced (`null`: removed); undefined where it has no such place. */
function mutate(base: unknown, changes: readonly (readonly [string[], unknown])[]) {
  const out = structuredClone(base) as Record<string, unknown>;
  for (const [path, value] of changes) {
    let table: unknown = out;
    for (const part of path.slice(0, -1)) {
      table = typeof table === "object" && table !== null ? (table as never)[part] : undefined;
    }
    if (typeof table !== "object" || table === null) continue;
    const key = path[path.length - 1] as string;
    if (value === null) delete (table as Record<string, unknown>)[key];
    else (table as Record<string, unknown>)[key] = structuredClone(value);
  }
  return out;
}

const mutated = fc
  .tuple(
    fc.constantFrom(...COMMON),
    fc.array(fc.tuple(fc.constantFrom(...PATHS), fc.option(fc.constantFrom(...ODD))), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([base, changes]) => mutate(base, changes));

function zodAccepts(raw: unknown): boolean {
  const checked = Envelope.safeParse(raw);
  if (!checked.success) return false;
  return PAYLOAD_SCHEMAS[checked.data.message_type].safeParse(checked.data.payload).success;
}

/**
 * The outcome either way. A throw counts as an outcome: an unknown `topics` or `links` of the
 * wrong shape on a telemetry payload (which zod lets through) throws on both paths alike.
 */
function bothWays(raw: unknown) {
  const run = (zodOnly: boolean) => {
    try {
      return normalizeEnvelope(structuredClone(raw), { ...ctx, zodOnly });
    } catch (error) {
      return { ok: "threw" as const, message: (error as Error).message };
    }
  };
  return { fast: run(false), zod: run(true) };
}

describe("envelopeSurelyValid", () => {
  it("passes the envelopes a swarm sends every day", () => {
    for (const raw of COMMON) expect(envelopeSurelyValid(raw), JSON.stringify(raw)).toBe(true);
  });

  it("leaves the unusual to zod: an offset time, a sealed note, other message types", () => {
    const beat = COMMON[0] as Record<string, unknown>;
    expect(envelopeSurelyValid({ ...beat, sent_at: "2026-01-02T03:04:05+01:00" })).toBe(false);
    expect(envelopeSurelyValid({ ...beat, message_type: "session_end.v1" })).toBe(false);
    const sealed = envelope("memory_note.v1", {
      kind: "fact",
      privacy: "sensitive",
      sealed: [{ alg: "A256GCM", iv: "a", ct: "b", tag: "c", field: "text" }],
    });
    expect(envelopeSurelyValid(sealed)).toBe(false);
    expect(zodAccepts(sealed)).toBe(true);
  });

  it("never passes what zod refuses, and normalizes to zod's event byte for byte", () => {
    let passed = 0;
    let refused = 0;
    fc.assert(
      fc.property(mutated, (raw) => {
        const { fast, zod } = bothWays(raw);
        // Whatever the path, the outcome is the same: the event, or the quarantine detail.
        expect(fast).toEqual(zod);
        if (fast.ok === true && zod.ok === true) {
          expect(serializeEvent(fast.event).body).toBe(serializeEvent(zod.event).body);
        }
        if (!envelopeSurelyValid(raw)) {
          refused++;
          return;
        }
        passed++;
        expect(zodAccepts(raw), JSON.stringify(raw)).toBe(true);
      }),
      { numRuns: 4000 },
    );
    expect(passed).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(400);
  });

  it("never passes what zod refuses, for every single change of every common envelope", () => {
    for (const base of COMMON) {
      for (const path of PATHS) {
        for (const value of [null, ...ODD]) {
          const raw = mutate(base, [[path, value]]);
          if (envelopeSurelyValid(raw)) expect(zodAccepts(raw), JSON.stringify(raw)).toBe(true);
        }
      }
    }
  });

  it("normalizes the common envelopes exactly as zod's output does", () => {
    for (const raw of COMMON) {
      const { fast, zod } = bothWays(raw);
      expect(fast.ok).toBe(true);
      expect(fast).toEqual(zod);
      if (fast.ok === true && zod.ok === true) {
        expect(serializeEvent(fast.event).body).toBe(serializeEvent(zod.event).body);
      }
    }
  });
});
