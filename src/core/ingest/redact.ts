/**
 * Secret redaction for ingest. Every event passes through here before anything is stored, so
 * the built-in rules are compiled into one case-sensitive alternation (plus a second, cheap
 * scan for JWTs): one pass over a string, however many rules. Case-insensitive key words are
 * spelled out as character classes, since Node 20 has no inline `(?i:)`.
 */

export interface RedactionResult {
  text: string;
  count: number;
}

export interface Redactor {
  /** Returns the text with every secret replaced by `[REDACTED:<rule>]`, and how many were replaced. */
  redact(text: string): RedactionResult;
  readonly ruleNames: readonly string[];
}

/** A `[redaction] patterns` entry that is not a usable regular expression. */
export class RedactionPatternError extends Error {
  constructor(
    readonly index: number,
    readonly pattern: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`redaction.patterns[${index}] ${JSON.stringify(pattern)}: ${reason}`, options);
    this.name = "RedactionPatternError";
  }
}

interface Rule {
  name: string;
  /** Regex source. Groups named `v_*` mark the secret part; text before it in the match is kept. */
  source: string;
  /** Runs as a second scan, over the output of the first. */
  second?: boolean;
  /** A token with a shape of its own: a generic rule's value of this shape takes this name. */
  shaped?: boolean;
}

/** `abc` -> `[Aa][Bb][Cc]`: case-insensitive words inside a case-sensitive regex. */
function ci(word: string): string {
  let out = "";
  for (const ch of word) {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    out += lower === upper ? ch.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&") : `[${upper}${lower}]`;
  }
  return out;
}

// A value never starts inside an existing token (idempotence) or at a PEM block, which has
// spaces and must be taken whole by its own rule.
const GUARD = "(?!\\[REDACTED:|-----BEGIN)";
const SCHEME_WORDS = ["bearer", "basic", "token", "bot", "digest", "negotiate"];
const AUTH_SCHEMES = `(?:${SCHEME_WORDS.map(ci).join("|")})`;
const QUOTE_OPT = `(?:\\\\?["'])?`;
const SEP = `${QUOTE_OPT}[ \\t]*(?::=|[:=])[ \\t]*`;

// Key words whose value is a secret; not followed by a letter, so `tokens` or `secretary` are not.
const KEYWORD = `(?:${ci("passw")}(?:${ci("or")})?${ci("d")}|${ci("passphrase")}|${ci("secret")}|${ci("token")}|${ci("api")}[_-]?${ci("key")}|${ci("access")}[_-]?${ci("key")}|${ci("private")}[_-]?${ci("key")})(?![A-Za-z])`;

// A quoted value runs to its closing quote, so that a password with spaces goes as a whole.
const ASSIGNMENT_VALUE = [
  // JSON escaped inside a string: \"value\"
  `\\\\"(?<v_esc>${GUARD}(?:[^"\\\\\\r\\n]|\\\\[^"\\r\\n])+)`,
  `"(?<v_dq>${GUARD}(?:[^"\\\\\\r\\n]|\\\\.)+)`,
  `'(?<v_sq>${GUARD}(?:[^'\\\\\\r\\n]|\\\\.)+)`,
  `(?!(?:${AUTH_SCHEMES})[ \\t])(?<v_bare>${GUARD}[^\\s"'\`,;&[\\]{}\\\\=][^\\s"'\`,;&[\\]{}\\\\]*)`,
].join("|");

/** Built-in rules in priority order: where two could start at the same place, the first wins. */
const BUILT_IN_RULES: readonly Rule[] = [
  {
    name: "private-key",
    // Without an END line the rest of the text is taken: a truncated key is still a key.
    source:
      "-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\\s\\S]*)",
  },
  {
    name: "jwt",
    // Starts only where a base64url run starts: otherwise every `eyJ` inside a long run would
    // rescan it (quadratic). The look-behind is why this rule has its own second scan: there
    // it sees `]` where the first scan replaced a neighbour, in every pass alike (idempotence).
    source: "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*",
    second: true,
    shaped: true,
  },
  {
    name: "github-token",
    source: "gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}",
    shaped: true,
  },
  { name: "npm-token", source: "npm_[A-Za-z0-9]{36,}", shaped: true },
  {
    name: "aws-access-key-id",
    source: "(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
    shaped: true,
  },
  {
    name: "aws-secret-key",
    source: `${ci("aws")}[_.-]?${ci("secret")}[_.-]?(?:${ci("access")}[_.-]?)?${ci("key")}${SEP}${QUOTE_OPT}(?<v_key>${GUARD}[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])`,
  },
  {
    name: "slack-webhook",
    source:
      "(?:https?://)?hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
    shaped: true,
  },
  {
    name: "slack-token",
    source: "xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}",
    shaped: true,
  },
  { name: "anthropic-key", source: "sk-ant-[A-Za-z0-9_-]{20,}", shaped: true },
  {
    name: "openai-key",
    // Legacy keys are 48 base62 characters. Shorter ones (other providers use `sk-` too) must
    // be mixed-case, which keeps ids such as `task-<hex>` out. No look-behind: a match must
    // not depend on text that an earlier match replaces (idempotence).
    source:
      "sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{48,}|(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{32,})",
    shaped: true,
  },
  {
    name: "bearer",
    source: [
      // A scheme word, when present, is kept; a bare scheme word is never taken as the credential.
      `${ci("authorization")}${SEP}(?:${AUTH_SCHEMES}[ \\t]+|(?!${AUTH_SCHEMES}[ \\t]))(?<v_auth>${GUARD}[^\\s"'\`,;\\\\]+)`,
      // A bare `Bearer x` needs a digit or some length, so that prose ("bearer authentication") stays.
      `(?:[Bb]earer|BEARER)[ \\t]+(?<v_bearer>${GUARD}(?:(?=[A-Za-z_.~+/-]*[0-9])[A-Za-z0-9_.~+/-]{8,}|[A-Za-z0-9_.~+/-]{20,})=*)`,
    ].join("|"),
  },
  {
    name: "assignment",
    // No `.` in the key's suffix: `src/auth/token.ts:42` and `secret.yaml: 3` are file names.
    source: `${KEYWORD}[A-Za-z0-9_-]{0,40}${SEP}(?:${ASSIGNMENT_VALUE})`,
  },
  {
    name: "url-credentials",
    // Anchored at `://`, so that the scan does not try a scheme at every letter. The user name
    // is kept (and scanned for tokens of its own).
    source: `://[^\\s/?#@:"'<>[\\]]*:(?<v_pass>${GUARD}[^\\s/?#"'<>]+)(?=@)`,
  },
];

