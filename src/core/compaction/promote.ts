import type { Decision, Engram, EngramBody, LearningOrigin } from "../../schema/engram.js";
import { learningIdOfFact } from "../graph/learnings.js";
import { saidOf, saidStated } from "../graph/said-by.js";
import { replacedBy, replacementsOf } from "../graph/supersession.js";
import { isEarlierHistory } from "../history/kinds.js";
import { engramFileSize, sealEngram } from "../model/engram.js";
import { compareText, cutText } from "../model/text.js";
import { CREATED_BY, factKey } from "./compact.js";
import { originsStated } from "./pack.js";

export interface PromotionPolicy {
  promote_repeat_min: number;
  promote_recall_min: number;
  promote_decisions: boolean;
  /** A decision whose note stated less stays short-term until it is stated again. */
  promote_min_confidence: number;
  engram_max_bytes: number;
}

export interface PromotionInput {
  st: readonly Engram[];
  lt: readonly Engram[];
  /** engram_id -> how often `worker recall` returned it. */
  recalls: ReadonlyMap<string, number>;
  /** Batch id and time of this cycle (from receipt stamps). */
  version: string;
  createdAt: string;
  policy: PromotionPolicy;
  /** Links each LT engram to the registry's entities (absent: no `entities`). */
  entities?: ((body: EngramBody) => string[]) | undefined;
}

interface Candidate {
  kind: "fact" | "decision";
  key: string;
  fact?: string;
  decision?: Decision;
  sources: Set<string>;
  reason: string;
}

/**
 * ST -> LT promotion. A fact repeated in `promote_repeat_min` ST engrams, every fact and
 * decision of an engram recalled `promote_recall_min` times, and explicit decisions are
 * carried into one new LT engram naming what it supersedes. Engrams are append-only, so the
 * ST sources stay until eviction; what LT already holds is never promoted again.
 */
