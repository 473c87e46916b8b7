import { describe, expect, it } from "vitest";
import {
  dedupKey,
  eventIdKey,
  normalizeLine,
  quarantineExcerpt,
} from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { openSealed } from "../../src/core/ingest/seal.js";
import { ENVELOPE_SCHEMAS } from "../../src/schema/envelope.js";

const KEY = new Uint8Array(32).fill(7);
const ctx = {
  receivedAt: "2026-11-22T10:00:00.000Z",
  maxMessageBytes: 4096,
  schemas: ENVELOPE_SCHEMAS,
  redactor: createRedactor(),
  sealKey: KEY,
};
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

function envelope(
  messageType: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    schema_version: "agentbus-envelope/v1",
    message_type: messageType,
    sent_at: "2031-01-01T00:00:00+02:00",
    sender: { role: "worker", id: "w-1" },
    seq: 3,
    payload,
    event_id: "ev-1",
    ...extra,
  };
}

describe("normalizeLine", () => {
  it("turns a note into a MemoryEvent stamped with the Director's receipt time", () => {
    const line = JSON.stringify(
      envelope("memory_note.v1", {
        kind: "decision",
        text: "Use zod",
        rationale: "one source",
        topics: ["Schema", "schema"],
        links: [
          "#12",
          "PR#3",
          "src/a.ts",
          "https://example.com",
          "0123abc",
          { type: "spec", ref: "bus" },
        ],
        confidence: 0.8,
        outcome: "success",
        issue: 12,
      }),
    );
    const result = normalizeLine(line, ctx);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      key: eventIdKey("ev-1"),
      received_at: ctx.receivedAt,
      sent_at: "2030-12-31T22:00:00.000Z",
      type: "memory_note.v1",
      kind: "decision",
      text: "Use zod",
      rationale: "one source",
      topics: ["schema"],
      issue: "#12",
      confidence: 0.8,
      outcome: "success",
      privacy: "private",
      redactions: 0,
    });
    expect(result.event.links).toEqual([
      { type: "issue", ref: "#12" },
      { type: "pr", ref: "#3" },
      { type: "file", ref: "src/a.ts" },
      { type: "url", ref: "https://example.com" },
      { type: "commit", ref: "0123abc" },
      { type: "spec", ref: "bus" },
    ]);
  });

  it("quarantines oversized, malformed, unknown and wrongly typed input with a reason", () => {
    const cases: [string, string, RegExp][] = [
      ["x".repeat(5000), "oversized", /5000 bytes/],
      ["{not json", "malformed-json", /JSON/],
      [JSON.stringify(envelope("gossip.v1", {})), "invalid-envelope", /message_type/],
      [
        JSON.stringify(envelope("memory_note.v1", { kind: "fact", text: 5 })),
        "invalid-payload",
        /payload\.text/,
      ],
      [
        JSON.stringify(envelope("memory_note.v1", { kind: "rumour", text: "x" })),
        "invalid-payload",
        /payload\.kind/,
      ],
      [JSON.stringify({ ...envelope("heartbeat.v1", {}), seq: -1 }), "invalid-envelope", /seq/],
    ];
    for (const [line, reason, detail] of cases) {
      const result = normalizeLine(line, ctx);
      expect(result.ok, line.slice(0, 40)).toBe(false);
      if (result.ok) continue;
      expect(result.reason).toBe(reason);
      expect(result.detail).toMatch(detail);
    }
  });

  it("redacts secrets everywhere before anything is stored, and counts them", () => {
    const line = JSON.stringify(
      envelope("worker_error.v1", {
        error_type: "AuthError",
        message: `bad token ${TOKEN}`,
        stage: `deploy ${TOKEN}`,
      }),
    );
    const result = normalizeLine(line, ctx);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.stringify(result.event)).not.toContain(TOKEN);
    expect(result.event.redactions).toBe(2);
    expect(result.event.text).toContain("[REDACTED:github-pat]");
  });

  it("never echoes a secret in a quarantine detail", () => {
    const line = JSON.stringify(
      envelope("memory_note.v1", { kind: "fact", text: "x", confidence: TOKEN }),
    );
    const result = normalizeLine(line, ctx);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  it("seals sensitive text: no clear text in the event, recoverable with the key", () => {
    const line = JSON.stringify(
      envelope("memory_note.v1", {
        kind: "fact",
        text: "the launch date is 3 March",
        privacy: "sensitive",
      }),
    );
    const result = normalizeLine(line, ctx);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.stringify(result.event)).not.toContain("3 March");
    expect(result.event.text).toBeUndefined();
    const sealed = result.event.sealed?.[0];
    expect(sealed && openSealed(KEY, sealed)).toBe("the launch date is 3 March");
    // Deterministic: the same text seals to the same bytes.
    const again = normalizeLine(line, ctx);
    expect(again.ok && again.event.sealed).toEqual(result.event.sealed);
  });

  it("keys duplicates by event_id, else by the canonical envelope (not by sender and seq)", () => {
    const a = envelope("heartbeat.v1", { stage: "build" });
    // The id's digest, never the id itself: a writer may put anything there.
    expect(dedupKey(a)).toBe(eventIdKey("ev-1"));
    expect(dedupKey(a)).toMatch(/^ih:[0-9a-f]{64}$/);
    const { event_id: _drop, ...noId } = a;
    const reordered = Object.fromEntries(Object.entries(noId).reverse());
    expect(dedupKey(noId)).toMatch(/^h:[0-9a-f]{64}$/);
    expect(dedupKey(reordered)).toBe(dedupKey(noId));
    expect(dedupKey({ ...noId, payload: { stage: "test" } })).not.toBe(dedupKey(noId));
  });
});

