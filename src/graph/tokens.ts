import { createRequire } from "node:module";
import { SPLIT_PATTERN } from "../core/graph/context-tokens.js";

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

export { SPLIT_PATTERN };

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
