import { countLoneSurrogates } from "../model/text.js";
import type { Add } from "./verify-document.js";

/** A JSON escape of a surrogate: `\ud83d`. A file on disk can only hold a lone one this way. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/**
 * Reports lone surrogates (half of a UTF-16 pair) in a memory file: strict RFC 8785
 * implementations refuse to hash such text, so another tool could not check the file's hash.
 * JSON files are looked at through their escapes; other text as it is.
 */
export function checkLoneSurrogates(path: string, text: string, add: Add): void {
  let count = countLoneSurrogates(text);
  if (SURROGATE_ESCAPE.test(text)) {
    try {
      count += countInValue(JSON.parse(text) as unknown);
    } catch {
      // Not JSON: other checks report that.
    }
  }
  if (count > 0) {
    add(
      path,
      "lone-surrogate",
      `holds ${count} lone surrogate${count === 1 ? "" : "s"} (invalid UTF-16, which strict RFC 8785 hashing refuses)`,
    );
  }
}

function countInValue(value: unknown): number {
  if (typeof value === "string") return countLoneSurrogates(value);
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + countInValue(v), 0);
  if (value !== null && typeof value === "object") {
    let sum = 0;
    for (const [k, v] of Object.entries(value)) sum += countLoneSurrogates(k) + countInValue(v);
    return sum;
  }
  return 0;
}
