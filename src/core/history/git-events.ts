import type { Link } from "../../schema/common.js";
import type { NoteKind } from "../../schema/envelope.js";
import { ENVELOPE_SCHEMA_VERSION } from "../../schema/envelope.js";
import { truncateChars } from "../model/text.js";

/** One commit, as read from git, with the files it changed against its first parent. */
export interface GitCommitInfo {
  sha: string;
  message: string;
  /** Committer time, seconds since 1970. */
  committedAt: number;
  /** Changed paths (repository-relative); every file for a root commit. */
  files: readonly string[];
}

/** An agent-bus envelope built from history (the fields `normalizeEnvelope` checks). */
export interface GitEnvelope {
  schema_version: typeof ENVELOPE_SCHEMA_VERSION;
  message_type: "memory_event.v1" | "memory_note.v1";
  sent_at: string;
  sender: { role: "operator"; id: string };
  seq: number;
  event_id: string;
  payload: Record<string, unknown>;
}

/** Trailer keys (case-insensitive) that become notes, and their note kind. */
export const TRAILER_KINDS: Readonly<Record<string, NoteKind>> = {
  decision: "decision",
  lesson: "lesson",
  convention: "convention",
  incident: "incident",
  fact: "fact",
  question: "question",
};

/** The sender of every envelope built from history. */
export const GIT_SENDER_ID = "git-history";

// The envelope schema's limits: 32 links, 32 topics of 64 chars, 8000 chars of text.
const MAX_LINKS = 32;
const MAX_TOPICS = 32;
const MAX_TOPIC_CHARS = 64;
const MAX_REF_CHARS = 512;
const MAX_TEXT_CHARS = 8000;
const BODY_CHARS = 400;

export interface Trailer {
  key: string;
  value: string;
}

export interface ParsedMessage {
  subject: string;
  /** The body without its trailer block. */
  body: string;
  trailers: Trailer[];
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)$/;

/**
 * Splits a commit message as git reads it: the subject is the first paragraph, the trailers
 * are the last paragraph when every line of it is `Key: value` (or a continuation line
 * starting with white space).
 */
export function parseCommitMessage(message: string): ParsedMessage {
  const paragraphs = message
    .replace(/\r\n?/g, "\n")
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ""))
    .filter((p) => p.trim().length > 0);
  const subject = collapse(paragraphs[0] ?? "");
  const rest = paragraphs.slice(1);
  const trailers = rest.length > 0 ? parseTrailerBlock(rest[rest.length - 1] as string) : undefined;
  const bodyParts = trailers ? rest.slice(0, -1) : rest;
  return { subject, body: bodyParts.join("\n\n"), trailers: trailers ?? [] };
}

function parseTrailerBlock(paragraph: string): Trailer[] | undefined {
  const trailers: Trailer[] = [];
  for (const line of paragraph.split("\n")) {
    const last = trailers[trailers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const m = TRAILER_LINE.exec(line);
    if (!m) return undefined;
    trailers.push({ key: m[1] as string, value: (m[2] as string).trim() });
  }
  return trailers;
}

/** One note per known trailer; a `Rationale:` joins the Decision before it. */
export function trailerNotes(
  trailers: readonly Trailer[],
): { kind: NoteKind; text: string; rationale?: string }[] {
  const notes: { kind: NoteKind; text: string; rationale?: string }[] = [];
  let decision: { kind: NoteKind; text: string; rationale?: string } | undefined;
  for (const { key, value } of trailers) {
    const k = key.toLowerCase();
    if (value === "") continue;
    if (k === "rationale") {
      if (decision) {
        decision.rationale = decision.rationale ? `${decision.rationale} ${value}` : value;
      }
      continue;
    }
    const kind = TRAILER_KINDS[k];
    if (kind === undefined) continue;
    const note = { kind, text: value };
    notes.push(note);
    decision = kind === "decision" ? note : undefined;
  }
  return notes;
}

/** Top-level folders of the paths, most files first (the first is the engram group). */
export function topFolders(files: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const file of files) {
    const cut = file.indexOf("/");
    if (cut <= 0) continue;
    const folder = truncateChars(file.slice(0, cut).toLowerCase(), MAX_TOPIC_CHARS);
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([folder]) => folder)
    .slice(0, MAX_TOPICS);
}

/**
 * The envelopes of one commit: a `memory_event.v1` (kind `commit`) with `event_id`
 * `git:<sha>`, then a `memory_note.v1` per trailer note, `git:<sha>:<n>` from 1. Ids depend
 * only on the commit, so ingesting a range again is deduplicated. Pure.
 */
export function commitEnvelopes(commit: GitCommitInfo, firstSeq = 0): GitEnvelope[] {
  const { subject, body, trailers } = parseCommitMessage(commit.message);
  const sentAt = new Date(commit.committedAt * 1000).toISOString();
  const topics = topFolders(commit.files);
  const commitLink: Link = { type: "commit", ref: commit.sha };
  const fileLinks: Link[] = commit.files
    .filter((f) => f.length <= MAX_REF_CHARS)
    .slice(0, MAX_LINKS - 1)
    .map((ref) => ({ type: "file", ref }));
  const shortBody = truncateChars(collapse(body.split(/\n[ \t]*\n/)[0] ?? ""), BODY_CHARS);
  const headline = subject === "" ? `commit ${commit.sha.slice(0, 12)}` : subject;
  const text = truncateChars(
    shortBody === "" ? headline : `${headline} — ${shortBody}`,
    MAX_TEXT_CHARS,
  );
  let seq = firstSeq;
  const envelope = (
    type: GitEnvelope["message_type"],
    eventId: string,
    payload: Record<string, unknown>,
  ): GitEnvelope => ({
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: type,
    sent_at: sentAt,
    sender: { role: "operator", id: GIT_SENDER_ID },
    seq: seq++,
    event_id: eventId,
    payload,
  });
  const out = [
    envelope("memory_event.v1", `git:${commit.sha}`, {
      kind: "commit",
      text,
      topics,
      links: [commitLink, ...fileLinks],
    }),
  ];
  trailerNotes(trailers).forEach((note, i) => {
    out.push(
      envelope("memory_note.v1", `git:${commit.sha}:${i + 1}`, {
        kind: note.kind,
        text: truncateChars(note.text, MAX_TEXT_CHARS),
        ...(note.rationale ? { rationale: truncateChars(note.rationale, MAX_TEXT_CHARS) } : {}),
        topics,
        links: [commitLink],
      }),
    );
  });
  return out;
}

/** NDJSON of the envelopes of commits given oldest first, numbered from 0. */
export function gitHistoryNdjson(commits: readonly GitCommitInfo[]): {
  text: string;
  events: number;
} {
  const lines: string[] = [];
  for (const commit of commits) {
    for (const env of commitEnvelopes(commit, lines.length)) lines.push(JSON.stringify(env));
  }
  return { text: lines.length === 0 ? "" : `${lines.join("\n")}\n`, events: lines.length };
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
