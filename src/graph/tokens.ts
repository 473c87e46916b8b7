import { createRequire } from "node:module";
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";

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

/** The tokenizer's own pre-tokenizer: the pieces it encodes one by one. */
export function splitTokens(text: string): Iterable<string> {
  return Array.from(text.matchAll(CL100K_TOKEN_SPLIT_REGEX), (m) => m[0]);
}