export function planPromotion(input: PromotionInput): Engram[] {
  const { policy } = input;
  const ltFacts = new Set<string>();
  const ltDecisions = new Set<string>();
  const superseded = new Set<string>();
  // What a later item replaced is never carried forward: it would come back as current. An
  // LT copy so replaced no longer counts as held: the item said again is promoted anew.
  const replacements = replacementsOf([...input.st, ...input.lt]);
  for (const engram of input.lt) {
    for (const fact of engram.facts) {
      if (!replacedBy(replacements, fact, engram)) ltFacts.add(factKey(fact));
    }
    for (const d of engram.decisions) {
      if (!replacedBy(replacements, d.title, engram)) ltDecisions.add(factKey(d.title));
    }
    for (const id of engram.supersedes ?? []) superseded.add(id);
  }
  const st = [...input.st].sort((a, b) => compareText(a.engram_id, b.engram_id));
  const candidates = new Map<string, Candidate>();
  const add = (c: Omit<Candidate, "sources">, source: string) => {
    const id = `${c.kind}:${c.key}`;
    const existing = candidates.get(id);
    if (existing) existing.sources.add(source);
    else candidates.set(id, { ...c, sources: new Set([source]) });
  };

  // Repetition: count distinct ST engrams per promotable fact, and the engrams that restated
  // it as evidence (dedup before create keeps them from stating it again).
  const restatedIn = new Map<string, string[]>();
  for (const engram of st) {
    for (const [id, count] of Object.entries(engram.evidence ?? {})) {
      const list = restatedIn.get(id) ?? [];
      for (let i = 0; i < count; i++) list.push(engram.engram_id);
      restatedIn.set(id, list);
    }
  }
  const occurrences = new Map<string, { fact: string; sources: string[] }>();
  for (const engram of st) {
    const tentative = new Set((engram.tentative ?? []).map(factKey));
    for (const fact of engram.facts) {
      const key = factKey(fact);
      if (tentative.has(key) || ltFacts.has(key)) continue;
      if (replacedBy(replacements, fact, engram)) continue;
      const entry = occurrences.get(key);
      if (!entry) occurrences.set(key, { fact, sources: [engram.engram_id] });
      else if (!entry.sources.includes(engram.engram_id)) entry.sources.push(engram.engram_id);
    }
  }
  for (const [key, { fact, sources }] of occurrences) {
    const restated = restatedIn.get(learningIdOfFact(fact)) ?? [];
    const times = sources.length + restated.length;
    if (times < policy.promote_repeat_min) continue;
    for (const source of new Set([...sources, ...restated])) {
      add({ kind: "fact", key, fact, reason: `repeated in ${times} engrams` }, source);
    }
  }

  for (const engram of st) {
    // A decision stated below `promote_min_confidence` waits until it is stated again.
    const promotable = (decision: Decision) => {
      if (ltDecisions.has(factKey(decision.title))) return undefined;
      if (replacedBy(replacements, decision.title, engram)) return undefined;
      if ((decision.confidence ?? 1) >= policy.promote_min_confidence) return "";
      const again = restatedIn.get(learningIdOfFact(decision.title))?.length ?? 0;
      return again > 0 ? `, confirmed ${again} time${again === 1 ? "" : "s"}` : undefined;
    };
    // Decisions the history moved past stay short-term: long-term memory is what stands.
    if (policy.promote_decisions && !isEarlierHistory(engram)) {
      for (const decision of engram.decisions) {
        const confirmed = promotable(decision);
        if (confirmed === undefined) continue;
        const key = factKey(decision.title);
        const reason = `explicit decision${confirmed}`;
        add({ kind: "decision", key, decision, reason }, engram.engram_id);
      }
    }
    const recalled = input.recalls.get(engram.engram_id) ?? 0;
    if (recalled >= policy.promote_recall_min && !superseded.has(engram.engram_id)) {
      const tentative = new Set((engram.tentative ?? []).map(factKey));
      const reason = `recalled ${recalled} times`;
      for (const fact of engram.facts) {
        const key = factKey(fact);
        if (!tentative.has(key) && !ltFacts.has(key) && !replacedBy(replacements, fact, engram)) {
          add({ kind: "fact", key, fact, reason }, engram.engram_id);
        }
      }
      for (const decision of engram.decisions) {
        const confirmed = promotable(decision);
        if (confirmed !== undefined) {
          add(
            { kind: "decision", key: factKey(decision.title), decision, reason },
            engram.engram_id,
          );
        }
      }
    }
  }
  if (candidates.size === 0) return [];

  // Decisions newest first (as the ST engrams hold them, a history import's newest commit
  // first), so that MEMORY.md, which lists LT decisions first, keeps the newest within its
  // budget; facts by their text.
  const rank = new Map<string, number>();
  for (const engram of [...st].sort(newestFirst)) {
    if (isEarlierHistory(engram)) continue;
    for (const d of engram.decisions) {
      const id = `decision:${factKey(d.title)}`;
      if (!rank.has(id)) rank.set(id, rank.size);
    }
  }
  const ordered = [...candidates.values()].sort(
    (a, b) =>
      (rank.get(`${a.kind}:${a.key}`) ?? rank.size) -
        (rank.get(`${b.kind}:${b.key}`) ?? rank.size) ||
      compareText(`${a.kind}:${a.key}`, `${b.kind}:${b.key}`),
  );
  const byId = new Map(st.map((e) => [e.engram_id, e]));
  return packPromotion(ordered, byId, input);
}

