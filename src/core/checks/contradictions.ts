/**
 * A new decision that contradicts a current decision of memory without saying it replaces it:
 * the same subject with a different value ("Use Redis locks for the job queue" against "Use
 * Postgres advisory locks for the job queue"), or the same words with the negation flipped.
 * Precision first: two decisions about different things in one topic ("Use Redis locks for
 * the job queue", "Cap the job queue at 500 jobs") share a topic but not a subject, and a
 * value that only one side names is an addition, not a contradiction; an acronym is a value
 * only where the decision chooses it ("with JWT"), else part of the subject ("Run CI"). Pure.
 */
import type { Engram } from "../../schema/engram.js";
import { contentWords } from "../compaction/replaces.js";
import { normalizeClaim } from "../graph/learnings.js";
import { replacedBy, replacementsOf } from "../graph/supersession.js";
import type { KnowledgeItem } from "../proposal/knowledge.js";
import type { ReviewFlag } from "./review-flags.js";

/** A decision memory holds now, as a reader of `worker recall` names it. */
export interface MemoryDecision {
  /** `e_…#d<n>`: what `worker emit --supersedes` takes. */
  id: string;
  text: string;
  engram_id: string;
  topics: readonly string[];
}

interface Stated {
  /** Names, numbers and amounts: what the decision chooses. */
  values: Set<string>;
  /** The other content words: what the decision is about. */
  subject: Set<string>;
  negated: boolean;
}

