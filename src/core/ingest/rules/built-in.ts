/**
 * The built-in rules, assembled: the ported provider rules (`gitleaks.ts`) held to gitleaks'
 * precision (word boundaries, the allowlists of the generated rule of the same id, placeholders
 * kept), the context rules (`context.ts`), and gitleaks' generated default rules
 * (`gitleaks-default.ts`) with gitleaks' global allowlist, less those the context rules replace.
 */
import { CONTEXT_RULES } from "./context.js";
import { GITLEAKS_RULES } from "./gitleaks.js";
import {
  GITLEAKS_DEFAULT_RULES,
  GITLEAKS_GLOBAL_ALLOW,
  GITLEAKS_GLOBAL_STOPWORDS,
} from "./gitleaks-default.js";
import type { SecretRule } from "./types.js";

/**
 * gitleaks' global allowlist, with one slip mended: it spells `^true|false|null$` without a
 * group, so a secret that starts with `true`, ends with `null` or holds `false` anywhere was
 * allowed (a planted `sk-...NULL` passed). What it means is a whole value of one of the three.
 */
const SLIPPED_WORDS = "^[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[nN][uU][lL][lL]$";
const GLOBAL_ALLOW = GITLEAKS_GLOBAL_ALLOW.map((source) =>
  source === SLIPPED_WORDS
    ? "^(?:[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[nN][uU][lL][lL])$"
    : source,
);

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

/** `s.` followed by each letter and digit: the start of a Vault service token of the old form. */
const VAULT_LEGACY_STARTS = [..."abcdefghijklmnopqrstuvwxyz0123456789"].map((c) => `s.${c}`);

/**
 * Keywords narrowed where gitleaks' own occur in most prose (`ey` of `key`, `they`; `s.` at
 * the end of every sentence whose last word ends in `s`): every JWT starts `eyJ` (the base64
 * of `{"`), and every match of the Vault service token rule starts `hvs.` or `s.` and a letter
 * or digit. Each match still holds a keyword where it starts, so the rule runs on every text
 * it can match and its scan starts no later than that match.
 */
const NARROWER_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  jwt: ["eyj"],
  "vault-service-token": ["hvs.", ...VAULT_LEGACY_STARTS],
};

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

