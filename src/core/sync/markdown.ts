import type { Privacy } from "../../schema/common.js";
import { type Redactor, redactValue } from "../ingest/redact.js";
import { sha256Hex } from "../model/canonical.js";
import type { SyncCandidate, SyncItem, SyncValue } from "./item.js";

/**
 * Markdown memory files (learning notes, research notes, an agent's memory folder) as sync
 * items. Pure: the adapter reads the files; the same bytes and settings give the same item,
 * so a file whose SHA-256 did not change yields the same item hash and is not sent again.
 */

/** A file's frontmatter as the adapter parsed it (YAML), and its body. */
export interface Frontmatter {
  data: Record<string, unknown>;
  body: string;
}

export interface MarkdownFolder {
  /** As configured: also the folder's identity in local ids. */
  path: string;
  kind: "learning" | "research";
  group?: string | undefined;
  privacy: Privacy;
}

export interface MarkdownFile {
  folder: MarkdownFolder;
  /** Relative to the folder, `/`-separated. */
  relative: string;
  frontmatter: Frontmatter;
  /** SHA-256 of the file's bytes. */
  sha256: string;
}

export interface MarkdownItem {
  candidate: SyncCandidate;
  redactions: number;
}

const PREFIX = "md_";

/** The folder part of a markdown item's local id: which folder a mapped key belongs to. */
export function folderTag(folderPath: string): string {
  return sha256Hex(`folder\0${folderPath}`).slice(0, 8);
}

/** Stable per file: the same folder and relative path keep the same remote episodes. */
export function markdownLocalId(folderPath: string, relative: string): string {
  return `${PREFIX}${folderTag(folderPath)}_${sha256Hex(`file\0${relative}`).slice(0, 16)}`;
}

/** The folder tag of a markdown local id, or null when the id is not a markdown file's. */
export function folderTagOf(localId: string): string | null {
  const m = /^md_([0-9a-f]{8})_[0-9a-f]{16}$/.exec(localId);
  return m === null ? null : (m[1] as string);
}

const VERDICT = { sync: true, priority: 1 as const, reasons: ["markdown file"] };
/** No date in the file: a fixed instant, so the item (and its hash) stays the same. */
const UNKNOWN_TIME = "1970-01-01T00:00:00.000Z";
const PRIVACIES: readonly string[] = ["public", "private", "sensitive"];

/**
 * The item of one markdown file: title `capture_type: title` (frontmatter `title`, else the
 * first heading, else the file name), the body as content, the frontmatter as fields and as
 * provenance. Every string is redacted before it becomes part of the item.
 */
