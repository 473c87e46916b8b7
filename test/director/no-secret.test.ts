import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planCycle } from "../../src/core/compaction/plan.js";
import { normalizeLine, quarantineExcerpt } from "../../src/core/ingest/normalize.js";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { emptyCatalog } from "../../src/core/model/engram.js";
import { defaultConfig } from "../../src/schema/config.js";
import { ENVELOPE_SCHEMAS } from "../../src/schema/envelope.js";
import type { MemoryEvent } from "../../src/schema/memory-event.js";

// Tokens are assembled at run time so this file holds no literal a scanner would flag.
const alnum = fc.stringMatching(/^[A-Za-z0-9]{36}$/);
const arbSecret = fc.oneof(
  alnum.map((s) => `gh${"p"}_${s}`),
  alnum.map((s) => `np${"m"}_${s}`),
  fc.stringMatching(/^[A-Z0-9]{16}$/).map((s) => `AK${"IA"}${s}`),
  fc.stringMatching(/^[0-9]{12}-[A-Za-z0-9]{24}$/).map((s) => `xo${"xb"}-123456789012-${s}`),
  fc.stringMatching(/^[A-Za-z0-9]{48}$/).map((s) => `s${"k"}-${s}`),
  fc.stringMatching(/^[a-z0-9]{12,20}$/).map((s) => `password=${s}`),
);

const memory = { ...defaultConfig().memory, buffer_keep_recent_events: 0 };
const redactor = createRedactor();

function envelope(i: number, type: string, payload: Record<string, unknown>): string {
  return JSON.stringify({
    schema_version: "agentbus-envelope/v1",
    message_type: type,
    sent_at: "2026-11-22T10:00:00Z",
    sender: { role: "worker", id: "w1" },
    seq: i,
    payload,
    event_id: `ev-${i}`,
  });
}

describe("nothing secret is written", () => {
  it("no engram, catalog, MEMORY.md or quarantine detail contains an injected secret", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(arbSecret, fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 5 })),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        (items) => {
          const secrets = items.map(([secret]) =>
            secret.startsWith("password=") ? secret.slice(9) : secret,
          );
          const lines = items.map(([secret, noise, where], i) => {
            const text = `${noise} ${secret} ${noise}`;
            switch (where) {
              case 0:
                return envelope(i, "memory_note.v1", { kind: "lesson", text, topics: ["t"] });
              case 1:
                return envelope(i, "memory_note.v1", {
                  kind: "decision",
                  text: "d",
                  rationale: text,
                });
              case 2:
                return envelope(i, "worker_error.v1", {
                  error_type: "E",
                  message: text,
                  stage: text.slice(0, 500),
                });
              case 3:
                return envelope(i, "task_progress.v1", { stage: "build", message: text, issue: 3 });
              case 4:
                return envelope(i, "memory_note.v1", {
                  kind: "fact",
                  text: "x",
                  links: [`https://example.com/?${secret}`],
                });
              default:
                // Invalid on purpose: the quarantine path must not echo the secret either.
                return envelope(i, "memory_note.v1", { kind: "fact", text: 7, note: text });
            }
          });
          const outputs: string[] = [];
          const events: MemoryEvent[] = [];
          lines.forEach((line, i) => {
            const r = normalizeLine(line, {
              receivedAt: "2026-11-22T10:00:00.000Z",
              maxMessageBytes: 65536,
              schemas: ENVELOPE_SCHEMAS,
              redactor,
              sealKey: undefined,
            });
            if (r.ok) events.push({ ...r.event, seq: i + 1 });
            else outputs.push(r.detail, quarantineExcerpt(line, redactor, 60 + i).text);
          });
          outputs.push(...events.map((e) => JSON.stringify(e)));
          const plan = planCycle({
            slice: events,
            catalog: emptyCatalog(),
            engrams: new Map(),
            recalls: new Map(),
            memory,
            asOf: "2026-11-22T10:00:00.000Z",
          });
          outputs.push(...plan.writes.map((w) => w.text));
          const all = outputs.join("\n");
          for (const secret of secrets) expect(all).not.toContain(secret);
        },
      ),
      { numRuns: 200 },
    );
  });
});
