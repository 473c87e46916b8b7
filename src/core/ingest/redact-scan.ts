/**
 * The scan behind the redactor: a rule set compiled with a table of its keywords, and the
 * spans its rules find in a text. Each rule runs its regular expression only when one of its
 * keywords occurs in the text (one pass over the text finds them all), from its first
 * keyword on, so text with no keyword costs one pass however many rules there are. A rule's
 * regular expressions are compiled at its first run: a process that redacts a few notes
 * (every `worker emit`) compiles the few rules their keywords name, not some 4,000 sources.
 */
import { shannonEntropy } from "./rules/harmless.js";
import type { SecretRule } from "./rules/types.js";

interface CompiledRule {
  regex: RegExp;
  groups: readonly number[];
  entropy: number;
  allow: readonly RegExp[];
  allowMatch: readonly RegExp[];
  allowLine: readonly RegExp[];
  stopwords: readonly string[];
  check: ((secret: string, match: string) => boolean) | undefined;
  lookback: number;
}

/** Each rule compiled once, whichever sets hold it (the plain rules are in two). */
const compiled = new WeakMap<SecretRule, CompiledRule>();

/** The rule, compiled at its first use. */
function compiledRule(rule: SecretRule): CompiledRule {
  let out = compiled.get(rule);
  if (out === undefined) {
    out = compileRule(rule);
    compiled.set(rule, out);
  }
  return out;
}

function compileRule(rule: SecretRule): CompiledRule {
  return {
    regex: new RegExp(rule.pattern, `g${rule.flags ?? ""}`),
    groups: rule.groups ?? [],
    entropy: rule.entropy ?? 0,
    allow: (rule.allow ?? []).map((source) => new RegExp(source)),
    allowMatch: (rule.allowMatch ?? []).map((source) => new RegExp(source)),
    allowLine: (rule.allowLine ?? []).map((source) => new RegExp(source)),
    stopwords: rule.stopwords ?? [],
    check: rule.check,
    lookback: rule.lookback ?? 0,
  };
}

/** The keyword scan of a rule set: which rules a text needs to run. */
export interface RuleSet {
  /** The rules in priority order, as written: each is compiled at its first run. */
  rules: readonly SecretRule[];
  /** Each rule's marker, `[REDACTED:<id>]`. */
  tokens: readonly string[];
  /**
   * For the first two ASCII characters as written, `(a << 7) | b`, either case: 1 + index into
   * `lists`, or 0. Both cases are filled in, so the scan reads the text's codes as they are.
   */
  slots: Uint16Array;
  lists: readonly (readonly Keyword[])[];
  /**
   * For the same two characters, the third characters their keywords may have, as bits of
   * `code & 31` (which is the same for both cases of a letter); all bits where a keyword has
   * two characters, none where no keyword starts. Most places that start like a keyword
   * (`th`, `in`) go on differently: one look-up and one bit test pass them by.
   */
  thirds: Int32Array;
  /**
   * For a list and a third character (`code & 31`), at `(slot - 1) << 5 | third`: the fourth
   * characters its keywords may have, the same way (all bits where one has three characters
   * or fewer). Many places in prose share a keyword's first three characters (`test`, `conf`,
   * `auth`); the fourth tells most of them apart.
   */
  fourths: Int32Array;
  /** Scratch of the scan: for each rule, its first keyword's place, or -1. */
  firstAt: Int32Array;
}

interface Keyword {
  word: string;
  /** The rules it turns on: its own, and those of every keyword it contains. */
  rules: readonly number[];
}

