/**
 * Secret redaction. Every event passes through here before anything is stored, on the worker
 * before it sends and at ingest for every other writer. The rules are data, assembled in
 * `rules/built-in.ts` (provider formats, context rules, gitleaks' generated rules) plus the
 * base64 rule here; `redact-scan.ts` finds their spans. This module makes the redactor: the
 * built-in rules to a fixed point, the repository's own patterns, a memo of short texts, and
 * the redaction of JSON-like values.
 */
import type { Config } from "../../schema/config.js";
import { compileCustom } from "./custom-patterns.js";
import { applySpans, buildRuleSet, findSpans, type RuleSet, type Span } from "./redact-scan.js";
import { BASE64_RULE_ID, base64Rule } from "./rules/base64.js";
import { plainRules, providerPrefixes } from "./rules/built-in.js";
import { PASSWORD_KEYS, TOKEN_KEYS } from "./rules/context.js";
import { looksLikePassword, looksLikeToken } from "./rules/harmless.js";

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

let plainSet: RuleSet | undefined;
let builtInSet: RuleSet | undefined;

/**
 * The rules that see plain text (base64-wrapped secrets are looked for with them), and those
 * plus the base64 rule: keyword tables built at the first redaction, not when this module
 * loads; the plain set alone only when a base64 run is decoded.
 */
function builtIn(): RuleSet {
  builtInSet ??= buildRuleSet([
    ...plainRules(),
    base64Rule((decoded) => {
      plainSet ??= buildRuleSet(plainRules());
      return findSpans(decoded, plainSet).length > 0;
    }, providerPrefixes()),
  ]);
  return builtInSet;
}

let ruleIds: readonly string[] | undefined;
/** Every built-in rule id, in priority order (an id that several rules share once). */
export function builtInRuleIds(): readonly string[] {
  ruleIds ??= [...new Set([...plainRules().map((rule) => rule.id), BASE64_RULE_ID])];
  return ruleIds;
}

/** Texts shorter than this hold no built-in secret (`pwd=ab` is the shortest). */
const SHORTEST = 5;

let markers: string | undefined;
/** Every marker, so that a secret that could stand inside one (`api-key-1`) is not looked for again. */
function allMarkers(): string {
  markers ??= builtInRuleIds()
    .map((id) => `[REDACTED:${id}]`)
    .join(" ");
  return markers;
}

/** Secrets this long or longer have their other copies redacted too (shorter ones are words). */
const MIN_COPY_CHARS = 8;
/** At most this many distinct secrets of a text are looked for again: a bound on the work per text. */
const MAX_COPIED = 32;

/** The markers of the secrets found, by their text: each is looked for again where it stands. */
function copiesToFind(text: string, spans: readonly Span[]): Map<string, string> {
  const copies = new Map<string, string>();
  for (const span of spans) {
    if (copies.size >= MAX_COPIED) break;
    const secret = text.slice(span.start, span.end);
    if (secret.length < MIN_COPY_CHARS || copies.has(secret) || allMarkers().includes(secret))
      continue;
    copies.set(secret, builtIn().tokens[span.rank] as string);
  }
  return copies;
}

/**
 * Every verbatim copy of a found secret, wherever it stands: glued inside a word
 * (`somSG.<key>ewhere`), where no rule sees a token, it is still the secret.
 */
function redactCopies(text: string, copies: ReadonlyMap<string, string>): RedactionResult {
  let out = text;
  let count = 0;
  for (const [secret, token] of copies) {
    if (!out.includes(secret)) continue;
    const parts = out.split(secret);
    count += parts.length - 1;
    out = parts.join(token);
  }
  return { text: out, count };
}

function redactBuiltIn(text: string): RedactionResult {
  if (text.length < SHORTEST) return { text, count: 0 };
  const set = builtIn();
  let spans = findSpans(text, set);
  if (spans.length === 0) return { text, count: 0 };
  const copies = copiesToFind(text, spans);
  let out = text;
  let count = 0;
  // A marker can change a neighbour's context (a token glued to a redacted one now ends at
  // `[`): scan the output again until nothing changes, so that redaction is idempotent.
  for (let pass = 0; pass < 4 && spans.length > 0; pass++) {
    out = applySpans(out, spans, set);
    count += spans.length;
    spans = findSpans(out, set);
  }
  const copied = redactCopies(out, copies);
  out = copied.text;
  count += copied.count;
  // A copy's marker changes its neighbours' context too (`AKIA...Authorization: ` glued to
  // the key, the copy of the header's value redacted): scan again while a pass finds more.
  if (copied.count > 0) {
    spans = findSpans(out, set);
    for (let pass = 0; pass < 4 && spans.length > 0; pass++) {
      out = applySpans(out, spans, set);
      count += spans.length;
      spans = findSpans(out, set);
    }
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
  // Named when asked: a redactor made at a module's load must not assemble the rules then.
  let ruleNames: readonly string[] | undefined;

  // Short texts repeat in a stream (sender and run ids, stages, statuses, hashes seen): each
  // is scanned once. Bounded, and a pure function of the text, so the output is unchanged.
  const memo = new Map<string, RedactionResult>();
  const redact = (text: string): RedactionResult => {
    if (text.length > MEMO_MAX_CHARS) return redactUncached(text);
    // Too short for any built-in rule (stages, statuses, short issue numbers): no look-up.
    if (text.length < SHORTEST && custom.length === 0) return { text, count: 0 };
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

  return {
    redact,
    get ruleNames() {
      ruleNames ??= Object.freeze([
        ...builtInRuleIds(),
        ...custom.map((_c, index) => `custom-${index}`),
      ]);
      return ruleNames;
    },
  };
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
  const set = builtIn();
  const spans = findSpans(value, set);
  const only = spans.length === 1 ? spans[0] : undefined;
  if (only !== undefined && only.start === 0 && only.end === value.length) {
    return set.tokens[only.rank] as string;
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
