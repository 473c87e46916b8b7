import type { Engram } from "../../schema/engram.js";
import { MAX_ENGRAM_ENTITIES } from "../../schema/formats.js";
import type { Registry, RegistryArea } from "../../schema/registry.js";
import { compileGlob } from "../glob.js";
import { entityId, isDocumentEntityId } from "../model/fields.js";
import { compareText } from "../model/text.js";
import { type Learning, normalizeClaim } from "./learnings.js";

export type EntityKind =
  | "person"
  | "project"
  | "component"
  | "file"
  | "issue"
  | "pr"
  | "commit"
  | "url";

/** `kind:key`, e.g. `file:src/core/plan.ts`, `issue:12`, `person:ada`. */
export type EntityId = string;

export interface LinkedLearning extends Learning {
  entities: EntityId[];
  /** Mentions that name nothing known (an @handle outside the registry): logged, not linked. */
  unlinked: string[];
}

const ISSUE = /(?:^|[\s(,;])#(\d{1,7})\b/g;
const PR = /\b(?:PR|pull request)\s*#?(\d{1,7})\b/gi;
const SHA = /\b[0-9a-f]{7,40}\b/g;
const URL_RE = /\bhttps?:\/\/[^\s<>()"'`]+/g;
// A repository path: folders and a file name with an extension, no scheme.
const PATH = /(?:^|[\s(`'"])((?:[\w.-]+\/)+[\w.-]+\.[A-Za-z0-9]{1,8})\b/g;
const HANDLE = /(?:^|\s)@([A-Za-z0-9][A-Za-z0-9-]{0,38})\b/g;

function words(text: string): string {
  // Sentence-ending dots go, so "Ada." is a mention of ada; dots inside names stay.
  return ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}._-]+/gu, " ")
    .replace(/\.+( |$)/g, "$1")} `;
}

function mentions(haystack: string, name: string): boolean {
  return haystack.includes(` ${name.toLowerCase()} `);
}

/** Text to link: a learning, an engram, a state or core document. */
export interface LinkableText {
  texts: readonly string[];
  links: readonly { type: string; ref: string }[];
  senders: readonly string[];
}

/** The kinds a memory file carries (`url:` stays in its links), those kept first under the cap first. */
const DOCUMENT_KINDS = ["person", "project", "component", "issue", "pr", "file", "commit"];
const KIND_RANK = new Map(DOCUMENT_KINDS.map((kind, i) => [kind, i]));

/**
 * The entity ids a memory file carries: the document kinds only, at most
 * `MAX_ENGRAM_ENTITIES` (people, projects and components kept first, then issues and PRs,
 * files, commits), sorted.
 */
export function capEntities(ids: Iterable<EntityId>): EntityId[] {
  // Only ids a reader accepts: one a bug or an old engram let through is left out, never written.
  const kept = [...ids].filter(
    (id) => KIND_RANK.has(id.slice(0, id.indexOf(":"))) && isDocumentEntityId(id),
  );
  if (kept.length > MAX_ENGRAM_ENTITIES) {
    const rank = (id: EntityId) => KIND_RANK.get(id.slice(0, id.indexOf(":"))) as number;
    kept.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
    kept.length = MAX_ENGRAM_ENTITIES;
  }
  return kept.sort();
}

/** The registry compiled once for many learnings. */
export interface EntityMatcher {
  link(learning: Learning): LinkedLearning;
  /**
   * The entity ids a memory file carries (an engram, a state or core document), as
   * `capEntities` keeps them; with the mentions that named nothing known, to be logged
   * (never invented into entities).
   */
  linkDocument(doc: LinkableText): { entities: EntityId[]; unlinked: string[] };
  /**
   * The claim a text makes with its mentions replaced by the entities they name, so that
   * "Ada fixed #12" and "Ada Lovelace fixed #12" are one claim.
   */
  claimKey(text: string): string;
  /** The projects and components whose paths cover `file`. */
  areasOf(file: string): EntityId[];
}

export function entityMatcher(registry: Registry): EntityMatcher {
  const areas = [
    ...registry.projects.map((a) => ({ kind: "project" as const, area: a })),
    ...registry.components.map((a) => ({ kind: "component" as const, area: a })),
  ].map(({ kind, area }) => ({ kind, area, globs: area.paths.map((glob) => compileGlob(glob)) }));
  const people = registry.people.map((p) => ({
    id: p.id,
    names: [p.name, p.id, ...p.aliases].map((n) => n.toLowerCase()),
    emails: p.emails.map((e) => e.toLowerCase()),
  }));
  const areaNames = (a: RegistryArea) => [a.name, a.id, ...a.aliases];
  const areasOf = (file: string): EntityId[] =>
    areas.filter((a) => a.globs.some((g) => g.test(file))).map((a) => `${a.kind}:${a.area.id}`);

  const linkText = (doc: LinkableText): { entities: EntityId[]; unlinked: string[] } => {
    const found = new Set<EntityId>();
    const unlinked = new Set<string>();
    const text = doc.texts.join("\n");
    // A link's ref is input: `entityId` makes it one line, or names nothing when it cannot.
    const add = (kind: EntityKind, key: string) => {
      const id = entityId(kind, key);
      if (id !== undefined) found.add(id);
    };
    for (const link of doc.links) {
      if (link.type === "file") add("file", link.ref);
      else if (link.type === "issue") add("issue", link.ref.replace(/^#/, ""));
      else if (link.type === "pr") add("pr", link.ref.replace(/^#/, ""));
      else if (link.type === "commit") add("commit", link.ref.trim().slice(0, 12));
      else if (link.type === "url") add("url", link.ref);
    }
    for (const m of text.matchAll(PR)) found.add(`pr:${m[1]}`);
    for (const m of text.matchAll(ISSUE)) {
      if (!found.has(`pr:${m[1]}`)) found.add(`issue:${m[1]}`);
    }
    for (const m of text.matchAll(URL_RE)) add("url", m[0].replace(/[.,;:]+$/, ""));
    for (const m of text.matchAll(PATH)) {
      if (!/^https?:/.test(m[1] as string)) found.add(`file:${m[1]}`);
    }
    for (const m of text.matchAll(SHA)) {
      // A sha has digits and letters; a plain number or word is not one.
      if (/\d/.test(m[0]) && /[a-f]/.test(m[0])) found.add(`commit:${m[0].slice(0, 12)}`);
    }
    const hay = words(text);
    const lower = text.toLowerCase();
    const senders = doc.senders.map((s) => s.toLowerCase());
    for (const p of people) {
      if (
        p.names.some((n) => mentions(hay, n) || senders.includes(n)) ||
        p.emails.some((e) => lower.includes(e))
      ) {
        found.add(`person:${p.id}`);
      }
    }
    for (const m of text.matchAll(HANDLE)) {
      const handle = (m[1] as string).toLowerCase();
      if (!people.some((p) => p.names.includes(handle))) unlinked.add(`@${m[1]}`);
    }
    for (const a of areas) {
      if (areaNames(a.area).some((n) => mentions(hay, n))) found.add(`${a.kind}:${a.area.id}`);
    }
    for (const id of [...found]) {
      if (id.startsWith("file:")) for (const area of areasOf(id.slice(5))) found.add(area);
    }
    return { entities: [...found].sort(), unlinked: [...unlinked].sort() };
  };
  // Registry names as `words` spells them, longest first so "ada lovelace" wins over "ada";
  // each maps to its entity id.
  const namesLongestFirst: [string, EntityId][] = [
    ...people.flatMap((p) => p.names.map((n): [string, EntityId] => [words(n), `person:${p.id}`])),
    ...areas.flatMap((a) =>
      areaNames(a.area).map((n): [string, EntityId] => [words(n), `${a.kind}:${a.area.id}`]),
    ),
  ]
    .filter(([name]) => name.trim().length > 0)
    .sort((a, b) => b[0].length - a[0].length || compareText(a[0], b[0]));

  return {
    areasOf,
    link(learning) {
      const linked = linkText({
        texts: [learning.text, learning.rationale ?? ""],
        links: learning.links,
        senders: learning.senders,
      });
      return { ...learning, ...linked };
    },
    linkDocument(doc) {
      const linked = linkText(doc);
      return { entities: capEntities(linked.entities), unlinked: linked.unlinked };
    },
    claimKey(text) {
      const issues = normalizeClaim(text).replace(ISSUE, (m, n: string) => {
        return `${m.slice(0, m.indexOf("#"))} issue ${n}`;
      });
      let key = words(issues);
      for (const [name, id] of namesLongestFirst) {
        if (key.includes(name)) key = key.split(name).join(` ${id} `);
      }
      return key.replace(/\s+/g, " ").trim();
    },
  };
}

/**
 * A learning's entities: those its engrams carry (`entities`, written at compaction) when
 * every engram stating it has them, with its `url` links; derived from its text, links and
 * senders otherwise (engrams written before the field existed, an item with its own
 * provenance).
 */
export function linkLearning(
  learning: Learning,
  engrams: ReadonlyMap<string, Engram>,
  matcher: EntityMatcher,
): LinkedLearning {
  const carried: string[][] = [];
  for (const id of learning.engrams) {
    const engram = engrams.get(id);
    const entities = engram?.entities;
    // An item with its own provenance (`said_by`) is linked by its own links and senders,
    // not by those of everything compacted beside it.
    const own = engram?.said_by?.[learning.id];
    if (entities === undefined || own?.senders !== undefined || own?.links !== undefined)
      return matcher.link(learning);
    carried.push(entities);
  }
  const found = new Set(carried.flat());
  for (const link of learning.links) {
    const id = link.type === "url" ? entityId("url", link.ref) : undefined;
    if (id !== undefined) found.add(id);
  }
  return { ...learning, entities: [...found].sort(), unlinked: [] };
}
