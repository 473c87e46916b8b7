import { createRequire } from "node:module";

/**
 * Tokens as GPT-4-class models count them (cl100k_base, through gpt-tokenizer): close to
 * what other models' tokenizers give for English and code, and far closer than chars / 4.
 */
export const TOKENIZER = "cl100k_base";

type Encoding = typeof import("gpt-tokenizer/encoding/cl100k_base");
let encoding: Encoding | undefined;

/**
 * The tokenizer's count of `text`. Its tables (a megabyte of code) are loaded on the first
 * call, synchronously, so a caller that finds its counts in the context index's memo never
 * pays for them.
 */
export function countTokens(text: string): number {
  encoding ??= createRequire(import.meta.url)("gpt-tokenizer/encoding/cl100k_base") as Encoding;
  return encoding.countTokens(text);
}

/**
 * The tokenizer's pre-tokenizer (gpt-tokenizer's `CL100K_TOKEN_SPLIT_REGEX`, which a test
 * holds equal to this): the pieces it encodes one by one. Written out so that splitting does
 * not load the library's module of every encoding's patterns.
 */
export const SPLIT_PATTERN = String.raw`'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`;
const SPLIT = new RegExp(SPLIT_PATTERN, "gu");

export function splitTokens(text: string): Iterable<string> {
  return Array.from(text.matchAll(SPLIT), (m) => m[0]);
}

/**
 * The words (letters after at most one space) the tokenizer encodes as a single token, sorted
 * by code units: the entries of its vocabulary of that shape, each kept only when the
 * tokenizer itself counts it as one token. A topic word memory never held is most often one
 * of them ("why", "quantum"), counted without loading the tokenizer (see `context-cache.ts`).
 */
export function singleTokenWords(): string[] {
  const ranks = (
    createRequire(import.meta.url)("gpt-tokenizer/bpeRanks/cl100k_base") as { default: unknown[] }
  ).default;
  const words: string[] = [];
  for (const entry of ranks) {
    if (typeof entry !== "string" || !WORD.test(entry)) continue;
    const pieces = splitTokens(entry) as string[];
    if (pieces.length === 1 && pieces[0] === entry && countTokens(entry) === 1) words.push(entry);
  }
  return words.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const WORD = /^ ?\p{L}+$/u;
