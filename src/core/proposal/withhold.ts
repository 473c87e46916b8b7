import type { Catalog, CatalogEntry, Engram, EngramBody } from "../../schema/engram.js";
import { holdsSecret, maskSecrets } from "../checks/review-flags.js";
import { type FocusSettings, generatedFocus, nowLinesOf } from "../checks/verify-focus.js";
import { engramJson, focusSourcesOf } from "../checks/verify-focus-sources.js";
import { learningId } from "../graph/learnings.js";
import {
  catalogEntryFor,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH } from "../model/paths.js";
import { documentEntry } from "../versions/documents.js";
import { VERSION_LOG_PATH } from "../versions/log.js";
import { lastRecord, logWith, recordFor } from "../versions/record.js";
import { knowledgeRecords } from "../versions/tally.js";
import { factItem, type KnowledgeItem, type KnowledgeKind } from "./knowledge.js";
import type { MemoryFiles } from "./replay.js";
import { type ItemVerdict, keptKnowledgeFiles } from "./withhold-records.js";

/** Why an item is kept off the pushed branch. */
export type WithheldReason = "held" | "rejected";

/** One knowledge item the pushed branch leaves out, as the pull-request body names it. */
export interface WithheldItem {
  id: string;
  reason: WithheldReason;
  kind: KnowledgeKind;
  /** The item's text with every secret-like run hidden (`maskSecrets`). */
  text: string;
  /** The staged engram it was taken out of, or the knowledge file for a session's record. */
  engram_id: string;
}

/** What the reviewer decided about single items (`director reject`, `director release`). */
export interface ItemDecisions {
  /** Items never to be proposed. */
  rejected: ReadonlySet<string>;
  /** Held items a reviewer let through. */
  released: ReadonlySet<string>;
}

export interface WithholdInput {
  /** The proposal as staged: every item, held ones included. */
  files: MemoryFiles;
  /** Engrams main holds: merged memory is never rewritten here. */
  mainIds: ReadonlySet<string>;
  /** Ids of the knowledge records main's session documents hold: never rewritten either. */
  mainRecords?: ReadonlySet<string>;
  decisions: ItemDecisions;
  /**
   * Engrams rejected by a closed pull request: the branch showed the rewritten engram, so
   * a rewrite that comes out as one of these is dropped too.
   */
  rejectedEngrams?: ReadonlySet<string>;
  memory: FocusSettings;
}

/**
 * The proposal as pushed: the staged memory files without the items a reviewer must see
 * first (secret-like residue: held until released) or rejected one by one, whether an engram
 * or a session's knowledge file (`memory/knowledge/<kind>.json`) holds them. An engram that
 * loses an item is sealed again (new id and path), one left with nothing is dropped, a
 * long-term engram's `supersedes` follows the new ids, and the catalog, its version-log line
 * and MEMORY.md are regenerated, so the branch verifies and holds no byte of what was taken
 * out. Pure; the same input gives the same files.
 */
export function withholdItems(input: WithholdInput): {
  files: MemoryFiles;
  withheld: WithheldItem[];
} {
  const { files, mainIds, decisions } = input;
  const refused = input.rejectedEngrams ?? new Set<string>();
  const withheld: WithheldItem[] = [];
  // Secret-like items a reviewer released, by engram: the engram records them for the guard.
  const releasedIn = new Map<string, Set<string>>();
  const verdict: ItemVerdict = (item, from) => {
    const id = learningId(item.text);
    const full: KnowledgeItem = { id, ...item, engram_id: from.engram_id, scope: from.scope };
    const secret = !decisions.rejected.has(id) && holdsSecret(full);
    const reason: WithheldReason | undefined = decisions.rejected.has(id)
      ? "rejected"
      : secret && !decisions.released.has(id)
        ? "held"
        : undefined;
    if (secret && reason === undefined) {
      const ids = releasedIn.get(from.engram_id) ?? new Set<string>();
      releasedIn.set(from.engram_id, ids.add(id));
    }
    if (reason !== undefined) {
      withheld.push({
        id,
        reason,
        kind: item.kind,
        text: maskSecrets(item.text),
        engram_id: from.engram_id,
      });
    }
    return reason === undefined;
  };
  const rewritten = new Map<string, Engram | null>();
  const proposed = files.catalog.entries.filter((e) => !mainIds.has(e.engram_id));
  for (const entry of proposed) {
    const text = files.files.get(entry.path);
    if (text === undefined) continue;
    const engram = JSON.parse(text) as Engram;
    const kept = keptBody(engram, verdict);
    const released = [
      ...new Set([...(engram.released ?? []), ...(releasedIn.get(engram.engram_id) ?? [])]),
    ].sort();
    const sameReleased = released.length === (engram.released?.length ?? 0);
    if (kept === undefined && sameReleased) continue;
    const { engram_id: _id, hash: _hash, ...whole } = engram;
    const body: EngramBody = kept ?? whole;
    if (released.length > 0) body.released = released;
    const sealed = isEmpty(body) ? null : sealEngram(body);
    rewritten.set(entry.engram_id, sealed && refused.has(sealed.engram_id) ? null : sealed);
  }
  const documents = keptKnowledgeFiles(
    files.catalog,
    files.files,
    input.mainRecords ?? new Set(),
    verdict,
    (path) => releasedIn.get(path),
  );
  if (rewritten.size === 0 && documents.size === 0) return { files, withheld };
  // Long-term engrams name the short-term ones they carry forward: follow the new ids.
  const renamed = new Map<string, string>();
  for (const [from, to] of rewritten) if (to !== null) renamed.set(from, to.engram_id);
  for (const entry of proposed) {
    const engram = rewritten.get(entry.engram_id) ?? parsed(files, entry);
    if (engram === null || engram === undefined || engram.supersedes === undefined) continue;
    if (!engram.supersedes.some((id) => rewritten.has(id))) continue;
    const { engram_id: _id, hash: _hash, ...body } = engram;
    const supersedes = engram.supersedes
      .filter((id) => rewritten.get(id) !== null)
      .map((id) => renamed.get(id) ?? id);
    rewritten.set(entry.engram_id, sealEngram({ ...body, supersedes } as EngramBody));
  }
  const out = new Map(files.files);
  const entries: CatalogEntry[] = [];
  for (const entry of files.catalog.entries) {
    const next = rewritten.get(entry.engram_id);
    if (next === undefined) {
      entries.push(entry);
      continue;
    }
    out.delete(entry.path);
    if (next === null) continue;
    const text = serializeEngram(next);
    const fresh = catalogEntryFor(next, Buffer.byteLength(text, "utf8"));
    out.set(fresh.path, text);
    entries.push(fresh);
  }
  for (const [path, text] of documents) {
    if (text === null) out.delete(path);
    else out.set(path, text);
  }
  const catalog = sealCatalog(
    files.catalog.catalog_version,
    files.catalog.created_at,
    entries,
    documentsAfter(files.catalog, documents),
  );
  out.set(CATALOG_PATH, serializeCatalog(catalog));
  const log = out.get(VERSION_LOG_PATH);
  const last = lastRecord(log);
  if (last !== undefined && last.version === catalog.catalog_version) {
    const counts = {
      ...last.counts,
      engrams: catalog.entries.length,
      ...(documents.size > 0 ? { facts: knowledgeRecords(out).length } : {}),
    };
    out.set(VERSION_LOG_PATH, logWith(log, recordFor(catalog, last.made_by, counts)));
  }
  const focus = regeneratedFocus(catalog, out, input.memory);
  if (focus !== undefined) out.set(FOCUS_PATH, focus);
  return { files: { catalog, files: out }, withheld };
}

