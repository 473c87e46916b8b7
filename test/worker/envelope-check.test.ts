/**
 * The worker's quick envelope check must never pass what the zod schemas refuse: whatever it
 * calls surely valid, `Envelope` and the payload's schema accept. It may be unsure of more
 * (zod then decides), but not of the notes and recall signals workers send every day.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Envelope, PAYLOAD_SCHEMAS } from "../../src/schema/envelope.js";
import { surelyValid } from "../../src/worker/envelope-check.js";

const note = {
  schema_version: "agentbus-envelope/v1",
  message_type: "memory_note.v1",
  sent_at: "2026-01-02T03:04:05.678Z",
  sender: { role: "worker", id: "w-1", run_id: "42" },
  seq: 0,
  payload: {
    kind: "fact",
    text: "the cache is warmed first",
    topics: ["cache"],
    links: ["#12", { type: "file", ref: "src/a.ts" }],
    rationale: "it was cold",
    confidence: 0.8,
    outcome: "success",
    privacy: "public",
    issue: 12,
  },
  event_id: "ev_0123",
};

const signal = {
  ...note,
  message_type: "memory_event.v1",
  payload: { kind: "recall", query: "cache", hits: ["e_0123456789abcdef0123456789abcdef"] },
};

const sessionEnd = {
  ...note,
  message_type: "session_end.v1",
  payload: {
    session_id: "s_0123456789abcdef",
    name: "task",
    parent_version: 3,
    parent_catalog_hash: "sha256:00",
    parent_commit: "0123456789abcdef0123456789abcdef01234567",
    ended_at: "2026-01-02T03:04:05.678Z",
    part: 1,
    parts: 1,
    item_count: 2,
    items: [
      {
        seq: 1,
        kind: "episode",
        written_at: "t",
        text: "ran it",
        outcome: "success",
        redactions: 0,
      },
      { seq: 2, kind: "state", written_at: "t", key: "build", value: { ok: 1 }, redactions: 1 },
    ],
  },
};

const ODD: unknown[] = [
  undefined,
  null,
  0,
  -0,
  -1,
  0.5,
  1,
  1.5,
  2 ** 53,
  Number.NaN,
  "",
  "x",
  "x".repeat(65),
  "x".repeat(129),
  "x".repeat(201),
  "x".repeat(513),
  "x".repeat(1001),
  "fact",
  "recall",
  "bad id",
  "w-2",
  "worker",
  "director",
  "robot",
  "public",
  "secret",
  "success",
  "maybe",
  "2026-01-02T03:04:05Z",
  "2026-02-30T03:04:05Z",
  "2026-01-02T03:04:05+01:00",
  "2026-01-02",
  "agentbus-envelope/v2",
  "heartbeat.v1",
  "memory_note.v1",
  [],
  ["a"],
  [""],
  [1],
  [{ type: "url", ref: "https://a.example" }],
  [{ type: "url", ref: "x", extra: 1 }],
  [{ type: "web", ref: "x" }],
  Array.from({ length: 33 }, () => "t"),
  {},
  { a: 1 },
  [{ alg: "A256GCM", iv: "a", ct: "b", tag: "c", field: "text" }],
];

const ENVELOPE_KEYS = ["schema_version", "message_type", "sent_at", "sender", "seq", "event_id"];
const SENDER_KEYS = ["role", "id", "run_id"];
const NOTE_KEYS = [
  ...["kind", "text", "topics", "links", "rationale", "confidence", "outcome", "privacy"],
  ...["issue", "sealed", "query", "hits"],
];
const SESSION_KEYS = [
  ...["session_id", "name", "parent_version", "parent_catalog_hash", "parent_commit"],
  ...["ended_at", "part", "parts", "item_count", "items"],
];
const ITEM_KEYS = [
  ...["seq", "kind", "written_at", "text", "rationale", "sealed", "privacy", "confidence"],
  ...["outcome", "key", "value", "redactions", "extra"],
];
/** Values of a session's fields and items on the edges of their checks. */
const SESSION_ODD: unknown[] = [
  ...[1, 2, 0, -1, 1.5, null, "", "t".repeat(65), "t".repeat(81), "s_0123", "0123456"],
  ...["0123456789abcdef", "episode", "core", "memo", "build", "Bad Key", ".x", "failure"],
  ...[0.7, 2, [], [{ seq: 1, kind: "fact", written_at: "", redactions: 0 }], undefined],
];

function zodAccepts(envelope: Record<string, unknown>): boolean {
  const checked = Envelope.safeParse(envelope);
  if (!checked.success) return false;
  return PAYLOAD_SCHEMAS[checked.data.message_type].safeParse(checked.data.payload).success;
}

const mutated = fc
  .tuple(
    fc.constantFrom(note, signal, sessionEnd),
    fc.array(
      fc.tuple(
        fc.constantFrom(
          ...ENVELOPE_KEYS.map((k) => [k]),
          ...SENDER_KEYS.map((k) => ["sender", k]),
          ...NOTE_KEYS.map((k) => ["payload", k]),
        ),
        fc.constantFrom(...ODD),
      ),
      { minLength: 1, maxLength: 2 },
    ),
  )
  .map(([base, changes]) => {
    const envelope = structuredClone(base) as Record<string, unknown>;
    for (const [path, value] of changes) {
      const table = path.length === 1 ? envelope : envelope[path[0] as string];
      if (typeof table !== "object" || table === null) continue;
      const key = path[path.length - 1] as string;
      if (value === undefined) delete (table as Record<string, unknown>)[key];
      else (table as Record<string, unknown>)[key] = structuredClone(value);
    }
    return envelope;
  });

/** A session end with a few payload fields or item fields set to edge values (or removed). */
const mutatedEnd = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        ...SESSION_KEYS.map((k) => ["payload", k]),
        ...ITEM_KEYS.map((k) => ["item", k]),
      ),
      fc.constantFrom(...SESSION_ODD, ...ODD),
      fc.nat(1),
    ),
    { minLength: 1, maxLength: 2 },
  )
  .map((changes) => {
    const envelope = structuredClone(sessionEnd) as Record<string, unknown>;
    const payload = envelope.payload as Record<string, unknown>;
    for (const [[where, key], value, n] of changes) {
      const items = payload.items;
      const table = where === "payload" ? payload : Array.isArray(items) ? items[n] : undefined;
      if (typeof table !== "object" || table === null) continue;
      if (value === undefined) delete (table as Record<string, unknown>)[key as string];
      else (table as Record<string, unknown>)[key as string] = structuredClone(value);
    }
    return envelope;
  });

describe("surelyValid", () => {
  it("passes the notes and signals workers send", () => {
    expect(surelyValid(note)).toBe(true);
    expect(surelyValid(signal)).toBe(true);
    expect(surelyValid(sessionEnd)).toBe(true);
    expect(surelyValid({ ...note, payload: { kind: "lesson", text: "t" } })).toBe(true);
  });

  it("never passes what the zod schemas refuse", () => {
    neverPassesRefused(mutated);
  });

  it("never passes a session end the zod schemas refuse", () => {
    neverPassesRefused(mutatedEnd);
  });
});

/** Whatever `surelyValid` passes among the arbitrary's envelopes, zod accepts; many pass. */
function neverPassesRefused(envelopes: fc.Arbitrary<Record<string, unknown>>): void {
  let passed = 0;
  fc.assert(
    fc.property(envelopes, (envelope) => {
      if (!surelyValid(envelope)) return;
      passed++;
      expect(zodAccepts(envelope), JSON.stringify(envelope)).toBe(true);
    }),
    { numRuns: 3000 },
  );
  expect(passed).toBeGreaterThan(300);
}
