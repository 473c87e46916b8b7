import type { Privacy } from "../../schema/common.js";
import type { Engram } from "../../schema/engram.js";
import type { Outcome } from "../../schema/envelope.js";
import { sha256Hex } from "../model/canonical.js";

/** The kinds of learning, named as seed.json and the learning lifecycle name them. */
export type LearningType = "decision" | "insight" | "pattern" | "convention" | "self_knowledge";

/**
 * The names a type filter accepts: the learning types, and `lesson`, the note kind a
 * lesson is written as (`worker emit --kind lesson`), which becomes an `insight` learning.
 */
export const LEARNING_TYPE_NAMES = [
  "decision",
  "insight",
  "lesson",
  "pattern",
  "convention",
  "self_knowledge",
] as const;

/** A type filter's name as its learning type (`lesson` is `insight`); undefined if unknown. */
export function learningTypeOf(name: string): LearningType | undefined {
  if (name === "lesson") return "insight";
  return (LEARNING_TYPE_NAMES as readonly string[]).includes(name)
    ? (name as LearningType)
    : undefined;
}

/** One thing memory knows: a decision or a firm fact of an engram, deduplicated across engrams. */
export interface Learning {
  /** `l_` and 16 hex digits of the normalized text's digest: the same claim has one id. */
  id: string;
  type: LearningType;
  text: string;
  rationale: string | null;
  /** Engrams that state it, newest batch first; the first is where it is read from. */
  engrams: string[];
  scope: "st" | "lt";
  /** How many engrams state it, plus the times later engrams stated it again (`evidence`). */
  evidence: number;
  /**
   * The confidence its note stated, in the newest engram stating one; an engram written
   * before items kept theirs gives the mean of its notes (null: none stated).
   */
  confidence?: number | null;
  /** The outcome its note stated (absent: none stated). */
  outcome?: Outcome;
  /** Imported from another memory (`origins`): where from, and when it was confirmed there. */
  origin?: { source: string; confirmed_at: string | null } | null;
  /**
   * Where a session's knowledge record says it may go (`KnowledgeItem.privacy`); absent for
   * engrams' learnings, whose privacy is their engrams'. Sync takes the strictest of both.
   */
  privacy?: Privacy;
  /** Creation time of the oldest engram stating it (ISO-8601). */
  written_at: string;
  topics: string[];
  links: { type: string; ref: string }[];
  senders: string[];
}

const PREFIX_TYPE: [string, LearningType][] = [
  ["Lesson: ", "insight"],
  ["Insight: ", "insight"],
  ["Convention: ", "convention"],
  ["Pattern: ", "pattern"],
  ["Self-knowledge: ", "self_knowledge"],
];

/** The fact prefix that keeps a learning's type in an engram (`typed` reads it back). */
export const TYPE_PREFIX: Record<Exclude<LearningType, "decision">, string> = {
  insight: "Insight: ",
  convention: "Convention: ",
  pattern: "Pattern: ",
  self_knowledge: "Self-knowledge: ",
};