/** Compiles `sources` (in priority order: the first rule names a marker where spans overlap) with their keyword table. */
export function buildRuleSet(sources: readonly SecretRule[]): RuleSet {
  // Built by every command that redacts (a `worker emit` too), so each keyword is visited a
  // few times and no loop runs over the empty places of the tables.
  const direct = new Map<string, number[]>();
  sources.forEach((rule, i) => {
    for (const keyword of rule.keywords) {
      const rules = direct.get(keyword);
      if (rules === undefined) direct.set(keyword, [i]);
      else rules.push(i);
    }
  });
  const slots = new Uint16Array(128 * 128);
  const thirds = new Int32Array(128 * 128);
  const lists: Keyword[][] = [];
  for (const [word, rules] of direct) {
    if (word.length < 2 || !/^[\x20-\x7e]+$/.test(word) || word !== word.toLowerCase()) {
      throw new Error(
        `redact: keyword ${JSON.stringify(word)} must be lower-case ASCII, 2+ characters`,
      );
    }
    // A place reports every keyword that starts there, so `passphrase` turns on `pass` by
    // itself; a keyword inside another one (`sk` in `task`) is found at its own place.
    const index = (word.charCodeAt(0) << 7) | word.charCodeAt(1);
    const third = word.length < 3 ? ~0 : bit(word, 2);
    if (slots[index] === 0) lists.push([]);
    const slot = slots[index] === 0 ? lists.length : (slots[index] as number);
    for (const a of bothCases(word.charCodeAt(0))) {
      for (const b of bothCases(word.charCodeAt(1))) {
        slots[(a << 7) | b] = slot;
        thirds[(a << 7) | b] = (thirds[(a << 7) | b] as number) | third;
      }
    }
    (lists[slot - 1] as Keyword[]).push({ word, rules: [...new Set(rules)] });
  }
  const fourths = new Int32Array(lists.length << 5);
  lists.forEach((list, i) => {
    for (const { word } of list) {
      const fourth = word.length < 4 ? ~0 : bit(word, 3);
      // Two characters: any third goes on to any fourth.
      const from = word.length < 3 ? 0 : word.charCodeAt(2) & 31;
      const to = word.length < 3 ? 31 : from;
      for (let third = from; third <= to; third++) {
        const at = (i << 5) | third;
        fourths[at] = (fourths[at] as number) | fourth;
      }
    }
  });
  const tokens = sources.map((rule) => `[REDACTED:${rule.id}]`);
  const firstAt = new Int32Array(sources.length).fill(-1);
  return { rules: sources, tokens, slots, lists, thirds, fourths, firstAt };
}

/** The bit of a keyword's character at `k`, as the scan tests it (`code & 31`, either case). */
function bit(word: string, k: number): number {
  return 1 << (word.charCodeAt(k) & 31);
}

/** A lower-case ASCII code and its upper case, if it has one. */
function bothCases(code: number): number[] {
  return code >= 97 && code <= 122 ? [code, code - 32] : [code];
}

