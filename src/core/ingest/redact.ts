/**
 * Secret redaction. Every event passes through here before anything is stored, on the worker
 * before it sends and at ingest for every other writer. The rules are data (`rules/`): the
 * provider formats of gitleaks' default configuration, the context rules (key words, URLs,
 * headers, PEM blocks) and base64-wrapped tokens. Each rule runs its regular expression only
 * when one of its keywords occurs in the text (one combined scan of the lower-cased text finds
 * them), so text with no keyword costs one scan, however many rules there are.
 */
import type { Config } from "../../schema/config.js";
import { compileCustom } from "./custom-patterns.js";
import { base64Rule } from "./rules/base64.js";
import { CONTEXT_RULES, PASSWORD_KEYS, TOKEN_KEYS } from "./rules/context.js";
import { GITLEAKS_RULES } from "./rules/gitleaks.js";
import {
  GITLEAKS_DEFAULT_RULES,
  GITLEAKS_GLOBAL_ALLOW,
  GITLEAKS_GLOBAL_STOPWORDS,
} from "./rules/gitleaks-default.js";
import { looksLikePassword, looksLikeToken, shannonEntropy } from "./rules/harmless.js";
import type { SecretRule } from "./rules/types.js";

export { RedactionPatternError } from "./custom-patterns.js";

export interface RedactionResult {
  text: string;
  count: number;
}

export interface Redactor {
  /** Returns the text with every secret replaced by `[REDACTED:<rule>]`, and how many were replaced. */
  redact(text: string): RedactionResult;
  readonly ruleNames: readonly string[];
}

