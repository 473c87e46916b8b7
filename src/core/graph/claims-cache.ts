import type { CatalogEntry } from "../../schema/engram.js";
import { sha256Hex } from "../model/canonical.js";
import type { Learning, LearningType } from "./learnings.js";

/** What a session's duplicate of a learning needs of it (`knowledgeFromLearnings`). */
export type LearningClaim = Pick<Learning, "id" | "type" | "text" | "rationale" | "evidence">;

const FORMAT = "engram-claims";
const VERSION = 1;
const TYPES: ReadonlySet<string> = new Set<LearningType>([
  "decision",
  "insight",
  "pattern",
  "convention",
  "self_knowledge",
]);
const LEARNING_ID = /^l_[0-9a-f]{16}$/;

/**
 * The key of the claims of a catalog's engrams: each entry's id, path and content hash. Not
 * the catalog hash: a consolidated session changes the catalog (its documents and version)
 * but no engram, so the claims stay valid from one session's cycle to the next.
 */
export function claimsKey(entries: readonly CatalogEntry[]): string {
  const lines = entries.map((e) => `${e.engram_id} ${e.path} ${e.hash}`);
  return sha256Hex(`${FORMAT} ${VERSION}\n${lines.join("\n")}`);
}

/**
 * The cache file: a header line (key, digest of the rest, count), then the claims as
 * `[id, type, text, rationale, evidence]` rows sorted by id. The digest lets a reader tell a
 * damaged file that still parses without re-serializing what it read.
 */
export function serializeClaims(key: string, claims: readonly LearningClaim[]): string {
  const body = JSON.stringify(claims.map((c) => [c.id, c.type, c.text, c.rationale, c.evidence]));
  const header = {
    format: FORMAT,
    version: VERSION,
    key,
    digest: sha256Hex(body),
    count: claims.length,
  };
  return `${JSON.stringify(header)}\n${body}\n`;
}

/**
 * The claims a cache file holds when it was written for `key` and is whole and well formed;
 * undefined otherwise (the caller derives them again). The file is treated as hostile: every
 * row is checked, ids strictly ascending, so no shape it might take reaches the merge.
 */
export function parseClaims(text: string, key: string): LearningClaim[] | undefined {
  const newline = text.indexOf("\n");
  if (newline < 0 || !text.endsWith("\n")) return undefined;
  const header = parseJson(text.slice(0, newline));
  if (!isRecord(header) || header.format !== FORMAT || header.version !== VERSION) return undefined;
  if (header.key !== key || typeof header.digest !== "string") return undefined;
  const body = text.slice(newline + 1, -1);
  if (sha256Hex(body) !== header.digest) return undefined;
  const rows = parseJson(body);
  if (!Array.isArray(rows) || rows.length !== header.count) return undefined;
  const claims: LearningClaim[] = [];
  let previous = "";
  for (const row of rows) {
    const claim = claimOf(row);
    if (claim === undefined || claim.id <= previous) return undefined;
    previous = claim.id;
    claims.push(claim);
  }
  return claims;
}

function claimOf(row: unknown): LearningClaim | undefined {
  if (!Array.isArray(row) || row.length !== 5) return undefined;
  const [id, type, text, rationale, evidence] = row as unknown[];
  if (typeof id !== "string" || !LEARNING_ID.test(id)) return undefined;
  if (typeof type !== "string" || !TYPES.has(type) || typeof text !== "string") return undefined;
  if (rationale !== null && typeof rationale !== "string") return undefined;
  if (typeof evidence !== "number" || !Number.isSafeInteger(evidence) || evidence < 1) {
    return undefined;
  }
  return { id, type: type as LearningType, text, rationale, evidence };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
