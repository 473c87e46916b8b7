/** A swarm's stream of envelopes whose groups outgrow one engram (see engram-budget.test.ts). */
import { type Envelope, heartbeat, ndjson, note } from "./envelopes.js";
import { seededRandom } from "./random.js";

export interface StreamShape {
  count: number;
  seed: number;
  /** Share of notes with a confidence and an outcome (each an episode). */
  episodes: number;
  /** Longest note text. */
  textChars: number;
  workers: number;
}

/**
 * A swarm's stream: long notes on a few issues, many with an outcome (episodes), with file
 * links; heartbeats from many workers. What makes a group's extras outgrow an engram.
 */
export function swarmStream(shape: StreamShape): string {
  const random = seededRandom(shape.seed);
  const pick = (n: number) => Math.floor(random() * n);
  const lines: Envelope[] = [];
  for (let i = 0; i < shape.count; i++) {
    const sender = `w${String(pick(shape.workers)).padStart(2, "0")}`;
    const sentAt = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    if (i % 4 === 3) {
      lines.push(heartbeat(`stage-${pick(6)}`, { eventId: `hb-${i}`, sender, seq: i, sentAt }));
      continue;
    }
    const length = 40 + pick(Math.max(1, shape.textChars - 40));
    const text = `note ${i} ${"lorem ipsum dolor ".repeat(60)}`.slice(0, length);
    const env = note(i % 9 === 0 ? "decision" : i % 5 === 0 ? "lesson" : "fact", text, {
      eventId: `n-${i}`,
      sender,
      seq: i,
      sentAt,
      topics: [`t${pick(4)}`],
      links: [`src/part${pick(120)}.ts`, `src/other${pick(120)}.ts`],
      ...(i % 9 === 0 ? { rationale: `because ${i}` } : {}),
    });
    const payload = env.payload as Record<string, unknown>;
    payload.issue = `#${1 + pick(3)}`;
    if (random() < shape.episodes) {
      payload.confidence = Math.round(random() * 100) / 100;
      payload.outcome = ["success", "failure", "partial"][pick(3)];
    }
    lines.push(env);
  }
  return ndjson(lines);
}