/** The context gitleaks lets a match take before its key word: `[\w.-]{0,50}?`, once or twice. */
const LEADING_CONTEXT = /^((?:\(\?:)*)\[\\w\.-\]\{0,50\}\?/;

/**
 * The pattern without the word characters gitleaks lets a match take before its key word.
 * They are never part of the secret (a group located by its indices), and two such lazy runs
 * side by side, with the key word's own padding after them, cost some 200,000 steps at every
 * position of a line of repeated key words: 16 KB took seconds, 1 MiB would take hours.
 */
function withoutLeadingContext(pattern: string): string {
  let out = pattern;
  for (let next = out.replace(LEADING_CONTEXT, "$1"); next !== out; ) {
    out = next;
    next = out.replace(LEADING_CONTEXT, "$1");
  }
  return out;
}

/**
 * A rule whose id and keywords are known now (the keyword table needs them at the first
 * redaction) and whose other fields are made at its first compile: most rules of a process
 * never run, and making all of them cost every emit's start-up. One class with its getters on
 * the prototype: some 300 such rules are made by every process that redacts.
 */
class DeferredRule implements SecretRule {
  #made: SecretRule | undefined;
  constructor(
    readonly id: string,
    readonly keywords: readonly string[],
    private readonly make: () => SecretRule,
  ) {}
  private full(): SecretRule {
    this.#made ??= this.make();
    return this.#made;
  }
  get pattern() {
    return this.full().pattern;
  }
  get lookback() {
    return this.full().lookback;
  }
  get flags() {
    return this.full().flags;
  }
  get groups() {
    return this.full().groups;
  }
  get entropy() {
    return this.full().entropy;
  }
  get allow() {
    return this.full().allow;
  }
  get allowMatch() {
    return this.full().allowMatch;
  }
  get allowLine() {
    return this.full().allowLine;
  }
  get stopwords() {
    return this.full().stopwords;
  }
  get redactPlaceholders() {
    return this.full().redactPlaceholders;
  }
  get check() {
    return this.full().check;
  }
}

const generatedSources = () =>
  GITLEAKS_DEFAULT_RULES.filter((rule) => !OWN_CONTEXT_RULES.has(rule.id));

/**
 * gitleaks' default rules as generated, after the ported ones (whose ids name a marker
 * first), with gitleaks' global allowlist, less those the context rules replace.
 */
function generatedRules(): SecretRule[] {
  return generatedSources().map((rule) => {
    const keywords = NARROWER_KEYWORDS[rule.id] ?? rule.keywords;
    return new DeferredRule(rule.id, keywords, () => {
      const pattern = withoutLeadingContext(rule.pattern);
      return {
        ...rule,
        pattern,
        keywords,
        lookback: startsWithKeyword({ ...rule, pattern }) ? 0 : GENERATED_LOOKBACK,
        flags: `d${rule.flags ?? ""}`,
        allow: [...(rule.allow ?? []), ...GLOBAL_ALLOW],
        stopwords: [...(rule.stopwords ?? []), ...GITLEAKS_GLOBAL_STOPWORDS],
      };
    });
  });
}

/** A placeholder's run inside a token: `xxxxxx`, `XXXXXX`, `000000`, `######`, `******`. */
const PLACEHOLDER_RUN = "([xX01#*.])\\1{5,}";

/**
 * The ported provider rules, held to gitleaks' precision: a token starts and ends at a word
 * boundary (`task_test_...` holds no Stripe key), and the entropy floor and allowlists of the
 * gitleaks rule of the same id apply (`ghp_xxxx...` is a placeholder).
 */
function portedRules(): SecretRule[] {
  return GITLEAKS_RULES.map(
    (rule) =>
      new DeferredRule(rule.id, rule.keywords, () => {
        const peer = GITLEAKS_DEFAULT_RULES.find((other) => other.id === rule.id);
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
            ...GLOBAL_ALLOW,
          ],
          stopwords: peer?.stopwords ?? [],
        };
      }),
  );
}

/**
 * The literal prefixes (4 characters or more) the provider rules' matches start with
 * (`ghp_`, `glsa_`, `dop_v1_`): their base64 forms are the base64 rule's keywords, so that
 * a wrapped token of any provider is decoded and found.
 */
function literalPrefixes(patterns: readonly string[]): string[] {
  const out = new Set<string>();
  for (const pattern of patterns) {
    const head = pattern.replace(/^(?:\(\?<![^)]*\)|\\b|\(\?:|\()+/, "");
    const literal = head.match(/^(?:[A-Za-z0-9_-]|\\\.)+/)?.[0]?.replace(/\\/g, "");
    if (literal !== undefined && literal.length >= 4) out.add(literal);
  }
  return [...out];
}

/**
 * Every built-in rule that sees plain text, in priority order (where spans overlap, the first
 * rule names the marker): the ported provider rules, the context rules, gitleaks' generated
 * rules. The base64 rule is added by the redactor, which looks for wrapped secrets with these.
 */
export function plainRules(): readonly SecretRule[] {
  plain ??= [...portedRules(), ...CONTEXT_RULES, ...generatedRules()];
  return plain;
}

/**
 * The provider rules' literal prefixes: base64 keywords, so that any wrapped token is decoded.
 * Made at first use, like the rules: a command that never redacts does not pay for either.
 */
export function providerPrefixes(): readonly string[] {
  prefixes ??= literalPrefixes([
    // The ported rules' wrapping (a look-behind, a group) is stripped again: their own patterns.
    ...GITLEAKS_RULES.map((rule) => rule.pattern),
    ...generatedSources().map((rule) => withoutLeadingContext(rule.pattern)),
  ]);
  return prefixes;
}

let plain: readonly SecretRule[] | undefined;
let prefixes: readonly string[] | undefined;