describe("normalizeLine: telemetry in the upstream shapes", () => {
  const read = (type: string, payload: Record<string, unknown>) =>
    normalizeLine(JSON.stringify(envelope(type, payload)), ctx);

  it("reads only well-formed topics and links from a payload whose schema has none", () => {
    const beat = read("heartbeat.v1", {
      stage: "build",
      topics: [1, null, { a: 1 }, "CI"],
      links: [
        7,
        { type: "weird", ref: "x" },
        { type: "issue" },
        "#12",
        { type: "url", ref: "https://a.example" },
      ],
    });
    expect(beat.ok).toBe(true);
    if (!beat.ok) return;
    expect(beat.event.topics).toEqual(["ci"]);
    expect(beat.event.links).toEqual([
      { type: "issue", ref: "#12" },
      { type: "url", ref: "https://a.example" },
    ]);
  });

  it("reads a heartbeat's nested state, a progress's percent and a worker error's error", () => {
    const beat = read("heartbeat.v1", {
      state: {
        stage: "VALIDATE",
        issue_number: 12,
        attempt: 3,
        progress: { step: "tests", percent: 25 },
        repo: { main_ancestor_sha: "abcdef1", catalog_hash_seen: "sha256:x" },
      },
    });
    expect(beat.ok && beat.event).toMatchObject({
      kind: "heartbeat",
      stage: "VALIDATE",
      issue: "#12",
      attempt: 3,
      progress: 0.25,
      main_ancestor_sha: "abcdef1",
      catalog_hash_seen: "sha256:x",
    });
    const progress = read("task_progress.v1", { step: "lint", percent: 50, issue_number: 4 });
    expect(progress.ok && progress.event).toMatchObject({ issue: "#4", progress: 0.5 });
    const error = read("worker_error.v1", {
      error: { error_id: "e-9", error_type: "Timeout", message: "slow", should_retry: false },
    });
    expect(error.ok && error.event).toMatchObject({
      kind: "error",
      error_type: "Timeout",
      error_id: "e-9",
      text: "slow",
      retryable: false,
      // A digest of the sender id and error id, never the ids themselves.
      key: expect.stringMatching(/^eh:[0-9a-f]{64}$/),
    });
  });

  it("never refuses telemetry for a missing field or an unknown shape, only for a wrong type", () => {
    expect(read("task_progress.v1", {}).ok).toBe(true);
    expect(read("task_progress.v1", { custom: { deep: [1] }, status: "whatever" }).ok).toBe(true);
    expect(read("worker_error.v1", { error: { error_id: "only" } }).ok).toBe(true);
    expect(read("heartbeat.v1", { state: {} }).ok).toBe(true);
    const wrong = read("worker_error.v1", { error: { is_transient: "yes" } });
    expect(wrong).toMatchObject({ ok: false, reason: "invalid-payload" });
    expect(!wrong.ok && wrong.detail).toContain("payload.error.is_transient");
    expect(read("heartbeat.v1", { state: { issue_number: "12" } }).ok).toBe(false);
  });

  it("deduplicates repeated reports of one error_id, whatever their event ids", () => {
    const a = envelope("worker_error.v1", { error: { error_id: "e-1" } }, { event_id: "x" });
    const b = envelope("worker_error.v1", { error: { error_id: "e-1" } }, { event_id: "y" });
    expect(dedupKey(a)).toBe(dedupKey(b));
  });
});

