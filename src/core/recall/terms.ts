import { tokenize } from "./tokenize.js";

/**
 * Recall's index terms: `tokenize`'s words, less the words a question is made of, each
 * reduced to a light stem, so `webhooks` finds `webhook` and `retries` finds `retry`.
 * Only the inflections English adds to a word are taken off (Porter's first step: plurals,
 * -ed, -ing, a final y); derivations (-ation, -ness) stay, so unrelated words do not merge.
 */

/** Words a question or a request is made of: they say nothing about what is asked. */
const QUESTION_WORDS = new Set([
  "about",
  "after",
  "again",
  "all",
  "any",
  "before",
  "can",
  "could",
  "did",
  "doing",
  "done",
  "each",
  "get",
  "got",
  "had",
  "having",
  "he",
  "her",
  "here",
  "him",
  "his",
  "how",
  "i",
  "me",
  "may",
  "might",
  "must",
  "my",
  "our",
  "ours",
  "she",
  "should",
  "some",
  "tell",
  "their",
  "them",
  "there",
  "these",
  "they",
  "those",
  "us",
  "what",
  "whats",
  "when",
  "where",
  "which",
  "while",
  "who",
  "whom",
  "whose",
  "why",
  "will",
  "would",
  "you",
  "your",
]);

/** The recall terms of `text`, in order (repeats kept: term frequency counts them). */
export function recallTerms(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    if (QUESTION_WORDS.has(token)) continue;
    out.push(stem(token));
  }
  return out;
}

const VOWEL = /[aeiouy]/;
const LETTERS = /^[a-z]+$/;

/**
 * Porter's step 1 (a, b, c) on an ASCII lowercase word; anything else is returned as it is.
 * `caresses` -> `caress`, `ponies` -> `poni`, `cats` -> `cat`, `agreed` -> `agre`,
 * `hopping` -> `hop`, `filing` -> `file`, `happy` -> `happi`.
 */
export function stem(word: string): string {
  if (word.length <= 3 || !LETTERS.test(word)) return word;
  let w = word;
  // 1a: plurals.
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is"))
    w = w.slice(0, -1);
  // 1b: -eed, -ed, -ing.
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else {
    const suffix = w.endsWith("ed") ? 2 : w.endsWith("ing") ? 3 : 0;
    if (suffix > 0 && VOWEL.test(w.slice(0, -suffix))) {
      w = w.slice(0, -suffix);
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (doubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
      else if (measure(w) === 1 && cvc(w)) w += "e";
    }
  }
  // 1c: a final y after a vowel-bearing stem is i.
  if (w.endsWith("y") && VOWEL.test(w.slice(0, -1).replace(/y/g, ""))) w = `${w.slice(0, -1)}i`;
  // A final e goes, so `cache`, `cached` and `caching` meet.
  if (w.length > 3 && w.endsWith("e") && !w.endsWith("ee")) w = w.slice(0, -1);
  return w;
}

function isConsonant(w: string, i: number): boolean {
  const c = w[i] as string;
  if ("aeiou".includes(c)) return false;
  if (c === "y") return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's m: the number of vowel-consonant sequences. */
function measure(w: string): number {
  let m = 0;
  let i = 0;
  while (i < w.length && isConsonant(w, i)) i++;
  while (i < w.length) {
    while (i < w.length && !isConsonant(w, i)) i++;
    if (i >= w.length) break;
    while (i < w.length && isConsonant(w, i)) i++;
    m++;
  }
  return m;
}

function doubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
}

/** Consonant-vowel-consonant at the end, the last not w, x or y (`hop`, not `snow`). */
function cvc(w: string): boolean {
  const n = w.length;
  return (
    n >= 3 &&
    isConsonant(w, n - 3) &&
    !isConsonant(w, n - 2) &&
    isConsonant(w, n - 1) &&
    !/[wxy]/.test(w[n - 1] as string)
  );
}

/**
 * How much a term says: BM25's inverse document frequency of a term found in `df` of `total`
 * documents. Recall and `worker context` weigh the words of a query by it, so a word most
 * notes hold ("did", a team's name) cannot choose what comes back.
 */
export function termWeight(df: number, total: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}
