import type { Engram } from "../../schema/engram.js";
import { itemSaid, itemStated, learningIdOfFact, normalizeClaim } from "../graph/learnings.js";
import { type Replacements, replacedBy } from "../graph/supersession.js";
import { hasContent } from "../history/content.js";
import { engramPath } from "../model/engram.js";
import { compareText } from "../model/text.js";

/**
 * What recall ranks: one note each, not one engram. A fact, decision, lesson, convention,
 * incident, question or episode of an engram, a session's knowledge record, or a commit of
 * the repository's history, with where it lives and who said it.
 */

/** What a recall hit can be: an item of an engram, an episode, or a commit of the history. */
export const RECALL_NOTE_KINDS = [
  "fact",
  "decision",
  "lesson",
  "convention",
  "incident",
  "question",
  "episode",
  "commit",
] as const;
export type RecallNoteKind = (typeof RECALL_NOTE_KINDS)[number];

export const RECALL_SCOPES = ["st", "lt", "history"] as const;
export type RecallScope = (typeof RECALL_SCOPES)[number];

/** A note's tokens as counted when it was indexed (by the real tokenizer), else estimated. */
export interface NoteTokens {
  text: number;
  rationale: number;
}

export interface RecallNote {
  /** `<engram_id>#f<n>` (a fact), `#d<n>` (a decision), `#<episode id>`, a record id, a sha. */
  id: string;
  kind: RecallNoteKind;
  text: string;
  /** A decision's reason; a commit's body. */
  rationale?: string;
  topics: readonly string[];
  scope: RecallScope;
  /** The engram holding the note (absent for knowledge records and commits). */
  engram_id?: string;
  /** The memory file holding the note; absent for a commit. */
  path?: string;
  /** A history note's commit (full sha). */
  commit?: string;
  /** When it was said (ISO-8601 UTC): the episode's time, else its engram's window end. */
  at: string;
  /** Who said it: the engram's content senders, or a commit's author. */
  senders: readonly string[];
  /** The outcome and confidence its note stated (an episode's, a fact's, a decision's). */
  outcome?: string;
  confidence?: number;
  /** LT engrams that carried this very note forward: left out by default. */
  superseded_by?: readonly string[];
  /** Its text's and reason's tokens, counted by the real tokenizer when it was indexed. */
  tokens?: NoteTokens;
}

const PREFIXES: [string, RecallNoteKind][] = [
  ["Lesson: ", "lesson"],
  ["Convention: ", "convention"],
  ["Incident: ", "incident"],
  ["Question: ", "question"],
];

/** What makes two notes one hit: the same commit, or the same claim in any engram. */
export function claimOf(note: RecallNote): string {
  return note.commit !== undefined ? `commit:${note.commit}` : normalizeClaim(note.text);
}

/** A fact's kind and text without the kind's prefix (`Lesson: x` is the lesson `x`). */
export function factNote(fact: string): { kind: RecallNoteKind; text: string } {
  for (const [prefix, kind] of PREFIXES) {
    if (fact.startsWith(prefix)) return { kind, text: fact.slice(prefix.length) };
  }
  return { kind: "fact", text: fact };
}

/** The claim keys an LT engram carries: what it supersedes, item by item. */
export function carriedKeys(engram: Engram): Set<string> {
  const keys = new Set<string>();
  for (const fact of engram.facts) keys.add(normalizeClaim(fact));
  for (const d of engram.decisions) keys.add(normalizeClaim(d.title));
  return keys;
}

/**
 * The notes of an engram. `carriers` are the LT engrams that name this one in `supersedes`,
 * with the claims each carries: a note is superseded only by an engram that took it, or by
 * one that replaced it (`replacements`: a later decision, a retraction).
 */
export function notesOfEngram(
  engram: Engram,
  carriers: readonly { engram_id: string; keys: ReadonlySet<string> }[] = [],
  replacements: Replacements = new Map(),
): RecallNote[] {
  return supersede(ownNotesOf(engram), engram, carriers, replacements);
}

/**
 * An engram's notes as the engram alone gives them, before any other engram supersedes one,
 * each with the text its claim is keyed by (a fact as written, a decision's title; null for
 * an episode, which nothing supersedes).
 */
export interface OwnNotes {
  notes: RecallNote[];
  claims: (string | null)[];
}

