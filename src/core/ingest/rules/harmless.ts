/**
 * Precision: which values after a key word are knowledge, not credentials. A note that says
 * `password: required` or `token_ttl: 3600` must survive; `password=hunter2` must not.
 */

/** Words that say something about a value rather than being one. */
const STOPWORDS = new Set(
  (
    "null nil none undefined true false yes no on off required optional empty unset set " +
    "missing hidden masked redacted string str text bool boolean int integer number any " +
    "object see tbd todo n/a na example placeholder default env environment variable prompt " +
    "prompted unknown invalid valid expired rotated revoked ok the a an it is are was were " +
    "be been in at to of for from this that not must should will can has have each same " +
    "below above here there new await"
  ).split(" "),
);

/** References and placeholders: `${DB_PASSWORD}`, `$TOKEN`, `<token>`, `{{ secret }}`, `%PASS%`, `***`. */
const PLACEHOLDER =
  /^(?:\$\{\{?[^}]*\}?\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^<>]*>|\{\{[^{}]*\}\}|%[A-Za-z_][A-Za-z0-9_]*%|[*x.\u2022]+|X+|process\.env\.[A-Za-z0-9_.]+|os\.environ.*|env\(.*|secrets\.[A-Za-z0-9_.]+)$/;

/**
 * A placeholder inside a value (`fo1_xxxxxxxx`, ten of one character: `AIzaaaaaaaaaaa...`, `sha256~XXXX_PUT_YOUR_TOKEN_HERE`,
 * `<your-key>`) or a documented example key (`AKIAIOSFODNN7EXAMPLE`,
 * `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`): kept, as gitleaks keeps them.
 */
const PLACEHOLDER_INSIDE =
  /x{6,}|X{6,}|\*{4,}|\.\.\.|(.)\1{9,}|your[_-]?(?:api|token|key|secret|pass|own)|_HERE\b|<[^<>]*>/i;
const EXAMPLE_KEY = /EXAMPLE(?:KEY)?$/;

/** The start of a prose aside, a reference or a substitution: `(see docs)`, `[link]`, `<your token>`, `$(cat file)`. */
const ASIDE = /^(?:[([{<]|\$\()/;

function stripQuotes(value: string): string {
  return value.trim().replace(/^\\?["']|\\?["']$/g, "");
}

function isHarmlessWord(value: string): boolean {
  const v = stripQuotes(value);
  if (v === "") return true;
  if (STOPWORDS.has(v.toLowerCase())) return true;
  if (PLACEHOLDER.test(v) || PLACEHOLDER_INSIDE.test(v) || EXAMPLE_KEY.test(v)) return true;
  if (ASIDE.test(v)) return true;
  // A multi-word value that starts with a stop word reads as prose: "is stored in the vault".
  const first = v.split(/\s+/, 1)[0] ?? "";
  return v.includes(" ") && STOPWORDS.has(first.toLowerCase());
}

/**
 * A password can be short and simple (`hunter2`), so any value is one unless it is a
 * stop word, a placeholder, an aside or a small number (a length, a count, a PIN-free flag).
 */
export function looksLikePassword(value: string): boolean {
  if (isHarmlessWord(value)) return false;
  const v = stripQuotes(value);
  return !/^-?\d{1,5}(?:\.\d+)?$/.test(v);
}

/**
 * A token or key has a credential's shape: at least 8 characters, not a plain word, a
 * constant's name (`GITHUB_TOKEN`), a header name (`X-API-Key`) or a number.
 */
export function looksLikeToken(value: string): boolean {
  if (isHarmlessWord(value)) return false;
  const v = stripQuotes(value);
  if (v.length < 8) return false;
  if (/^-?\d+(?:\.\d+)?$/.test(v)) return false;
  // Words and identifiers: lower_case, UPPER_CASE, Capitalized, Header-Name.
  if (/^[a-z]+(?:[_.-][a-z]+)*$/.test(v)) return false;
  if (/^[A-Z]+(?:_[A-Z0-9]+)*$/.test(v)) return false;
  if (/^[A-Z]?[a-z]+(?:-[A-Z]?[A-Za-z][a-z]*)*$/.test(v)) return false;
  if (/^(?:[A-Z][A-Za-z]*-)+[A-Z][A-Za-z]*$/.test(v)) return false;
  // Prose: several words.
  if (/\s/.test(v) && v.split(/\s+/).every((w) => /^[A-Za-z,.;:!?'-]+$/.test(w))) return false;
  return true;
}

/** Shannon entropy of `text` in bits per character. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  const n = text.length;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}
