import { CATALOG_PATH, ENGRAM_PATH_PATTERN, FOCUS_PATH } from "../model/paths.js";
import { compareText } from "../model/text.js";
import { EVIDENCE_PATH, KNOWLEDGE_DIR } from "./documents.js";
import { VERSION_LOG_PATH } from "./log.js";
import { documentKind } from "./record.js";
import { episodeCount, knowledgeRecords } from "./tally.js";

/** One engram a version added or removed. */
export interface EngramChange {
  engram_id: string;
  path: string;
  topics: string[];
}

/** A state or core key that differs: `old` absent when added, `new` absent when removed. */
export interface KeyChange {
  key: string;
  change: "added" | "removed" | "changed";
  old?: unknown;
  new?: unknown;
}

export interface VersionDiff {
  engrams: { added: EngramChange[]; removed: EngramChange[] };
  /** The facts of the engrams and the knowledge records sessions gave, on each side, as text. */
  facts: { added: string[]; removed: string[] };
  /** The decisions' titles, of the engrams and of the sessions' knowledge, likewise. */
  decisions: { added: string[]; removed: string[] };
  /**
   * What B replaced of what A held (a later decision, a retraction; an engram's `replaces`):
   * `was` is A's item, `now` the item that replaced it. A `now` is not listed as added too.
   */
  changed: { kind: "decision" | "fact"; was: string; now: string }[];
  /** The episodes the sessions' documents hold on each side. */
  episodes: { from: number; to: number };
  state: KeyChange[];
  core: KeyChange[];
  /** Other memory files (the sessions' episode files...) by path. */
  files: { added: string[]; removed: string[]; changed: string[] };
}

type Files = ReadonlyMap<string, string>;

