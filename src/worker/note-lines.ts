import { UsageError } from "../errors.js";
import type { NoteInput } from "./emit.js";

/** Most notes one `worker emit --from` takes: they go out as one send. */
export const MAX_NOTES_PER_SEND = 10_000;

const STRING_FIELDS = ["kind", "text", "rationale", "outcome", "privacy", "issue"] as const;
const LIST_FIELDS = ["topics", "links", "supersedes"] as const;
const KNOWN = new Set<string>([...STRING_FIELDS, ...LIST_FIELDS, "confidence"]);

/**
 * Notes for `worker emit --from`: one JSON object per line with the fields the flags take
 * (`kind`, `text`, `rationale`, `topics`, `links`, `issue`, `confidence`, `outcome`,
 * `privacy`, `supersedes`). Blank lines are skipped. Anything else is refused before a note is sent,
 * naming the file, the line and the field; the values themselves are checked when the
 * envelopes are built.
 */
export function parseNoteLines(text: string, file: string): { line: number; note: NoteInput }[] {
  const out: { line: number; note: NoteInput }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === "") continue;
    const at = `${file}:${i + 1}`;
    if (out.length === MAX_NOTES_PER_SEND) {
      throw new UsageError(`${at}: more than ${MAX_NOTES_PER_SEND} notes; split the file`);
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new UsageError(`${at}: not a JSON object`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new UsageError(`${at}: expected a JSON object with kind and text`);
    }
    out.push({ line: i + 1, note: noteOf(value as Record<string, unknown>, at) });
  }
  if (out.length === 0) throw new UsageError(`${file}: no notes`);
  return out;
}

function noteOf(fields: Record<string, unknown>, at: string): NoteInput {
  for (const key of Object.keys(fields)) {
    if (!KNOWN.has(key)) {
      throw new UsageError(`${at}: ${key}: unknown field (expected ${[...KNOWN].join(", ")})`);
    }
  }
  const text = (key: (typeof STRING_FIELDS)[number]): string | undefined => {
    const v = fields[key];
    if (v === undefined) return undefined;
    if (typeof v === "string") return v;
    // An issue number may come as a number.
    if (key === "issue" && typeof v === "number" && Number.isInteger(v)) return String(v);
    throw new UsageError(`${at}: ${key}: expected a string`);
  };
  const list = (key: (typeof LIST_FIELDS)[number]): string[] => {
    const v = fields[key];
    if (v === undefined) return [];
    if (Array.isArray(v) && v.every((item) => typeof item === "string")) return v;
    throw new UsageError(`${at}: ${key}: expected an array of strings`);
  };
  const kind = text("kind");
  const body = text("text");
  if (kind === undefined) throw new UsageError(`${at}: kind: required`);
  if (body === undefined) throw new UsageError(`${at}: text: required`);
  const confidence = fields.confidence;
  if (confidence !== undefined && typeof confidence !== "number") {
    throw new UsageError(`${at}: confidence: expected a number`);
  }
  return {
    kind,
    text: body,
    rationale: text("rationale"),
    topics: list("topics"),
    links: list("links"),
    confidence,
    outcome: text("outcome"),
    privacy: text("privacy"),
    issue: text("issue"),
    supersedes: list("supersedes"),
  };
}