function packPromotion(
  candidates: readonly Candidate[],
  byId: ReadonlyMap<string, Engram>,
  input: PromotionInput,
): Engram[] {
  const buildBody = (items: readonly Candidate[], part = 0): EngramBody => {
    const sources = [...new Set(items.flatMap((c) => [...c.sources]))].sort();
    const sourceEngrams = sources.map((id) => byId.get(id)).filter((e): e is Engram => !!e);
    const topicCounts = new Map<string, number>();
    for (const e of sourceEngrams)
      for (const t of e.topics) topicCounts.set(t, (topicCounts.get(t) ?? 0) + 1);
    const starts = sourceEngrams.map((e) => e.source_window.start_ts).sort();
    const ends = sourceEngrams.map((e) => e.source_window.end_ts).sort();
    const reasons = [
      ...new Set(
        items.map((c) => `${c.reason}: ${c.kind === "fact" ? c.fact : c.decision?.title}`),
      ),
    ]
      .slice(0, 50)
      .map((r) => (r.length > 200 ? `${cutText(r, 199)}…` : r));
    const body: EngramBody = {
      version: input.version,
      scope: "lt",
      created_at: input.createdAt,
      source_window: {
        start_ts: starts[0] ?? input.createdAt,
        end_ts: ends[ends.length - 1] ?? input.createdAt,
      },
      topics: [...topicCounts.entries()]
        .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
        .map(([t]) => t)
        .slice(0, 12),
      facts: items.flatMap((c) => (c.kind === "fact" && c.fact !== undefined ? [c.fact] : [])),
      decisions: items.flatMap((c) => (c.kind === "decision" && c.decision ? [c.decision] : [])),
      links: firstLinks(sourceEngrams, 64),
      provenance: {
        created_by: CREATED_BY,
        run_id: `promote-${input.version}`,
        event_count: 0,
        senders: [...new Set(sourceEngrams.flatMap((e) => e.provenance.senders))]
          .sort()
          .slice(0, 64),
        message_types: {},
        // Chunks of one promotion keep their order (the focus view reads part 1 first).
        ...(part > 0 ? { part: part + 1 } : {}),
      },
      // Sealed text never leaves its ST engram, so an LT engram is at most private.
      privacy: sourceEngrams.every((e) => e.privacy === "public") ? "public" : "private",
      signals: {
        notes: items.length,
        decisions: items.filter((c) => c.kind === "decision").length,
        lessons: items.filter((c) => c.fact?.startsWith("Lesson: ")).length,
        incidents: items.filter((c) => c.fact?.startsWith("Incident: ")).length,
        errors: 0,
        ...confidenceOf(sourceEngrams),
        redactions: 0,
        truncated: 0,
      },
      supersedes: sources,
      ...replacesOf(items, sourceEngrams),
      promotion: { reasons },
    };
    const origins = originsStated(body, originsOf(sourceEngrams));
    if (origins) body.origins = origins;
    // Each item keeps who said it in its sources, not the union of everyone they hold.
    const said = saidStated(body, saidOf(sourceEngrams));
    if (said) body.said_by = said;
    if (input.entities) {
      const entities = input.entities(body);
      if (entities.length > 0) body.entities = entities;
    }
    return body;
  };
  const max = input.policy.engram_max_bytes;
  const out: Engram[] = [];
  // Generous per-item estimate (the item, its reason line, a new source id); exact sizes are
  // measured once per engram, so packing stays linear.
  const cost = (c: Candidate) =>
    2 * Buffer.byteLength(c.fact ?? JSON.stringify(c.decision), "utf8") + 80 + 48 * c.sources.size;

  const queue = candidates.map((c) => ({ ...c }));
  let index = 0;
  while (index < queue.length) {
    const chunk: Candidate[] = [queue[index] as Candidate];
    index++;
    let body = buildBody(chunk, out.length);
    let size = engramFileSize(body);
    let estimate = size;
    while (index < queue.length) {
      const next = queue[index] as Candidate;
      if (estimate + cost(next) > max) break;
      chunk.push(next);
      estimate += cost(next);
      index++;
    }
    // Each body built and measured once (building one was most of a promotion's time): the
    // body that fits is the one sealed.
    if (chunk.length > 1) {
      body = buildBody(chunk, out.length);
      size = engramFileSize(body);
    }
    while (chunk.length > 1 && size > max) {
      chunk.pop();
      index--;
      body = buildBody(chunk, out.length);
      size = engramFileSize(body);
    }
    // One item larger than a whole engram: shorten it rather than drop it or break the budget.
    const only = chunk[0] as Candidate;
    while (chunk.length === 1 && size > max && shortenCandidate(only)) {
      body = buildBody(chunk, out.length);
      size = engramFileSize(body);
    }
    if (size <= max) out.push(sealEngram(body));
  }
  return out;
}