/** Lower case of an ASCII code; other codes as they are. */
function lowerCode(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/**
 * The rules whose keywords occur in `text`, case-insensitively, in priority order, each
 * followed by the place of its first keyword (`[rank, place, rank, place, ...]`), or
 * undefined when there is none: one pass over the text with tables of the keywords' first
 * four characters, much cheaper than a regex alternation of a few hundred literals.
 */
function wantedRules(text: string, set: RuleSet): number[] | undefined {
  // Made at the first keyword: most texts have none, and garbage for each of them was a good
  // share of ingest's.
  let turned: number[] | undefined;
  const { slots, thirds, fourths } = set;
  const length = text.length;
  if (length < 2) return undefined;
  // Each code is read once. A code past ASCII is folded into it (`& 127`): it can only make a
  // false candidate, which `keywordsAt` reads again as written and turns down.
  let first = text.charCodeAt(0) & 127;
  let second = text.charCodeAt(1) & 127;
  for (let i = 0; i + 2 < length; i++) {
    const third = text.charCodeAt(i + 2);
    const pair = (first << 7) | second;
    first = second;
    second = third & 127;
    if ((((thirds[pair] as number) >>> (third & 31)) & 1) === 0) continue;
    if (i + 3 < length) {
      const fourth = ((slots[pair] as number) - 1) << 5;
      const mask = fourths[fourth | (third & 31)] as number;
      if (((mask >>> (text.charCodeAt(i + 3) & 31)) & 1) === 0) continue;
    }
    turned = keywordsAt(text, i, set, turned);
  }
  // The last two characters: only a two-character keyword fits there.
  if (thirds[(first << 7) | second] !== 0) turned = keywordsAt(text, length - 2, set, turned);
  if (turned === undefined) return undefined;
  turned.sort((x, y) => x - y);
  const out: number[] = [];
  for (const rank of turned) {
    out.push(rank, set.firstAt[rank] as number);
    set.firstAt[rank] = -1;
  }
  return out;
}

/** Notes the rules of every keyword that starts at `i` (their first place, if they are new). */
function keywordsAt(
  text: string,
  i: number,
  set: RuleSet,
  turned: number[] | undefined,
): number[] | undefined {
  const c = text.charCodeAt(i);
  const b = text.charCodeAt(i + 1);
  if ((c | b) > 127) return turned;
  const slot = set.slots[(c << 7) | b] as number;
  if (slot === 0) return turned;
  const { firstAt } = set;
  let out = turned;
  for (const { word, rules } of set.lists[slot - 1] as Keyword[]) {
    if (i + word.length > text.length) continue;
    let k = 2;
    while (k < word.length && lowerCode(text.charCodeAt(i + k)) === word.charCodeAt(k)) k++;
    if (k < word.length) continue;
    for (const r of rules) {
      if (firstAt[r] !== -1) continue;
      firstAt[r] = i;
      out ??= [];
      out.push(r);
    }
  }
  return out;
}

export interface Span {
  start: number;
  end: number;
  rank: number;
}

/** Where the rules of `set` find secrets in `text`, merged, in order. */
export function findSpans(text: string, set: RuleSet): Span[] {
  const wanted = wantedRules(text, set);
  if (wanted === undefined) return [];
  const spans: Span[] = [];
  for (let w = 0; w < wanted.length; w += 2) {
    const rank = wanted[w] as number;
    const rule = compiledRule(set.rules[rank] as SecretRule);
    const { regex } = rule;
    // No match starts before the rule's first keyword (less its look-back).
    regex.lastIndex = Math.max(0, (wanted[w + 1] as number) - rule.lookback);
    for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
      const match = m[0];
      let secret: string | undefined = match;
      let end = m.index + match.length;
      let group = 0;
      if (rule.groups.length > 0) {
        secret = undefined;
        for (const g of rule.groups) {
          if (m[g] !== undefined && m[g] !== "") {
            secret = m[g];
            group = g;
            break;
          }
        }
      }
      // With the `d` flag the group sits anywhere in the match; without it, it ends the match.
      const at = group > 0 ? m.indices?.[group] : undefined;
      if (at !== undefined) end = at[1];
      const start = secret === undefined ? end : end - secret.length;
      if (
        secret === undefined ||
        secret === "" ||
        !isSecret(rule, secret, match) ||
        allowedByLine(rule, text, start, end)
      ) {
        // The value may hold a key of its own (`token: GITHUB_TOKEN=...`): look again from it.
        regex.lastIndex = Math.max(start, m.index + 1);
        continue;
      }
      spans.push({ start, end, rank });
    }
  }
  return mergeSpans(spans);
}

/** Spans in order, overlapping ones joined under the better-ranked (lower) rule. */
export function mergeSpans(spans: Span[]): Span[] {
  if (spans.length <= 1) return spans;
  spans.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
      last.rank = Math.min(last.rank, span.rank);
    } else {
      merged.push({ ...span });
    }
  }
  return merged;
}

function isSecret(rule: CompiledRule, secret: string, match: string): boolean {
  // Idempotence: a marker is never a secret again.
  if (secret.startsWith("[REDACTED:")) return false;
  if (rule.entropy > 0 && shannonEntropy(secret) < rule.entropy) return false;
  for (const allow of rule.allow) if (allow.test(secret)) return false;
  for (const allow of rule.allowMatch) if (allow.test(match)) return false;
  if (rule.stopwords.length > 0) {
    const lower = secret.toLowerCase();
    for (const word of rule.stopwords) if (lower.includes(word)) return false;
  }
  return rule.check === undefined || rule.check(secret, match);
}

/** gitleaks' line allowlists: the line around the secret matches one. */
function allowedByLine(rule: CompiledRule, text: string, start: number, end: number): boolean {
  if (rule.allowLine.length === 0) return false;
  const from = text.lastIndexOf("\n", start - 1) + 1;
  const to = text.indexOf("\n", end);
  const line = text.slice(from, to < 0 ? text.length : to);
  return rule.allowLine.some((allow) => allow.test(line));
}

/** The text with each span replaced by the marker of its rule. */
export function applySpans(text: string, spans: readonly Span[], set: RuleSet): string {
  let out = "";
  let last = 0;
  for (const span of spans) {
    out += text.slice(last, span.start) + (set.tokens[span.rank] as string);
    last = span.end;
  }
  return out + text.slice(last);
}