/** Lowercased, whitespace-folded text: two statements that differ only there are one. */
export function normalizeClaim(text: string): string {
  // Most claims are printable ASCII with single spaces: NFKC leaves such text as it is and
  // the only whitespace to fold is a doubled, leading or trailing space. Promotion and dedup
  // key every fact of memory each cycle, so the regular expression is kept for the rest.
  if (PRINTABLE_ASCII.test(text) && !text.includes("  ")) {
    const lower = text.toLowerCase();
    return lower.startsWith(" ") || lower.endsWith(" ") ? lower.trim() : lower;
  }
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

export function learningId(text: string): string {
  return `l_${sha256Hex(normalizeClaim(text)).slice(0, 16)}`;
}

/** The id of the learning a fact (with its type prefix) or a decision title states. */
export function learningIdOfFact(fact: string): string {
  return learningId(typedFact(fact).text);
}

/** A fact's learning type, read from its prefix, and its text without the prefix. */
export function typedFact(fact: string): { type: LearningType; text: string } {
  for (const [prefix, type] of PREFIX_TYPE) {
    if (fact.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase()) {
      return { type, text: fact.slice(prefix.length) };
    }
  }
  return { type: "insight", text: fact };
}

/**
 * The learnings of a set of engrams: every decision and every firm fact (telemetry and
 * tentative facts are not learnings). A claim stated by several engrams (an ST note and the LT
 * engram it was promoted into) is one learning whose evidence counts them, so a superseded
 * engram never shows the same lesson twice.
 */
export function learningsOf(engrams: readonly Engram[]): Learning[] {
  const ordered = [...engrams].sort(
    (a, b) => b.version.localeCompare(a.version) || a.engram_id.localeCompare(b.engram_id),
  );
  const byId = new Map<string, Learning>();
  const add = (engram: Engram, type: LearningType, text: string, rationale: string | null) => {
    const id = learningId(text);
    const known = byId.get(id);
    if (known) {
      if (!known.engrams.includes(engram.engram_id)) {
        known.engrams.push(engram.engram_id);
        known.evidence++;
      }
      if (engram.created_at < known.written_at) known.written_at = engram.created_at;
      if (engram.scope === "lt") known.scope = "lt";
      known.rationale ??= rationale;
      // Said again elsewhere: whoever said it there said it too.
      const more = itemSaid(engram, id);
      known.senders = [...new Set([...known.senders, ...more.senders])].sort();
      const seen = new Set(known.links.map((l) => `${l.type}:${l.ref}`));
      for (const l of more.links)
        if (!seen.has(`${l.type}:${l.ref}`)) known.links.push({ type: l.type, ref: l.ref });
      known.origin ??= originOf(engram, id);
      known.confidence ??= confidenceIn(engram, id);
      const outcome = itemStated(engram, id).outcome;
      if (known.outcome === undefined && outcome !== undefined) known.outcome = outcome;
      return;
    }
    byId.set(id, {
      id,
      type,
      text,
      rationale,
      engrams: [engram.engram_id],
      scope: engram.scope,
      evidence: 1,
      confidence: confidenceIn(engram, id),
      ...(() => {
        const { outcome } = itemStated(engram, id);
        return outcome !== undefined ? { outcome } : {};
      })(),
      origin: originOf(engram, id),
      written_at: engram.created_at,
      topics: [...engram.topics],
      ...(() => {
        const own = itemSaid(engram, id);
        return {
          links: own.links.map((l) => ({ type: l.type, ref: l.ref })),
          senders: [...own.senders],
        };
      })(),
    });
  };
  for (const engram of ordered) {
    for (const d of engram.decisions) add(engram, "decision", d.title, d.rationale || null);
    const tentative = new Set(engram.tentative ?? []);
    for (const fact of engram.facts) {
      if (tentative.has(fact)) continue;
      const t = typedFact(fact);
      add(engram, t.type, t.text, null);
    }
  }
  // Engrams that stated a known claim again carry its evidence instead of a copy.
  for (const engram of ordered) {
    for (const [id, count] of Object.entries(engram.evidence ?? {})) {
      const known = byId.get(id);
      if (known) known.evidence += count;
    }
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** What a note stated of how sure it was and how it turned out. */
export interface ItemStated {
  confidence?: number | undefined;
  outcome?: Outcome | undefined;
}

/**
 * What learning `id`'s note stated in `engram`: its own confidence (`said_by`, else its
 * decision's) and outcome; each undefined when none was stated.
 */
export function itemStated(engram: Pick<Engram, "decisions" | "said_by">, id: string): ItemStated {
  const own = engram.said_by?.[id];
  const decision =
    own?.confidence === undefined
      ? engram.decisions.find((d) => d.confidence !== undefined && learningIdOfFact(d.title) === id)
      : undefined;
  return { confidence: own?.confidence ?? decision?.confidence, outcome: own?.outcome };
}

/**
 * A learning's confidence in `engram`: its own; the engram's mean only where no item states
 * its own (an engram written before items kept theirs).
 */
function confidenceIn(engram: Engram, id: string): number | null {
  const own = itemStated(engram, id).confidence;
  if (own !== undefined) return own;
  const itemsStateTheirs =
    engram.decisions.some((d) => d.confidence !== undefined) ||
    Object.values(engram.said_by ?? {}).some((s) => s.confidence !== undefined);
  return itemsStateTheirs ? null : engram.signals.mean_confidence;
}

/**
 * Who said learning `id` in `engram`, and what they linked: its own provenance (`said_by`)
 * where the engram records one, otherwise the engram's.
 */
export function itemSaid(
  engram: Pick<Engram, "said_by" | "provenance" | "links">,
  id: string,
): { senders: readonly string[]; links: Engram["links"] } {
  const own = engram.said_by?.[id];
  return {
    senders: own?.senders ?? engram.provenance.senders,
    links: own?.links ?? engram.links,
  };
}

function originOf(engram: Engram, id: string): Learning["origin"] {
  const origin = engram.origins?.[id];
  return origin ? { source: origin.source, confirmed_at: origin.confirmed_at ?? null } : null;
}