/**
 * What the sources said of their confidence and surprise, carried into the LT engram: the
 * mean confidence weighted by each source's notes, the highest surprise.
 */
function confidenceOf(
  sources: readonly Engram[],
): Pick<Engram["signals"], "max_surprise" | "mean_confidence"> {
  let weighted = 0;
  let weight = 0;
  let surprise: number | null = null;
  for (const e of sources) {
    const { mean_confidence: mean, max_surprise: max, notes } = e.signals;
    if (mean !== null) {
      weighted += mean * Math.max(1, notes);
      weight += Math.max(1, notes);
    }
    if (max !== null) surprise = surprise === null ? max : Math.max(surprise, max);
  }
  return {
    max_surprise: surprise,
    mean_confidence: weight === 0 ? null : Math.round((weighted / weight) * 1000) / 1000,
  };
}

/** What the promoted items replaced, as their ST engrams say: carried so `was` stays hidden. */
function replacesOf(
  items: readonly Candidate[],
  sources: readonly Engram[],
): Pick<EngramBody, "replaces"> {
  const carried = new Set(
    items.map((c) => factKey(c.kind === "fact" ? (c.fact ?? "") : (c.decision?.title ?? ""))),
  );
  const out: NonNullable<EngramBody["replaces"]> = [];
  const seen = new Set<string>();
  for (const e of sources) {
    for (const r of e.replaces ?? []) {
      const id = `${r.was}\0${r.now}`;
      if (!carried.has(factKey(r.now)) || seen.has(id)) continue;
      seen.add(id);
      out.push(r);
    }
  }
  return out.length > 0 ? { replaces: out } : {};
}

/** The origins the engrams record, the first engram's for a learning two of them record. */
function originsOf(engrams: readonly Engram[]): Map<string, LearningOrigin> {
  const out = new Map<string, LearningOrigin>();
  for (const engram of engrams) {
    for (const [id, origin] of Object.entries(engram.origins ?? {})) {
      if (!out.has(id)) out.set(id, origin);
    }
  }
  return out;
}

/** The first `limit` distinct links of the engrams, in order. */
function firstLinks(engrams: readonly Engram[], limit: number): Engram["links"] {
  const seen = new Set<string>();
  const out: Engram["links"] = [];
  for (const engram of engrams) {
    for (const link of engram.links) {
      const key = `${link.type}:${link.ref}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(link);
      if (out.length === limit) return out;
    }
  }
  return out;
}

function shortenCandidate(c: Candidate): boolean {
  const half = (text: string) => `${cutText(text, Math.floor(text.length / 2))}…`;
  if (c.fact !== undefined && c.fact.length > 40) {
    c.fact = half(c.fact);
    return true;
  }
  if (c.decision && c.decision.rationale.length > 40) {
    c.decision = { ...c.decision, rationale: half(c.decision.rationale) };
    return true;
  }
  if (c.decision && c.decision.title.length > 40) {
    c.decision = { ...c.decision, title: half(c.decision.title) };
    return true;
  }
  return false;
}

function newestFirst(a: Engram, b: Engram): number {
  const part = (e: Engram) => (typeof e.provenance.part === "number" ? e.provenance.part : 1);
  return (
    compareText(b.version, a.version) || part(a) - part(b) || compareText(a.engram_id, b.engram_id)
  );
}