const TOKEN_RE = /\[REDACTED:[a-z0-9-]+\]/g;
const WHOLE_TOKEN_RE = /^\[REDACTED:[a-z0-9-]+\]$/;

// A pattern that matches nothing at all would put a token between every two characters.
const EMPTY_PROBES = ["", "a", "Z", "0", " ", "-", "_", "\n", "[REDACTED:x]"];

interface CompiledRule {
  name: string;
  token: string;
  /** Capture index of the whole rule in the combined regex. */
  group: number;
  /** Capture indices of the secret parts (see `Rule.source`). */
  valueGroups: readonly number[];
}

/**
 * Numbers the named groups of `source` and returns it with the names removed: exec results
 * of regexes with named groups build a `groups` object per match, which costs more than the
 * scan itself.
 */
function numberGroups(source: string): { source: string; indices: Map<string, number> } {
  const indices = new Map<string, number>();
  let out = "";
  let count = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === "\\") {
      out += source.slice(i, i + 2);
      i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
    } else if (ch === "[") {
      inClass = true;
    } else if (ch === "(") {
      const named = /^\(\?<([A-Za-z][A-Za-z0-9_]*)>/.exec(source.slice(i, i + 40));
      if (named?.[1] !== undefined) {
        indices.set(named[1], ++count);
        out += "(";
        i += named[0].length - 1;
        continue;
      }
      if (source[i + 1] !== "?") count++;
    }
    out += ch;
  }
  return { source: out, indices };
}

interface Scan {
  regex: RegExp;
  rules: readonly CompiledRule[];
}

/** One combined regex over `rules`, each alternative a numbered group. */
function compileScan(rules: readonly Rule[]): Scan {
  const parts = rules.map((rule, i) => {
    // Per-rule names keep the groups unique across the alternation.
    const source = rule.source.replace(/\(\?<v_([a-z]+)>/g, `(?<v${i}_$1>`);
    return `(?<r${i}>${source})`;
  });
  const { source, indices } = numberGroups(parts.join("|"));
  const compiled = rules.map((rule, i) => {
    const valueGroups: number[] = [];
    for (const [name, index] of indices) if (name.startsWith(`v${i}_`)) valueGroups.push(index);
    const group = indices.get(`r${i}`);
    if (group === undefined) throw new Error(`redact: rule ${rule.name} lost its group`);
    return { name: rule.name, token: `[REDACTED:${rule.name}]`, group, valueGroups };
  });
  return { regex: new RegExp(source, "g"), rules: compiled };
}

const FIRST_SCAN = compileScan(BUILT_IN_RULES.filter((rule) => rule.second !== true));
const SECOND_SCAN = compileScan(BUILT_IN_RULES.filter((rule) => rule.second === true));

const SHAPES = BUILT_IN_RULES.filter((rule) => rule.shaped === true).map((rule) => ({
  token: `[REDACTED:${rule.name}]`,
  regex: new RegExp(`^(?:${rule.source})$`),
}));

/** `[REDACTED:github-token]` reads better than `[REDACTED:assignment]` for `TOKEN=ghp_...`. */
function tokenFor(value: string, fallback: string): string {
  for (const shape of SHAPES) if (shape.regex.test(value)) return shape.token;
  return fallback;
}

/** Replaces every match of one scan; `count` gets one per replacement. */
function runScan(text: string, scan: Scan, counter: { count: number }): string {
  const { regex, rules } = scan;
  regex.lastIndex = 0;
  let m = regex.exec(text);
  if (m === null) return text;
  let out = "";
  let last = 0;
  do {
    const match = m[0];
    let replacement = match;
    for (const rule of rules) {
      if (m[rule.group] === undefined) continue;
      replacement = rule.token;
      for (const g of rule.valueGroups) {
        const value = m[g];
        if (value !== undefined) {
          // The kept part is scanned too: a URL's user name can be a token of its own.
          const kept = runScan(match.slice(0, match.length - value.length), scan, counter);
          replacement = kept + tokenFor(value, rule.token);
          break;
        }
      }
      counter.count++;
      break;
    }
    out += text.slice(last, m.index) + replacement;
    last = m.index + match.length;
    // The nested scan above shares the regex, so the position is set again.
    regex.lastIndex = last;
    m = regex.exec(text);
  } while (m !== null);
  return out + text.slice(last);
}

/**
 * Rejects a group that repeats without bound while its body also repeats without bound, as in
 * `(a+)+` or `(\w*x)*`: the classic shape of catastrophic backtracking. Ingest is synchronous,
 * so one such pattern could stall the Director; a heuristic rejection is the affordable guard.
 */
function nestedUnboundedQuantifier(source: string): boolean {
  const unboundedAt = (at: number): boolean => {
    const ch = source[at];
    if (ch === "*" || ch === "+") return true;
    return ch === "{" && /^\{\d+,\}/.test(source.slice(at, at + 24));
  };
  // One entry per open group: does its body repeat without bound?
  const stack: boolean[] = [];
  const markParent = (): void => {
    if (stack.length > 0) stack[stack.length - 1] = true;
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "\\") {
      i += 2;
    } else if (ch === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      i++;
    } else if (ch === "(") {
      stack.push(false);
      i++;
    } else if (ch === ")") {
      const inner = stack.pop() ?? false;
      i++;
      if (inner && unboundedAt(i)) return true;
      if (inner) markParent();
    } else {
      // Quantifiers land here, after the atom they repeat.
      if (unboundedAt(i)) markParent();
      i++;
    }
  }
  return false;
}