/** The catalog's document list with the knowledge files `changed` rewrote (null: dropped). */
function documentsAfter(
  catalog: Catalog,
  changed: ReadonlyMap<string, string | null>,
): Catalog["documents"] {
  if (changed.size === 0 || catalog.documents === undefined) return catalog.documents;
  return catalog.documents.flatMap((d) => {
    const text = changed.get(d.path);
    if (text === undefined) return [d];
    return text === null ? [] : [documentEntry(d.path, d.kind, text)];
  });
}

/** The engram's body without the items `keep` refuses; undefined when it keeps them all. */
function keptBody(engram: Engram, keep: ItemVerdict): EngramBody | undefined {
  const { engram_id: _id, hash: _hash, ...body } = engram;
  const decisions = engram.decisions.filter((d) =>
    keep({ kind: "decision", text: d.title, rationale: d.rationale }, engram),
  );
  const facts = engram.facts.filter((f) => keep(factItem(f), engram));
  // A tentative fact the engram's facts hold goes with that fact (one item, one verdict).
  const [stated, kept] = [new Set(engram.facts), new Set(facts)];
  const tentative = engram.tentative?.filter((t) =>
    stated.has(t) ? kept.has(t) : keep({ kind: "tentative", text: t }, engram),
  );
  const episodes = engram.episodes?.filter(
    (ep) => ep.text === undefined || keep({ kind: "episode", text: ep.text }, engram),
  );
  const same =
    decisions.length === engram.decisions.length &&
    facts.length === engram.facts.length &&
    tentative?.length === engram.tentative?.length &&
    episodes?.length === engram.episodes?.length;
  if (same) return undefined;
  const next: EngramBody = { ...body, decisions, facts };
  if (tentative !== undefined) {
    if (tentative.length > 0) next.tentative = tentative;
    else delete next.tentative;
  }
  if (episodes !== undefined) {
    if (episodes.length > 0) next.episodes = episodes;
    else delete next.episodes;
  }
  return next;
}

/** Nothing left to read: no claim, episode, sealed field, telemetry or link. */
function isEmpty(body: EngramBody): boolean {
  return (
    body.facts.length === 0 &&
    body.decisions.length === 0 &&
    (body.tentative?.length ?? 0) === 0 &&
    (body.episodes?.length ?? 0) === 0 &&
    (body.sealed?.length ?? 0) === 0 &&
    body.telemetry === undefined &&
    body.links.length === 0
  );
}

function parsed(files: MemoryFiles, entry: CatalogEntry): Engram | undefined {
  const text = files.files.get(entry.path);
  return text === undefined ? undefined : (JSON.parse(text) as Engram);
}

/** MEMORY.md for the new catalog, its "Now" lines kept; undefined when it cannot be rendered. */
function regeneratedFocus(
  catalog: Catalog,
  files: ReadonlyMap<string, string>,
  memory: FocusSettings,
): string | undefined {
  const sources = focusSourcesOf({
    catalog,
    text: (path) => files.get(path),
    documents: files,
    memory,
    readEngram: engramJson,
  });
  if (sources === undefined || "code" in sources) return undefined;
  const old = files.get(FOCUS_PATH);
  const now = old === undefined ? undefined : nowLinesOf(old);
  return generatedFocus(sources, now !== undefined && now.length > 0 ? now : undefined);
}
