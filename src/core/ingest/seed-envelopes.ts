import type { Seed, SeedLearning } from "../../schema/seed.js";
import { TYPE_PREFIX } from "../graph/learnings.js";
import { sha256Hex } from "../model/canonical.js";
import { SEED_PROPOSAL_SENDER_ID, SEED_SENDER_ID } from "./seed-senders.js";

/** The parts of a seed.json import, as `director ingest --from-seed` reports them. */
export interface SeedEnvelopes {
  /** NDJSON, one `memory_note.v1` envelope per line, for the normal ingest path. */
  text: string;
  /** Confirmed learnings imported (patterns, insights, self-knowledge). */
  learnings: number;
  /** Pending proposals imported. */
  proposals: number;
  /** Learnings not confirmed in the seed, and proposals already accepted or rejected there. */
  skipped: number;
}

const LISTS = [
  ["patterns", "pattern"],
  ["insights", "insight"],
  ["selfKnowledge", "self_knowledge"],
] as const;

const MAX_TOPICS = 32;
const MAX_TOPIC = 64;
const MAX_TEXT = 8000;

function utc(iso: string): string {
  return new Date(iso).toISOString();
}

function topicsOf(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const tag of tags) {
    const topic = tag.trim().slice(0, MAX_TOPIC);
    if (topic.length > 0 && !out.includes(topic)) out.push(topic);
  }
  return out.slice(0, MAX_TOPICS);
}

/**
 * A pai-seed `seed.json` as agent-bus notes. Confirmed learnings keep their type (as the fact
 * prefix learnings are typed by), content, source (`sender.run_id`), tags (topics) and
 * confirmation time (`sent_at`, which the engram records in `origins`); pending proposals
 * become notes of their own sender, proposed like any other note. Event ids come from the
 * list, the seed's id and the content, so a second import of the same seed adds nothing.
 * Pure: the same seed gives the same bytes.
 */
export function seedEnvelopes(
  seed: Seed,
  privacy: "public" | "private" = "private",
): SeedEnvelopes {
  const lines: string[] = [];
  let learnings = 0;
  let proposals = 0;
  let skipped = 0;
  const note = (
    list: string,
    item: { id: string; content: string; source: string },
    type: keyof typeof TYPE_PREFIX,
    fields: { sender: string; sentAt: string; topics: string[]; confidence?: number },
  ) => {
    const eventId = `seed:${list}:${sha256Hex(`${item.id}\u0000${item.content}`).slice(0, 32)}`;
    lines.push(
      JSON.stringify({
        schema_version: "agentbus-envelope/v1",
        message_type: "memory_note.v1",
        sent_at: fields.sentAt,
        sender: { role: "operator", id: fields.sender, run_id: item.source.slice(0, 128) },
        seq: lines.length,
        event_id: eventId,
        payload: {
          kind: "fact",
          text: `${TYPE_PREFIX[type]}${item.content}`.slice(0, MAX_TEXT),
          topics: fields.topics,
          ...(fields.confidence !== undefined ? { confidence: fields.confidence } : {}),
          privacy,
        },
      }),
    );
  };
  for (const [list, type] of LISTS) {
    for (const learning of seed.learned[list] as SeedLearning[]) {
      if (!learning.confirmed) {
        skipped++;
        continue;
      }
      note(list, learning, type, {
        sender: SEED_SENDER_ID,
        sentAt: utc(learning.confirmedAt ?? learning.extractedAt),
        topics: topicsOf(learning.tags),
      });
      learnings++;
    }
  }
  for (const proposal of seed.state.proposals) {
    if (proposal.status !== "pending") {
      skipped++;
      continue;
    }
    note("proposals", proposal, proposal.type, {
      sender: SEED_PROPOSAL_SENDER_ID,
      sentAt: utc(proposal.extractedAt),
      topics: ["pai_proposal"],
      ...(proposal.confidence !== undefined ? { confidence: proposal.confidence } : {}),
    });
    proposals++;
  }
  return { text: lines.map((l) => `${l}\n`).join(""), learnings, proposals, skipped };
}