function compileCustom(pattern: string, index: number): RegExp {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, "g");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RedactionPatternError(index, pattern, `does not compile: ${reason}`, {
      cause: error,
    });
  }
  for (const probe of EMPTY_PROBES) {
    regex.lastIndex = 0;
    const m = regex.exec(probe);
    if (m !== null && m[0] === "") {
      throw new RedactionPatternError(index, pattern, "matches the empty string");
    }
  }
  regex.lastIndex = 0;
  if (nestedUnboundedQuantifier(pattern)) {
    throw new RedactionPatternError(
      index,
      pattern,
      "nests unbounded repetition (for example `(a+)+`), which can backtrack catastrophically",
    );
  }
  return regex;
}

/** Builds a redactor from the built-in rules plus extra regex sources. Throws `RedactionPatternError` naming the index and the source of a pattern that does not compile. */
export function createRedactor(extraPatterns: readonly string[] = []): Redactor {
  const custom = extraPatterns.map((pattern, index) => ({
    regex: compileCustom(pattern, index),
    token: `[REDACTED:custom-${index}]`,
  }));
  const ruleNames = Object.freeze([
    ...BUILT_IN_RULES.map((rule) => rule.name),
    ...custom.map((_c, index) => `custom-${index}`),
  ]);

  const redact = (text: string): RedactionResult => {
    const counter = { count: 0 };
    let out = runScan(runScan(text, FIRST_SCAN, counter), SECOND_SCAN, counter);
    if (custom.length === 0) return { text: out, count: counter.count };
    const builtInCount = counter.count;
    for (const { regex: customRegex, token } of custom) {
      customRegex.lastIndex = 0;
      if (!customRegex.test(out)) continue;
      const replaceIn = (segment: string): string =>
        segment.replace(customRegex, (match: string) => {
          // Zero-width matches that slipped past the probes insert nothing.
          if (match === "") return match;
          counter.count++;
          return token;
        });
      // Existing tokens are left alone, so that a user pattern cannot eat into one.
      out = out.includes("[REDACTED:") ? mapOutsideTokens(out, replaceIn) : replaceIn(out);
    }
    // A user token may now stand where the look-behind of the second scan saw a letter.
    if (counter.count > builtInCount) out = runScan(out, SECOND_SCAN, counter);
    return { text: out, count: counter.count };
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

// Keys of JSON objects whose string value is a secret as a whole, as in `{"password": "hunter2"}`.
const SECRET_KEY_RE = new RegExp(`${KEYWORD}|^${ci("authorization")}$`);
const KEY_TOKEN = "[REDACTED:assignment]";

/** Redacts every string inside a JSON-like value (object keys are kept, values are redacted), returning a new value and the total count. */
export function redactValue(value: unknown, redactor: Redactor): { value: unknown; count: number } {
  let count = 0;
  const walk = (node: unknown, key: string | undefined): unknown => {
    if (typeof node === "string") {
      if (
        key !== undefined &&
        node !== "" &&
        !WHOLE_TOKEN_RE.test(node) &&
        SECRET_KEY_RE.test(key)
      ) {
        count++;
        return tokenFor(node, KEY_TOKEN);
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