const NUMBER_WORDS = new Set(
  "one two three four five six seven eight nine ten eleven twelve twenty thirty fifty hundred".split(
    " ",
  ),
);
const AMOUNT = /^\d+(?:\.\d+)?[a-z%]{0,4}$/;
const NEGATION = /\b(?:not|never|don't|do not|no longer)\b/i;
/** CI, HTTP, E2E, APIs: two capitals or more, up to six letters and digits. */
const ACRONYM = /^(?=(?:[^A-Z]*[A-Z]){2})[A-Z0-9]{2,6}s?$/;
/** Words after which an acronym names what is chosen ("use JWT", "sign with JWT", "deploy to AWS"). */
const CHOICE = new Set(
  "use uses using adopt adopts choose chooses prefer prefers pick picks with via to over through".split(
    " ",
  ),
);
const ARTICLES = new Set(["the", "a", "an"]);
const TEXT_CHARS = 200;

/** What a reviewer does about a contradiction, in words (the body shows the command as code). */
export function sayWhichHolds(id: string, command = (c: string) => c): string {
  return `say which holds (if the new one does, send it again with ${command(`worker emit --supersedes ${id}`)}) or reject one`;
}

/** A word as `contentWords` keeps it (lower case, a plural's s dropped), or undefined. */
function wordOf(raw: string): string | undefined {
  return [...contentWords(raw)][0];
}

/**
 * An acronym is a choice only where one is named ("use JWT", "sign with JWT"); elsewhere it
 * says what the decision is about: "Run CI" and "Run CD", "cache the HTTP responses" and
 * "cache the DNS responses" are two things, not two values of one.
 */
function chosenAt(tokens: readonly string[], i: number): boolean {
  const before = tokens[i - 1]?.toLowerCase();
  if (before !== undefined && ARTICLES.has(before)) {
    return CHOICE.has(tokens[i - 2]?.toLowerCase() ?? "");
  }
  return before !== undefined && CHOICE.has(before);
}

function stated(text: string): Stated {
  const values = new Set<string>();
  const about = new Set<string>();
  // A capital inside a sentence names something (Postgres, Redis, JWT); the first word does not.
  for (const sentence of text.split(/[.:;!?]\s+/)) {
    const tokens = sentence.split(/[^A-Za-z0-9_%.-]+/).filter((t) => t !== "");
    tokens.forEach((token, i) => {
      const bare = token.replace(/^[.-]+|[.-]+$/g, "");
      if (AMOUNT.test(bare.toLowerCase()) || NUMBER_WORDS.has(bare.toLowerCase())) {
        values.add(bare.toLowerCase());
      } else if (ACRONYM.test(bare) && !chosenAt(tokens, i)) {
        // Kept even at two letters (content words drop CI and CD): the subject tells them apart.
        about.add(bare.replace(/s$/, "").toLowerCase());
      } else if (i > 0 && /^[A-Z]/.test(bare)) {
        const w = wordOf(bare);
        if (w !== undefined) values.add(w);
      }
    });
  }
  const subject = new Set([...contentWords(text), ...about].filter((w) => !values.has(w)));
  return { values, subject, negated: NEGATION.test(text) };
}

function shared(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let n = 0;
  for (const w of a) if (b.has(w)) n++;
  return n;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && shared(a, b) === a.size;
}

/**
 * Whether two decisions say different things about one subject: a value on each side the
 * other lacks, and the same subject (the same words, or most of them in a topic both hold);
 * or the same words, one of them negated. Symmetric.
 */
export function contradicts(
  a: string,
  b: string,
  sameTopic: boolean,
): "value" | "negation" | undefined {
  if (normalizeClaim(a) === normalizeClaim(b)) return undefined;
  return contradiction(stated(a), stated(b), sameTopic);
}

function contradiction(x: Stated, y: Stated, sameTopic: boolean): "value" | "negation" | undefined {
  const wordsX = new Set([...x.subject, ...x.values]);
  const wordsY = new Set([...y.subject, ...y.values]);
  if (x.negated !== y.negated && wordsX.size >= 2 && sameSet(wordsX, wordsY)) return "negation";
  if (x.subject.size === 0 || y.subject.size === 0 || x.negated !== y.negated) return undefined;
  const onlyX = [...x.values].some((v) => !y.values.has(v));
  const onlyY = [...y.values].some((v) => !x.values.has(v));
  if (!onlyX || !onlyY) return undefined;
  if (sameSet(x.subject, y.subject)) return "value";
  const n = shared(x.subject, y.subject);
  const most =
    n >= 2 &&
    n / Math.min(x.subject.size, y.subject.size) >= 0.75 &&
    n / Math.max(x.subject.size, y.subject.size) >= 0.5;
  return most && sameTopic ? "value" : undefined;
}

/**
 * The decisions of `memory` nothing replaced (counting what `added` replaces too: an item the
 * proposal supersedes is no longer current), each claim once, newest engram first. Sensitive
 * engrams are left out: their text is not quoted in a pull request.
 */
export function currentDecisions(
  memory: readonly Engram[],
  added: readonly Engram[] = [],
): MemoryDecision[] {
  const replacements = replacementsOf([...memory, ...added]);
  const ordered = [...memory].sort(
    (a, b) =>
      b.version.localeCompare(a.version) ||
      (a.engram_id < b.engram_id ? -1 : a.engram_id > b.engram_id ? 1 : 0),
  );
  const seen = new Set<string>();
  const out: MemoryDecision[] = [];
  for (const engram of ordered) {
    if (engram.privacy === "sensitive") continue;
    engram.decisions.forEach((d, i) => {
      const key = normalizeClaim(d.title);
      if (seen.has(key) || replacedBy(replacements, d.title, engram) !== undefined) return;
      seen.add(key);
      out.push({
        id: `${engram.engram_id}#d${i}`,
        text: d.title,
        engram_id: engram.engram_id,
        topics: engram.topics,
      });
    });
  }
  return out;
}

function cut(text: string): string {
  const chars = Array.from(text);
  return chars.length <= TEXT_CHARS ? text : `${chars.slice(0, TEXT_CHARS - 1).join("")}…`;
}

/**
 * The `contradiction` flags of a proposal: each new decision (not one memory holds already,
 * not one that names what it replaces) that contradicts a current decision of `memory`, the
 * first such decision named. `topics` gives an added engram's topics by id.
 */
export function contradictionFlags(
  items: readonly KnowledgeItem[],
  memory: readonly Engram[],
  added: readonly Engram[],
): ReviewFlag[] {
  const decisions = currentDecisions(memory, added);
  if (decisions.length === 0) return [];
  const held = new Set<string>();
  for (const e of memory) {
    for (const d of e.decisions) held.add(normalizeClaim(d.title));
    for (const f of e.facts) held.add(normalizeClaim(f));
  }
  const topicsOf = new Map(added.map((e) => [e.engram_id, new Set(e.topics)]));
  const said = decisions.map((d) => ({ d, stated: stated(d.text) }));
  // Every contradiction shares a word: only decisions that share one are compared.
  const byWord = new Map<string, number[]>();
  said.forEach(({ stated: x }, i) => {
    for (const w of new Set([...x.subject, ...x.values])) {
      const list = byWord.get(w);
      if (list === undefined) byWord.set(w, [i]);
      else list.push(i);
    }
  });
  const flags: ReviewFlag[] = [];
  for (const item of items) {
    if (item.kind !== "decision" || (item.replaces?.length ?? 0) > 0) continue;
    const key = normalizeClaim(item.text);
    if (held.has(key)) continue;
    const own = topicsOf.get(item.engram_id) ?? new Set<string>();
    const mine = stated(item.text);
    const near = new Set<number>();
    for (const w of [...mine.subject, ...mine.values])
      for (const i of byWord.get(w) ?? []) near.add(i);
    for (const i of [...near].sort((a, b) => a - b)) {
      const { d, stated: theirs } = said[i] as (typeof said)[number];
      const how = contradiction(
        mine,
        theirs,
        d.topics.some((t) => own.has(t)),
      );
      if (how === undefined) continue;
      const what = how === "negation" ? "says the opposite of" : "sets another value than";
      flags.push({
        kind: "contradiction",
        reason: "contradicts-memory",
        why: `contradicts ${d.id} on main: ${what} “${cut(d.text)}”; ${sayWhichHolds(d.id)}`,
        engram_id: item.engram_id,
        item_id: item.id,
        item_kind: "decision",
        text: cut(item.text),
        contradicts: { id: d.id, text: cut(d.text) },
      });
      break;
    }
  }
  return flags;
}