describe("every field a worker fills is redacted", () => {
  const gh = () => `gh${"p"}_${"aB3dE6gH9j".repeat(4)}`;
  const line = (overrides: Record<string, unknown>, payload: Record<string, unknown>) =>
    JSON.stringify({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_event.v1",
      sent_at: "2026-11-22T10:00:00.000Z",
      sender: { role: "worker", id: "w-1" },
      seq: 1,
      payload,
      ...overrides,
    });

  it("redacts the sender id, keeping it a safe id", () => {
    const r = normalizeLine(line({ sender: { role: "worker", id: gh() } }, { kind: "k" }), ctx);
    if (!r.ok) throw new Error(r.detail);
    expect(r.event.sender.id).toBe("REDACTED-github-pat");
    expect(r.event.redactions).toBe(1);
  });

  it("redacts a memory_event kind and topics before they are lower-cased", () => {
    const aws = `AK${"IA"}QW3RT7YU2IO5PA8S`;
    const r = normalizeLine(line({}, { kind: `${gh()} carrier`, topics: [aws] }), ctx);
    if (!r.ok) throw new Error(r.detail);
    expect(r.event.kind).toBe("[REDACTED:github-pat] carrier");
    expect(r.event.topics).toEqual(["[REDACTED:aws-access-token]"]);
  });

  it("keys an event by the digest of its id, never the id", () => {
    const r = normalizeLine(line({ event_id: gh() }, { kind: "k" }), ctx);
    if (!r.ok) throw new Error(r.detail);
    expect(r.event.key).toBe(eventIdKey(gh()));
    expect(r.event.key).not.toContain(gh().slice(4));
  });

  it("replaces lone surrogates with U+FFFD and counts them", () => {
    const r = normalizeLine(line({}, { kind: "k", text: "a\uD800b", topics: ["x\uDC00"] }), ctx);
    if (!r.ok) throw new Error(r.detail);
    expect(r.event.text).toBe("a\uFFFDb");
    expect(r.event.topics).toEqual(["x\uFFFD"]);
    expect(r.repaired).toBe(2);
  });

  it("decodes JSON escapes before redacting a quarantine excerpt", () => {
    const token = gh();
    const raw = `{"payload": {"text": "\\u0067${token.slice(1)}", `;
    const excerpt = quarantineExcerpt(raw, ctx.redactor);
    expect(excerpt.text).toContain("[REDACTED:github-pat]");
    expect(excerpt.text).not.toContain(token.slice(4));
  });

  it("cuts a quarantine excerpt on a grapheme boundary", () => {
    const excerpt = quarantineExcerpt(`${"a".repeat(299)}\u{1F600}tail`, ctx.redactor);
    expect(excerpt.text).toBe("a".repeat(299));
  });
});
