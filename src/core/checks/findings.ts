import { compareText } from "../model/text.js";

/** Every kind of problem `verifyMemory` reports. */
export const FINDING_CODES = [
  "catalog-missing",
  "catalog-invalid",
  "catalog-not-canonical-form",
  "catalog-hash",
  "catalog-unsorted",
  "duplicate-id",
  "duplicate-path",
  "entry-path",
  "missing-file",
  "unlisted-file",
  "bad-layout",
  "engram-invalid",
  "engram-not-canonical-form",
  "engram-hash",
  "engram-id",
  "engram-path",
  "engram-window",
  "entry-mismatch",
  "engram-too-large",
  "tier-bytes",
  "tier-files",
  "focus-missing",
  "focus-marker",
  "focus-stale",
  "focus-bytes",
  "focus-items",
  "focus-content",
  "lone-surrogate",
  "document-path",
  "document-hash",
  "document-invalid",
  "document-budget",
  "version-log-invalid",
  "version-log-mismatch",
  "symlink",
] as const;

/** The kind of a finding, one of `FINDING_CODES`. */
export type FindingCode = (typeof FINDING_CODES)[number];

/** One problem: the file it is about, its kind, and what was expected vs found. */
export interface Finding {
  path: string;
  code: FindingCode;
  message: string;
}

/** One precise line per finding: `<path>: <message>`. */
export function formatFinding(f: { path: string; message: string }): string {
  return `${oneLine(f.path)}: ${oneLine(f.message)}`;
}

export function compareFindings(
  a: { path: string; code: string; message: string },
  b: { path: string; code: string; message: string },
): number {
  return (
    compareText(a.path, b.path) || compareText(a.code, b.code) || compareText(a.message, b.message)
  );
}

/** A message on one line: control and line-separator characters become spaces. */
export function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, " ");
}