export function ownNotesOf(engram: Engram): OwnNotes {
  const path = engramPath(engram.scope, engram.version, engram.engram_id);
  const at = engram.source_window.end_ts;
  const base = { topics: engram.topics, scope: engram.scope, engram_id: engram.engram_id, path };
  const notes: RecallNote[] = [];
  const claims: (string | null)[] = [];
  engram.facts.forEach((fact, i) => {
    // A recorded commit that says nothing ("Commit: Merge branch 'x'") is not worth a hit: its
    // few words would outrank a lesson. (Ids keep the fact's index.)
    if (fact.startsWith("Commit: ") && !hasContent(fact)) return;
    notes.push({
      ...base,
      id: `${engram.engram_id}#f${i}`,
      ...factNote(fact),
      ...statedOf(engram, learningIdOfFact(fact)),
      at,
      senders: itemSaid(engram, learningIdOfFact(fact)).senders,
    });
    claims.push(fact);
  });
  engram.decisions.forEach((d, i) => {
    notes.push({
      ...base,
      id: `${engram.engram_id}#d${i}`,
      kind: "decision",
      text: d.title,
      ...(d.rationale.trim() !== "" ? { rationale: d.rationale } : {}),
      // How sure its sender was and how it turned out, kept through promotion.
      ...statedOf(engram, learningIdOfFact(d.title)),
      at,
      senders: itemSaid(engram, learningIdOfFact(d.title)).senders,
    });
    claims.push(d.title);
  });
  for (const episode of engram.episodes ?? []) {
    if (episode.text === undefined || episode.text.trim() === "") continue;
    notes.push({
      ...base,
      id: `${engram.engram_id}#${episode.id}`,
      kind: "episode",
      text: episode.text,
      outcome: episode.outcome,
      confidence: episode.confidence,
      at: episode.at,
      senders: [episode.sender],
    });
    claims.push(null);
  }
  return { notes, claims };
}

/** `own`'s notes, each marked with the engrams that carried it forward or replaced it. */
export function supersede(
  own: OwnNotes,
  engram: Pick<Engram, "engram_id" | "version">,
  carriers: readonly { engram_id: string; keys: ReadonlySet<string> }[] = [],
  replacements: Replacements = new Map(),
): RecallNote[] {
  return own.notes.map((note, i) => {
    const claim = own.claims[i];
    if (claim === null || claim === undefined) return note;
    const key = normalizeClaim(claim);
    const ids = carriers.filter((c) => c.keys.has(key)).map((c) => c.engram_id);
    const replaced = replacedBy(replacements, claim, engram);
    if (replaced !== undefined && !ids.includes(replaced.engram_id)) ids.push(replaced.engram_id);
    return ids.length > 0 ? { ...note, superseded_by: ids.sort(compareText) } : note;
  });
}

/** What a recall note of a session's knowledge record needs of it (`KnowledgeItem`). */
export interface RecallKnowledge {
  id: string;
  path: string;
  kind: "fact" | "lesson" | "convention" | "decision";
  text: string;
  rationale: string | null;
  /** ISO-8601: when the version that added it was made (its recency). */
  written_at: string;
}

/** A session's knowledge record: long-term memory, named by its record id. */
export function noteOfKnowledge(k: RecallKnowledge): RecallNote {
  return {
    id: k.id,
    kind: k.kind,
    text: k.text,
    ...(k.rationale ? { rationale: k.rationale } : {}),
    topics: [],
    scope: "lt",
    path: k.path,
    at: k.written_at,
    senders: [],
  };
}

/** A commit of the repository's history, as `git log` reads it. */
export interface HistoryCommit {
  sha: string;
  /** Committer time, ISO-8601 UTC. */
  at: string;
  author: string;
  subject: string;
  body: string;
}

const MERGE_SUBJECT = /^Merge (?:pull request|branch|remote-tracking branch)\b/;

/**
 * A commit as a history note: its subject, and its body as the reason. A merge's subject
 * says nothing ("Merge pull request #12 from a/b"): its body's first line, the pull
 * request's title, leads then.
 */
export function noteOfCommit(commit: HistoryCommit): RecallNote {
  let subject = commit.subject.trim();
  let body = commit.body.trim();
  if (MERGE_SUBJECT.test(subject) && body !== "") {
    const [title = "", ...rest] = body.split("\n");
    subject = `${title.trim()} (${subject})`;
    body = rest.join("\n").trim();
  }
  return {
    id: commit.sha,
    kind: "commit",
    text: subject === "" ? `commit ${commit.sha.slice(0, 12)}` : subject,
    ...(body !== "" ? { rationale: body } : {}),
    topics: [],
    scope: "history",
    commit: commit.sha,
    at: commit.at,
    senders: [commit.author],
  };
}

/** A note's own stated outcome and confidence, each only when stated. */
function statedOf(engram: Engram, id: string): Pick<RecallNote, "outcome" | "confidence"> {
  const { outcome, confidence } = itemStated(engram, id);
  return {
    ...(outcome !== undefined ? { outcome } : {}),
    ...(confidence !== undefined ? { confidence } : {}),
  };
}
