import type { CatalogEntry, Engram } from "../../schema/engram.js";
import { replacementsOf } from "../graph/supersession.js";
import { engramPath } from "../model/engram.js";
import { isRecallNote, isRecord, isStrings } from "./note-check.js";
import { carriedKeys, ownNotesOf, type RecallNote, supersede } from "./notes.js";

/**
 * What recall keeps of one engram between catalogs, so that a new catalog re-reads only the
 * engrams whose hash changed: its own notes (tokens counted), the text each note's claim is
 * keyed by, and what it says of other engrams (what it carries forward, what it replaces).
 * Supersession across engrams is applied when the notes are gathered (`memoryNotesOf`), so
 * the same engrams give the same notes whichever of them were read again.
 */
export interface EngramNotes {
  engram_id: string;
  hash: string;
  scope: "st" | "lt";
  version: string;
  /** LT only: the engrams it names in `supersedes`, and the claim keys it carries. */
  supersedes: string[];
  carried: string[];
  replaces: { was: string; now: string }[];
  notes: RecallNote[];
  claims: (string | null)[];
}

/** An engram's part of recall; `count` gives each note its tokens. */
export function engramNotesOf(
  engram: Engram,
  count: (notes: readonly RecallNote[]) => RecallNote[],
): EngramNotes {
  const own = ownNotesOf(engram);
  const carries = engram.scope === "lt" && (engram.supersedes?.length ?? 0) > 0;
  return {
    engram_id: engram.engram_id,
    hash: engram.hash,
    scope: engram.scope,
    version: engram.version,
    supersedes: carries ? [...(engram.supersedes ?? [])] : [],
    carried: carries ? [...carriedKeys(engram)] : [],
    replaces: (engram.replaces ?? []).map(({ was, now }) => ({ was, now })),
    notes: count(own.notes),
    claims: own.claims,
  };
}

/**
 * The notes of the listed engrams. An ST note is superseded only by an LT engram that names
 * its engram in `supersedes` and carries that very note: what promotion left behind stays.
 */
export function memoryNotesOf(list: readonly EngramNotes[]): RecallNote[] {
  const carriers = new Map<string, { engram_id: string; keys: Set<string> }[]>();
  for (const e of list) {
    if (e.supersedes.length === 0) continue;
    const carried = { engram_id: e.engram_id, keys: new Set(e.carried) };
    for (const id of e.supersedes) {
      const at = carriers.get(id);
      if (at) at.push(carried);
      else carriers.set(id, [carried]);
    }
  }
  const replacements = replacementsOf(list);
  return list.flatMap((e) => supersede(e, e, carriers.get(e.engram_id), replacements));
}

/**
 * A cached engram's part, checked as the input it is: `undefined` unless it is the part of
 * the catalog's entry (same id, hash, tier and batch) and every field has its shape, each
 * note naming that engram and its file. A stale, damaged or planted part is read again
 * from the engram, never trusted.
 */
export function checkedEngramNotes(data: unknown, entry: CatalogEntry): EngramNotes | undefined {
  if (!isRecord(data)) return undefined;
  const { engram_id, hash, scope, version, supersedes, carried, replaces, notes, claims } = data;
  if (
    engram_id !== entry.engram_id ||
    hash !== entry.hash ||
    scope !== entry.scope ||
    version !== entry.version ||
    !isStrings(supersedes) ||
    !isStrings(carried) ||
    !Array.isArray(replaces) ||
    !replaces.every((r) => isRecord(r) && typeof r.was === "string" && typeof r.now === "string") ||
    !Array.isArray(notes) ||
    !Array.isArray(claims) ||
    claims.length !== notes.length ||
    !claims.every((c) => c === null || typeof c === "string")
  ) {
    return undefined;
  }
  const path = engramPath(entry.scope, entry.version, entry.engram_id);
  const checked: RecallNote[] = [];
  for (const note of notes) {
    // An engram's own note: none is superseded yet, and each names this engram and file.
    if (!isRecallNote(note) || note.superseded_by !== undefined || note.commit !== undefined)
      return undefined;
    if (note.engram_id !== entry.engram_id || note.scope !== entry.scope) return undefined;
    if (note.path !== path || !note.id.startsWith(`${entry.engram_id}#`)) return undefined;
    checked.push(note);
  }
  return {
    engram_id: entry.engram_id,
    hash: entry.hash,
    scope: entry.scope,
    version: entry.version,
    supersedes: [...supersedes],
    carried: [...carried],
    replaces: (replaces as { was: string; now: string }[]).map(({ was, now }) => ({ was, now })),
    notes: checked,
    claims: [...(claims as (string | null)[])],
  };
}