export function markdownItem(
  file: MarkdownFile,
  redactor: Redactor,
  project: string,
): MarkdownItem {
  const fm = file.frontmatter;
  const red = redactValue(fm.data, redactor);
  const data = red.value as Record<string, unknown>;
  const body = redactor.redact(fm.body.trim());
  const scalar = (key: string): string | null => {
    const v = data[key];
    if (typeof v === "string" && v.trim() !== "") return v.trim();
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    if (v instanceof Date && !Number.isNaN(v.getTime())) return v.toISOString();
    return null;
  };
  const heading = /^#{1,6}[ \t]+(.+)$/m.exec(body.text)?.[1]?.trim();
  const fileName =
    file.relative
      .split("/")
      .at(-1)
      ?.replace(/\.[^.]+$/, "") ?? file.relative;
  const named = scalar("title") ?? heading ?? fileName;
  const captureType = scalar("capture_type");
  const title = redactor.redact(captureType !== null ? `${captureType}: ${named}` : named);
  const stated = scalar("privacy");
  const privacy = (
    stated !== null && PRIVACIES.includes(stated) ? stated : file.folder.privacy
  ) as Privacy;
  const timestamp = isoTime(data.timestamp ?? data.date ?? data.created);
  const tags = tagList(data.tags);
  const localId = markdownLocalId(file.folder.path, file.relative);
  const rating = scalar("rating");
  const source = scalar("source");
  const provenance = [
    ...(source !== null ? [`Source: ${source}`] : []),
    ...(rating !== null ? [`Rating: ${rating}`] : []),
    ...(captureType !== null ? [`Type: ${captureType}`] : []),
    ...(tags.length > 0 ? [`Tags: ${tags.join(", ")}`] : []),
    `File: ${file.folder.path}/${file.relative}`,
    ...extraKeys(data),
  ].join(" | ");
  const fields: Record<string, SyncValue> = {
    type: "markdown",
    kind: file.folder.kind,
    capture_type: captureType,
    rating: rating === null ? null : Number.isFinite(Number(rating)) ? Number(rating) : rating,
    source,
    tags,
    timestamp,
    project,
    file: `${file.folder.path}/${file.relative}`,
    file_sha256: file.sha256,
    frontmatter: JSON.stringify(data),
    source_description: provenance,
    local_id: localId,
    privacy,
    shareable: privacy === "public",
    ...(file.folder.group !== undefined ? { group_id: file.folder.group } : {}),
  };
  const item: SyncItem = {
    type: "episode",
    local_id: localId,
    title: title.text,
    privacy,
    occurred_at: timestamp ?? UNKNOWN_TIME,
    fields,
    content: body.text === "" ? title.text : body.text,
  };
  return {
    candidate: { item, verdict: VERDICT },
    redactions: red.count + body.count + title.count,
  };
}

/**
 * The item that archives a removed file remotely: same key, so the earlier episodes are found
 * through the id mapping; the same for every removed file, so it is sent once.
 */
export function removedMarkdownItem(localId: string): SyncCandidate {
  return {
    item: {
      type: "episode",
      local_id: localId,
      title: `Removed markdown file ${localId}`,
      privacy: "public",
      occurred_at: UNKNOWN_TIME,
      fields: { type: "markdown", status: "removed", local_id: localId },
      content: "",
    },
    verdict: { sync: true, priority: 1, reasons: ["markdown file removed"] },
  };
}

/** An item that takes its key's copy out of the store: a removed file, a replaced insight. */
export function isRemovedItem(fields: Readonly<Record<string, SyncValue>>): boolean {
  return (fields.type === "markdown" || fields.type === "replaced") && fields.status === "removed";
}

/** The generated-file marker engram writes into MEMORY.md and its other views. */
const ENGRAM_MARKER = /<!-- engram: generated\b/;

/**
 * Anti-loop: what engram itself produced is never read back in (its MEMORY.md, anything with
 * its generated marker, and output whose frontmatter names engram as its source).
 */
export function isEngramOutput(text: string, data: Readonly<Record<string, unknown>>): boolean {
  if (ENGRAM_MARKER.test(text.slice(0, 4096))) return true;
  const source = data.source ?? data.generated_by;
  return typeof source === "string" && /^engram\b/i.test(source.trim());
}

function isoTime(value: unknown): string | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value !== "string" && typeof value !== "number") return null;
  const ms = typeof value === "number" ? value * (value < 1e12 ? 1000 : 1) : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

function tagList(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  return list
    .filter((t): t is string | number => typeof t === "string" || typeof t === "number")
    .map((t) => String(t).trim())
    .filter((t) => t !== "")
    .slice(0, 20);
}

const KNOWN = new Set([
  "title",
  "capture_type",
  "rating",
  "source",
  "tags",
  "timestamp",
  "date",
  "created",
  "privacy",
]);

/** "Anything else" in the frontmatter, as `key: value` in the provenance, bounded. */
function extraKeys(data: Record<string, unknown>): string[] {
  return Object.keys(data)
    .filter((k) => !KNOWN.has(k))
    .sort()
    .slice(0, 12)
    .map((k) => {
      const v = data[k];
      const text = typeof v === "string" ? v : JSON.stringify(v);
      return `${k}: ${(text ?? "").slice(0, 120)}`;
    });
}
