/**
 * Recall's words, in a module of their own: the context index matches a topic with the same
 * words, and a process answering a topic should not load the whole recall engine for them.
 */

const STOP_WORDS = new Set([
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "been",
  "but",
  "by",
  "do",
  "does",
  "for",
  "from",
  "has",
  "have",
  "if",
  "in",
  "into",
  "is",
  "it",
  "its",
  "of",
  "on",
  "or",
  "so",
  "than",
  "that",
  "the",
  "then",
  "this",
  "to",
  "was",
  "we",
  "were",
  "with",
]);

const SPLIT = /[^\p{L}\p{N}\p{M}]+/u;
const ASCII = /^[\x20-\x7e]*$/;

/**
 * Lowercased word tokens of `text`: split on anything but letters, digits and combining marks,
 * stop words and one-character tokens dropped. `auth-service` gives `auth`, `service`.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  // NFKC is a costly no-op on ASCII text, the common case.
  const normalized = ASCII.test(text) ? text : text.normalize("NFKC");
  for (const token of normalized.toLowerCase().split(SPLIT)) {
    if (token.length >= 2 && !STOP_WORDS.has(token)) out.push(token);
  }
  return out;
}
