/*
 * The note kinds and outcomes as plain constants, without zod: the command tables show them
 * in `--help` and must not pay for loading the schema library at start-up.
 */

export const NOTE_KINDS = [
  "decision",
  "fact",
  "lesson",
  "convention",
  "incident",
  "question",
] as const;

export const OUTCOMES = ["success", "failure", "partial", "abandoned"] as const;