interface CompiledRule {
  id: string;
  token: string;
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

function compileRule(rule: SecretRule): CompiledRule {
  return {
    id: rule.id,
    token: `[REDACTED:${rule.id}]`,
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
interface RuleSet {
  rules: readonly CompiledRule[];
  /** For the first two (lower-case ASCII) characters `(a << 7) | b`: 1 + index into `lists`, or 0. */
  slots: Uint16Array;
  lists: readonly (readonly Keyword[])[];
  /** 1 for an ASCII code (either case) that starts some keyword: most characters do not. */
  starts: Uint8Array;
}

interface Keyword {
  word: string;
  /** The rules it turns on: its own, and those of every keyword it contains. */
  rules: readonly number[];
}

function buildRuleSet(sources: readonly SecretRule[]): RuleSet {
  const rules = sources.map(compileRule);
  const direct = new Map<string, number[]>();
  sources.forEach((rule, i) => {
    for (const keyword of rule.keywords) direct.set(keyword, [...(direct.get(keyword) ?? []), i]);
  });
  const all = [...direct.keys()];
  const slots = new Uint16Array(128 * 128);
  const lists: Keyword[][] = [];
  const starts = new Uint8Array(128);
  for (const word of all) {
    if (word.length < 2 || !/^[\x20-\x7e]+$/.test(word) || word !== word.toLowerCase()) {
      throw new Error(
        `redact: keyword ${JSON.stringify(word)} must be lower-case ASCII, 2+ characters`,
      );
    }
    // A place reports every keyword that starts there, so `passphrase` turns on `pass` by
    // itself; a keyword inside another one (`sk` in `task`) is found at its own place.
    const turned = new Set<number>(direct.get(word));
    const head = word.charCodeAt(0);
    starts[head] = 1;
    if (head >= 97 && head <= 122) starts[head - 32] = 1;
    const index = (head << 7) | word.charCodeAt(1);
    if (slots[index] === 0) slots[index] = lists.push([]);
    (lists[(slots[index] as number) - 1] as Keyword[]).push({ word, rules: [...turned] });
  }
  return { rules, slots, lists, starts };
}

/** Lower case of an ASCII code; other codes as they are. */
function lowerCode(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/**
 * The rules whose keywords occur in `text`, case-insensitively: one pass over the text with
 * a table of the keywords' first two characters, much cheaper than a regex alternation of
 * a few hundred literals.
 */
function wantedRules(text: string, set: RuleSet): Map<number, number> | undefined {
  // Made at the first keyword: most texts have none, and a map for each of them was a good
  // share of ingest's garbage.
  let wanted: Map<number, number> | undefined;
  const { slots, lists, starts } = set;
  const n = text.length - 1;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 127 || starts[c] === 0) continue;
    const b = lowerCode(text.charCodeAt(i + 1));
    if (b > 127) continue;
    const slot = slots[(lowerCode(c) << 7) | b] as number;
    if (slot === 0) continue;
    for (const { word, rules } of lists[slot - 1] as Keyword[]) {
      if (i + word.length > text.length) continue;
      let k = 2;
      while (k < word.length && lowerCode(text.charCodeAt(i + k)) === word.charCodeAt(k)) k++;
      if (k < word.length) continue;
      wanted ??= new Map<number, number>();
      for (const r of rules) if (!wanted.has(r)) wanted.set(r, i);
    }
  }
  return wanted;
}

interface Span {
  start: number;
  end: number;
  rank: number;
}

/** Where the rules of `set` find secrets in `text`, merged, in order. */
function findSpans(text: string, set: RuleSet): Span[] {
  const wanted = wantedRules(text, set);
  if (wanted === undefined) return [];
  const spans: Span[] = [];
  for (const rank of [...wanted.keys()].sort((x, y) => x - y)) {
    const rule = set.rules[rank] as CompiledRule;
    const { regex } = rule;
    // No match starts before the rule's first keyword (less its look-back).
    regex.lastIndex = Math.max(0, (wanted.get(rank) as number) - rule.lookback);
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

function applySpans(text: string, spans: readonly Span[], set: RuleSet): string {
  let out = "";
  let last = 0;
  for (const span of spans) {
    out += text.slice(last, span.start) + (set.rules[span.rank] as CompiledRule).token;
    last = span.end;
  }
  return out + text.slice(last);
}

/** How far before its first keyword a generated rule's match may start (`https://x.webhook.office.com`, `[\w.-]{0,50}?identifier`). */
const GENERATED_LOOKBACK = 128;

/** Whether every match of a rule starts with one of its keywords (then it needs no look-back). */
function startsWithKeyword(rule: SecretRule): boolean {
  const head = rule.pattern.replace(/^(?:\\b|\(\?:|\()+/, "");
  // The literal start of the pattern, case folded (`[sS]` counts as `s`).
  const literal = head
    .replace(/\[([a-zA-Z])([a-zA-Z])\]/g, (all, a: string, b: string) =>
      a.toLowerCase() === b.toLowerCase() ? a : all,
    )
    .match(/^(?:[a-zA-Z0-9_-]|\\\.)+/)?.[0]
    .replace(/\\/g, "")
    .toLowerCase();
  return literal !== undefined && rule.keywords.every((keyword) => literal.startsWith(keyword));
}

/**
 * Keywords narrowed where gitleaks' own occur in most prose (`ey` of `key`, `they`): every
 * JWT starts `eyJ` (the base64 of `{"`).
 */
const NARROWER_KEYWORDS: Readonly<Record<string, readonly string[]>> = { jwt: ["eyj"] };

/**
 * gitleaks' rules that the context rules replace, with precision rules of their own: a value
 * must look like a credential, examples are kept, quotes around a value stay.
 */
const OWN_CONTEXT_RULES = new Set([
  "generic-api-key",
  "curl-auth-user",
  "curl-auth-header",
  "private-key",
]);

/**
 * gitleaks' default rules as generated, after the ported ones (whose ids name a marker
 * first), with gitleaks' global allowlist, less those the context rules replace.
 */
const GENERATED: readonly SecretRule[] = GITLEAKS_DEFAULT_RULES.filter(
  (rule) => !OWN_CONTEXT_RULES.has(rule.id),
).map((rule) => ({
  ...rule,
  keywords: NARROWER_KEYWORDS[rule.id] ?? rule.keywords,
  lookback: startsWithKeyword(rule) ? 0 : GENERATED_LOOKBACK,
  flags: `d${rule.flags ?? ""}`,
  allow: [...(rule.allow ?? []), ...GITLEAKS_GLOBAL_ALLOW],
  stopwords: [...(rule.stopwords ?? []), ...GITLEAKS_GLOBAL_STOPWORDS],
}));

/** A placeholder's run inside a token: `xxxxxx`, `XXXXXX`, `000000`, `######`, `******`. */
const PLACEHOLDER_RUN = "([xX01#*.])\\1{5,}";

const PEERS = new Map(GITLEAKS_DEFAULT_RULES.map((rule) => [rule.id, rule]));

/**
 * The ported provider rules, held to gitleaks' precision: a token starts and ends at a word
 * boundary (`task_test_...` holds no Stripe key), and the entropy floor and allowlists of the
 * gitleaks rule of the same id apply (`ghp_xxxx...` is a placeholder).
 */
const PORTED: readonly SecretRule[] = GITLEAKS_RULES.map((rule) => {
  const peer = PEERS.get(rule.id);
  return {
    ...rule,
    // Not glued to a word, a path or a dotted name (`video_box.ico-...`, `xoxe.xoxp-...`).
    // A digit or `_` before is a boundary, as secretlint has it (`MY_tskey-...`).
    pattern: `(?<![A-Za-z.-])(?:${rule.pattern})(?![A-Za-z0-9])`,
    // gitleaks' entropy floors would keep secretlint's low-entropy test tokens
    // (`sk_test_BBBB...`); a placeholder run (`ghp_xxxx...`) is what they keep out.
    allow: [
      ...(rule.allow ?? []),
      ...(rule.redactPlaceholders === true ? [] : [PLACEHOLDER_RUN]),
      ...(peer?.allow ?? []),
      ...GITLEAKS_GLOBAL_ALLOW,
    ],
    stopwords: peer?.stopwords ?? [],
  };
});

/**
 * The literal prefixes (4 characters or more) the provider rules' matches start with
 * (`ghp_`, `glsa_`, `dop_v1_`): their base64 forms are the base64 rule's keywords, so that
 * a wrapped token of any provider is decoded and found.
 */
function literalPrefixes(rules: readonly SecretRule[]): string[] {
  const out = new Set<string>();
  for (const rule of rules) {
    const head = rule.pattern.replace(/^(?:\(\?<![^)]*\)|\\b|\(\?:|\()+/, "");
    const literal = head.match(/^(?:[A-Za-z0-9_-]|\\\.)+/)?.[0]?.replace(/\\/g, "");
    if (literal !== undefined && literal.length >= 4) out.add(literal);
  }
  return [...out];
}

/** The rules that see plain text; base64-wrapped secrets are looked for with them. */
const PLAIN = buildRuleSet([...PORTED, ...CONTEXT_RULES, ...GENERATED]);
const BUILT_IN = buildRuleSet([
  ...PORTED,
  ...CONTEXT_RULES,
  ...GENERATED,
  base64Rule(
    (decoded) => findSpans(decoded, PLAIN).length > 0,
    literalPrefixes([...PORTED, ...GENERATED]),
  ),
]);

/** Every built-in rule id, in priority order (an id that several rules share once). */
export const BUILT_IN_RULE_IDS: readonly string[] = [
  ...new Set(BUILT_IN.rules.map((rule) => rule.id)),
];

/** Texts shorter than this hold no built-in secret (`pwd=ab` is the shortest). */
const SHORTEST = 5;

function redactBuiltIn(text: string): RedactionResult {
  if (text.length < SHORTEST) return { text, count: 0 };
  let spans = findSpans(text, BUILT_IN);
  if (spans.length === 0) return { text, count: 0 };
  let out = text;
  let count = 0;
  // A marker can change a neighbour's context (a token glued to a redacted one now ends at
  // `[`): scan the output again until nothing changes, so that redaction is idempotent.
  for (let pass = 0; pass < 4 && spans.length > 0; pass++) {
    out = applySpans(out, spans, BUILT_IN);
    count += spans.length;
    spans = findSpans(out, BUILT_IN);
  }
  return { text: out, count };
}

/** Texts up to this long are remembered with their redaction, at most this many of them. */
const MEMO_MAX_CHARS = 128;
const MEMO_MAX_ENTRIES = 8192;

const TOKEN_RE = /\[REDACTED:[a-z0-9-]+\]/g;
const WHOLE_TOKEN_RE = /^\[REDACTED:[a-z0-9-]+\]$/;

/** The redactor a repository's config asks for: the built-in rules and its own patterns. */
export function redactorFor(config: Pick<Config, "redaction">): Redactor {
  return createRedactor(config.redaction.patterns);
}

/** Builds a redactor from the built-in rules plus extra regex sources. Throws `RedactionPatternError` naming the index and the source of a pattern that does not compile. */
export function createRedactor(extraPatterns: readonly string[] = []): Redactor {
  const custom = extraPatterns.map((pattern, index) => ({
    regex: compileCustom(pattern, index),
    token: `[REDACTED:custom-${index}]`,
  }));
  const ruleNames = Object.freeze([
    ...BUILT_IN_RULE_IDS,
    ...custom.map((_c, index) => `custom-${index}`),
  ]);

  // Short texts repeat in a stream (sender and run ids, stages, statuses, hashes seen): each
  // is scanned once. Bounded, and a pure function of the text, so the output is unchanged.
  const memo = new Map<string, RedactionResult>();
  const redact = (text: string): RedactionResult => {
    if (text.length > MEMO_MAX_CHARS) return redactUncached(text);
    let result = memo.get(text);
    if (result === undefined) {
      if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
      result = Object.freeze(redactUncached(text));
      memo.set(text, result);
    }
    return result;
  };
  const redactUncached = (text: string): RedactionResult => {
    const builtIn = redactBuiltIn(text);
    if (custom.length === 0) return builtIn;
    let out = builtIn.text;
    let count = builtIn.count;
    for (const { regex: customRegex, token } of custom) {
      customRegex.lastIndex = 0;
      if (!customRegex.test(out)) continue;
      const replaceIn = (segment: string): string =>
        segment.replace(customRegex, (match: string) => {
          // Zero-width matches that slipped past the probes insert nothing.
          if (match === "") return match;
          count++;
          return token;
        });
      // Existing tokens are left alone, so that a user pattern cannot eat into one.
      out = out.includes("[REDACTED:") ? mapOutsideTokens(out, replaceIn) : replaceIn(out);
    }
    // A user marker may now stand where a built-in rule's look-behind saw a letter.
    if (count > builtIn.count) {
      const again = redactBuiltIn(out);
      out = again.text;
      count += again.count;
    }
    return { text: out, count };
  };

  return { redact, ruleNames };
}

function mapOutsideTokens(text: string, fn: (segment: string) => string): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(TOKEN_RE)) {
    out += fn(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + fn(text.slice(last));
}

// Keys of JSON objects whose string value is a secret as a whole, as in `{"password": "hunter2"}`:
// the key must end with the key word, as in the assignment rules.
const PASSWORD_KEY_RE = new RegExp(`(?:${PASSWORD_KEYS})[0-9]{0,2}$`, "i");
const TOKEN_KEY_RE = new RegExp(`(?:${TOKEN_KEYS})[0-9]{0,2}$|^authorization$`, "i");

/** The marker for a whole value under a secret key: its own rule's when it is a known token. */
function wholeValueToken(value: string, fallback: string): string {
  const spans = findSpans(value, BUILT_IN);
  const only = spans.length === 1 ? spans[0] : undefined;
  if (only !== undefined && only.start === 0 && only.end === value.length) {
    return (BUILT_IN.rules[only.rank] as CompiledRule).token;
  }
  return fallback;
}

/** Redacts every string inside a JSON-like value (object keys are kept, values are redacted), returning a new value and the total count. */
export function redactValue(value: unknown, redactor: Redactor): { value: unknown; count: number } {
  let count = 0;
  const walk = (node: unknown, key: string | undefined): unknown => {
    if (typeof node === "string") {
      if (key !== undefined && node !== "" && !WHOLE_TOKEN_RE.test(node)) {
        if (PASSWORD_KEY_RE.test(key) && looksLikePassword(node)) {
          count++;
          return wholeValueToken(node, "[REDACTED:password-assignment]");
        }
        if (TOKEN_KEY_RE.test(key) && looksLikeToken(node)) {
          count++;
          return wholeValueToken(node, "[REDACTED:generic-api-key]");
        }
      }
      const result = redactor.redact(node);
      count += result.count;
      return result.text;
    }
    // Items of an array under a secret key are secrets too.
    if (Array.isArray(node)) return node.map((item) => walk(item, key));
    if (node !== null && typeof node === "object") {
      // fromEntries defines properties, so a `__proto__` key stays a plain key.
      return Object.fromEntries(
        Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, walk(v, k)]),
      );
    }
    return node;
  };
  return { value: walk(value, undefined), count };
}
