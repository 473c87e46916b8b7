/**
 * Properties of what a Director cycle writes, from text with any UTF-16 in it (lone
 * surrogates, emoji sequences, long texts that are cut): no memory file holds a lone
 * surrogate, and a strict RFC 8785 library (`canonicalize`) reproduces every hash written.
 */
import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planCycle } from "../../src/core/compaction/plan.js";
import { normalizeLine } from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { emptyCatalog } from "../../src/core/model/engram.js";
import { countLoneSurrogates, cutText } from "../../src/core/model/text.js";
import { defaultConfig } from "../../src/schema/config.js";
import { ENVELOPE_SCHEMAS } from "../../src/schema/envelope.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";

// The package is CommonJS (`module.exports = serialize`); its typings declare a default export.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

const memory = { ...defaultConfig().memory, buffer_keep_recent_events: 0 };
const redactor = createRedactor();

/** Any UTF-16 code units (lone surrogates included), with emoji and combining marks mixed in. */
const anyText = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.constantFrom("\u{1F600}", "\u{1F469}\u200D\u{1F4BB}", "e\u0301", "\uD800", "\uDFFF"),
    ),
    { minLength: 1, maxLength: 30 },
  )
  .map((parts) => parts.join(""));

function envelope(i: number, type: string, payload: Record<string, unknown>): string {
  return JSON.stringify({
    schema_version: "agentbus-envelope/v1",
    message_type: type,
    sent_at: "2026-11-22T10:00:00Z",
    sender: { role: "worker", id: `w${i % 3}` },
    seq: i,
    payload,
    event_id: `ev-${i}`,
  });
}

function lone(value: unknown): number {
  if (typeof value === "string") return countLoneSurrogates(value);
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + lone(v), 0);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).reduce((n, [k, v]) => n + countLoneSurrogates(k) + lone(v), 0);
  }
  return 0;
}

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("what a cycle writes is valid Unicode and hashes the RFC 8785 way", () => {
  it("holds no lone surrogate, and canonicalize reproduces every hash", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyText, anyText), { minLength: 1, maxLength: 8 }), (items) => {
        const events: MemoryEvent[] = [];
        items.forEach(([a, b], i) => {
          const text = a.repeat(1 + (i % 3) * 20).slice(0, 8000) || "x";
          const line =
            i % 3 === 0
              ? envelope(i, "memory_note.v1", {
                  kind: "lesson",
                  text,
                  rationale: b || "r",
                  topics: [cutText(b, 64) || "t"],
                })
              : i % 3 === 1
                ? envelope(i, "worker_error.v1", { error_type: "E", message: text })
                : envelope(i, "memory_event.v1", { kind: cutText(b, 512) || "k", text });
          const r = normalizeLine(line, {
            receivedAt: "2026-11-22T10:00:00.000Z",
            maxMessageBytes: 65536,
            schemas: ENVELOPE_SCHEMAS,
            redactor,
            sealKey: undefined,
          });
          if (r.ok) events.push({ ...r.event, seq: i + 1 });
        });
        const plan = planCycle({
          slice: events,
          catalog: emptyCatalog(),
          engrams: new Map(),
          recalls: new Map(),
          memory,
          asOf: "2026-11-22T10:00:00.000Z",
        });
        for (const write of plan.writes) {
          if (!write.path.endsWith(".json")) {
            expect(countLoneSurrogates(write.text), write.path).toBe(0);
            continue;
          }
          const doc = JSON.parse(write.text) as Record<string, unknown>;
          expect(lone(doc), write.path).toBe(0);
          if (write.path === "memory/catalog.json") {
            const { hash, ...rest } = doc;
            expect(sha256(canonicalize(rest) as string)).toBe(hash);
          } else {
            const { hash, engram_id: _id, ...rest } = doc;
            expect(sha256(canonicalize(rest) as string), write.path).toBe(hash);
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
