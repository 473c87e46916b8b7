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