function json(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function entriesOf(files: Files): Map<string, EngramChange> {
  const raw = json(files.get(CATALOG_PATH)) as { entries?: unknown } | undefined;
  const out = new Map<string, EngramChange>();
  for (const e of Array.isArray(raw?.entries) ? raw.entries : []) {
    const entry = e as { engram_id?: unknown; path?: unknown; topics?: unknown };
    if (typeof entry.engram_id !== "string" || typeof entry.path !== "string") continue;
    const topics = Array.isArray(entry.topics) ? entry.topics.map(String) : [];
    out.set(entry.engram_id, { engram_id: entry.engram_id, path: entry.path, topics });
  }
  return out;
}

/**
 * The facts and the decisions (titles) of a version's memory, as text: the engrams' and the
 * knowledge records sessions gave (sealed records have no text).
 */
function claimsOf(
  files: Files,
  entries: Map<string, EngramChange>,
): { facts: Set<string>; decisions: Set<string> } {
  const facts = new Set<string>();
  const decisions = new Set<string>();
  for (const entry of entries.values()) {
    const engram = json(files.get(entry.path)) as { facts?: unknown; decisions?: unknown };
    for (const fact of Array.isArray(engram?.facts) ? engram.facts : []) {
      if (typeof fact === "string") facts.add(fact);
    }
    for (const d of Array.isArray(engram?.decisions) ? engram.decisions : []) {
      const title = (d as { title?: unknown } | null)?.title;
      if (typeof title === "string") decisions.add(title);
    }
  }
  for (const r of knowledgeRecords(files)) {
    if (typeof r.text !== "string") continue;
    (r.kind === "decision" ? decisions : facts).add(r.text);
  }
  return { facts, decisions };
}

/** The `replaces` pairs of the engrams B lists and A does not, whose `was` A held. */
function changesOf(
  to: Files,
  ea: Map<string, EngramChange>,
  eb: Map<string, EngramChange>,
  a: { facts: Set<string>; decisions: Set<string> },
): VersionDiff["changed"] {
  const out: VersionDiff["changed"] = [];
  const seen = new Set<string>();
  for (const entry of [...eb.values()].sort((x, y) => compareText(x.path, y.path))) {
    if (ea.has(entry.engram_id)) continue;
    const engram = json(to.get(entry.path)) as { replaces?: unknown } | undefined;
    for (const r of Array.isArray(engram?.replaces) ? engram.replaces : []) {
      const { was, now } = (r ?? {}) as { was?: unknown; now?: unknown };
      if (typeof was !== "string" || typeof now !== "string") continue;
      const kind = a.decisions.has(was) ? "decision" : a.facts.has(was) ? "fact" : undefined;
      if (kind === undefined || seen.has(`${was}\0${now}`)) continue;
      seen.add(`${was}\0${now}`);
      out.push({ kind, was, now });
    }
  }
  return out;
}

const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`);

function added(to: Set<string>, from: Set<string>): string[] {
  return [...to].filter((f) => !from.has(f)).sort(compareText);
}

/**
 * A state or core document read as `{key, value, ...}`: its `key` (else the file name) and its
 * `value` (else the whole document), so any JSON document under those folders can be compared.
 */
function documentsOf(files: Files, kind: "state" | "core"): Map<string, unknown> {
  const docs = new Map<string, unknown>();
  for (const [path, text] of files) {
    if (documentKind(path) !== kind) continue;
    const doc = json(text);
    const name = (path.split("/").at(-1) as string).replace(/\.json$/, "");
    if (typeof doc === "object" && doc !== null && !Array.isArray(doc)) {
      const d = doc as { key?: unknown; value?: unknown };
      docs.set(typeof d.key === "string" ? d.key : name, "value" in d ? d.value : doc);
    } else {
      docs.set(name, doc);
    }
  }
  return docs;
}

function keyChanges(a: Map<string, unknown>, b: Map<string, unknown>): KeyChange[] {
  const out: KeyChange[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort(compareText)) {
    const has = [a.has(key), b.has(key)];
    if (has[0] && !has[1]) out.push({ key, change: "removed", old: a.get(key) });
    else if (!has[0] && has[1]) out.push({ key, change: "added", new: b.get(key) });
    else if (JSON.stringify(a.get(key)) !== JSON.stringify(b.get(key))) {
      out.push({ key, change: "changed", old: a.get(key), new: b.get(key) });
    }
  }
  return out;
}

function isOther(path: string): boolean {
  return (
    path !== CATALOG_PATH &&
    path !== VERSION_LOG_PATH &&
    path !== FOCUS_PATH &&
    !ENGRAM_PATH_PATTERN.test(path) &&
    documentKind(path) === undefined &&
    // The evidence file holds no facts of its own: its changes show as a changed file.
    !(inFolder(path, KNOWLEDGE_DIR) && path !== EVIDENCE_PATH) &&
    !path.endsWith("/.gitkeep")
  );
}

/** What changed from the files of one version to those of another. */
export function diffVersions(from: Files, to: Files): VersionDiff {
  const [ea, eb] = [entriesOf(from), entriesOf(to)];
  const byPath = (x: EngramChange, y: EngramChange) => compareText(x.path, y.path);
  const [a, b] = [claimsOf(from, ea), claimsOf(to, eb)];
  const others = (files: Files) => [...files.keys()].filter(isOther);
  const [oa, ob] = [new Set(others(from)), new Set(others(to))];
  const changed = changesOf(to, ea, eb, a);
  const nows = new Set(changed.map((c) => c.now));
  const fresh = (list: string[]) => list.filter((t) => !nows.has(t));
  return {
    engrams: {
      added: [...eb.values()].filter((e) => !ea.has(e.engram_id)).sort(byPath),
      removed: [...ea.values()].filter((e) => !eb.has(e.engram_id)).sort(byPath),
    },
    facts: { added: fresh(added(b.facts, a.facts)), removed: added(a.facts, b.facts) },
    decisions: {
      added: fresh(added(b.decisions, a.decisions)),
      removed: added(a.decisions, b.decisions),
    },
    changed,
    episodes: { from: episodeCount(from), to: episodeCount(to) },
    state: keyChanges(documentsOf(from, "state"), documentsOf(to, "state")),
    core: keyChanges(documentsOf(from, "core"), documentsOf(to, "core")),
    files: {
      added: [...ob].filter((p) => !oa.has(p)).sort(compareText),
      removed: [...oa].filter((p) => !ob.has(p)).sort(compareText),
      changed: [...ob].filter((p) => oa.has(p) && from.get(p) !== to.get(p)).sort(compareText),
    },
  };
}
