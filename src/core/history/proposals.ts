import type { Engram } from "../../schema/engram.js";
import { normalizeClaim } from "../graph/learnings.js";
import { compareText } from "../model/text.js";
import { isHistoryImport } from "./kinds.js";

/**
 * A decision the history import was not sure of, as memory keeps it until someone confirms
 * it: a tentative fact (a `question` note) whose text names the commit, the classifier's
 * confidence, the title and the reason, so that `director confirm` can make it a decision.
 */

/** A proposed decision read from history. */
export interface ProposedDecision {
  /** The commit (full sha when the note links it, else the 12 digits its text names). */
  sha: string;
  confidence: number;
  title: string;
  rationale?: string;
}

const HEAD = "Proposed decision";
const SEPARATOR = " — because: ";
const PATTERN =
  /^(?:Question: )?Proposed decision \(commit ([0-9a-f]{7,40}), confidence (\d(?:\.\d+)?)\): (.+)$/s;

/** The note text of a proposed decision (the metadata first, so that a cut only shortens the reason). */
export function proposalText(p: ProposedDecision): string {
  const head = `${HEAD} (commit ${p.sha.slice(0, 12)}, confidence ${round2(p.confidence)}): ${p.title}`;
  return p.rationale ? `${head}${SEPARATOR}${p.rationale}` : head;
}

/** The proposed decision a fact states, or undefined when it states none. */
export function parseProposal(fact: string): ProposedDecision | undefined {
  const m = PATTERN.exec(fact);
  if (!m) return undefined;
  const body = m[3] as string;
  const cut = body.indexOf(SEPARATOR);
  const title = (cut === -1 ? body : body.slice(0, cut)).trim();
  const rationale = cut === -1 ? undefined : body.slice(cut + SEPARATOR.length).trim();
  return {
    sha: m[1] as string,
    confidence: Number(m[2]),
    title,
    ...(rationale ? { rationale } : {}),
  };
}

/** The id `director confirm` takes: the commit's first 12 digits. */
export function proposalId(p: Pick<ProposedDecision, "sha">): string {
  return p.sha.slice(0, 12);
}

function round2(n: number): string {
  return String(Math.round(Math.min(1, Math.max(0, n)) * 100) / 100);
}

/** A proposal as memory holds it, with the engram it lives in. */
export interface HeldProposal extends ProposedDecision {
  id: string;
  engram_id: string;
  /** The engram's area topic (its first topic after the group label), when it names one. */
  topics: string[];
}

/**
 * The proposed decisions a history import left in memory, newest engram first, without those
 * already decided (a decision of the same title is in memory: confirmed before). Pure.
 */
export function heldProposals(
  engrams: readonly Pick<
    Engram,
    "engram_id" | "version" | "topics" | "tentative" | "decisions" | "provenance"
  >[],
): HeldProposal[] {
  const decided = new Set(engrams.flatMap((e) => e.decisions.map((d) => normalizeClaim(d.title))));
  const seen = new Set<string>();
  const out: HeldProposal[] = [];
  const ordered = [...engrams].sort(
    (a, b) => compareText(b.version, a.version) || compareText(a.engram_id, b.engram_id),
  );
  for (const engram of ordered) {
    if (!isHistoryImport(engram)) continue;
    for (const fact of engram.tentative ?? []) {
      const p = parseProposal(fact);
      if (p === undefined) continue;
      const id = proposalId(p);
      if (seen.has(id) || decided.has(normalizeClaim(p.title))) continue;
      seen.add(id);
      out.push({ ...p, id, engram_id: engram.engram_id, topics: engram.topics.slice(1, 2) });
    }
  }
  return out;
}

/** A proposal as `worker learnings` and the MCP tools list it: with the one command that confirms it. */
export interface ImportProposalEntry {
  /** The id `director confirm` and the MCP tool `memory_confirm` take. */
  id: string;
  status: "proposed";
  type: "decision";
  text: string;
  rationale: string | null;
  confidence: number;
  commit: string;
  engram_id: string;
  topics: string[];
  /** The command that makes it a decision (the next `director run` writes it to memory). */
  confirm: string;
}

/** `p` as a listed import proposal. Pure. */
export function importProposalEntry(p: HeldProposal): ImportProposalEntry {
  return {
    id: p.id,
    status: "proposed",
    type: "decision",
    text: p.title,
    rationale: p.rationale ?? null,
    confidence: p.confidence,
    commit: p.sha,
    engram_id: p.engram_id,
    topics: p.topics,
    confirm: `director confirm ${p.id}`,
  };
}

/** The proposals `ids` name (a commit's first 7 to 40 digits each), or the ids matching none or several. */
export function pickProposals(
  held: readonly HeldProposal[],
  ids: readonly string[],
): { picked: HeldProposal[]; unknown: string[]; ambiguous: string[] } {
  const picked: HeldProposal[] = [];
  const unknown: string[] = [];
  const ambiguous: string[] = [];
  for (const raw of ids) {
    const id = raw.trim().toLowerCase();
    // The note names 12 digits: a longer id (a full sha) matches on those.
    const matches = /^[0-9a-f]{7,40}$/.test(id)
      ? held.filter((p) => p.sha.startsWith(id.slice(0, p.sha.length)))
      : [];
    if (matches.length === 0) unknown.push(raw);
    else if (matches.length > 1) ambiguous.push(raw);
    else if (!picked.includes(matches[0] as HeldProposal)) picked.push(matches[0] as HeldProposal);
  }
  return { picked, unknown, ambiguous };
}
