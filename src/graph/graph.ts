import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { documentItem } from "../core/graph/document-links.js";
import {
  type EntityId,
  entityMatcher,
  type LinkedLearning,
  linkLearning,
} from "../core/graph/entities.js";
import {
  type Activity,
  type ActivityOf,
  type ConfirmedBy,
  isoSeconds,
} from "../core/graph/freshness.js";
import { learningsOf } from "../core/graph/learnings.js";
import { withoutReplaced } from "../core/graph/supersession.js";
import { sha256Hex } from "../core/model/canonical.js";
import { MEMORY_DIR } from "../core/model/paths.js";
import { knowledgeLearning } from "../core/versions/knowledge-view.js";
import { firstAdded, headSha, logWithFiles } from "../git/activity-log.js";
import { readKnowledge } from "../repo/knowledge.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import type { Registry } from "../schema/registry.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import { readGraphDocuments, readSessionEvidence } from "./documents.js";
import type { GitHubUpdate } from "./github-activity.js";
import { loadRegistry } from "./registry.js";

/** Commits read for activity: enough for years of a busy repository, bounded all the same. */
const MAX_COMMITS = 200_000;
const CACHE_VERSION = 6;

/** What git says about the repository's activity, cached in the state folder per HEAD. */
interface ActivityCache {
  version: number;
  head: string | null;
  /** path -> [seconds, sha] of the newest commit touching it. */
  files: Record<string, [number, string]>;
  /** author email -> [seconds, sha] of their newest commit; names under `name:`. */
  authors: Record<string, [number, string]>;
  /** sha prefix (12) -> seconds. */
  commits: Record<string, number>;
  /** memory file path -> seconds it reached the branch (merge or commit). */
  added: Record<string, number>;
}

export interface MemoryGraph {
  catalog: Catalog;
  registry: Registry;
  learnings: LinkedLearning[];
  activityOf: ActivityOf;
  /**
   * When each learning was confirmed: in the memory it was imported from (its `origins`),
   * when its engram merged on the branch, or written locally.
   */
  confirmedOf: (learning: LinkedLearning) => { at: number; by: ConfirmedBy };
  head: string | null;
}

/**
 * The entity graph of memory: learnings from the engrams of the catalog, and its state and
 * core documents, linked to the registry's people, projects and components and to the files,
 * issues, PRs and commits they mention, with each entity's activity from git (and issues'
 * and pull requests' from GitHub, when the caller read them). Derived and deterministic; the git activity is cached in the state folder,
 * keyed by HEAD.
 */
export async function loadGraph(
  ctx: RepoContext,
  options: {
    /** GitHub's issues and pull requests by number, when the caller read them. */
    pulls?: ReadonlyMap<number, GitHubUpdate>;
  } = {},
): Promise<MemoryGraph> {
  const registry = loadRegistry(ctx.repoDir);
  const catalog = await readCatalog(ctx.repoDir);
  const matcher = entityMatcher(registry);
  const learnings = await linkedLearnings(ctx, catalog, registry, matcher);
  const activity = await activityFor(ctx);
  // When each engram reached the branch, by id: one lookup per engram of a learning.
  const mergedAt = new Map<string, number>();
  for (const e of catalog.entries) {
    const at = activity.added[e.path];
    if (at !== undefined) mergedAt.set(e.engram_id, at);
  }
  // A state, core or knowledge document changes in place: its value reached the branch with
  // the newest commit touching its file (its item's `engrams` holds the path).
  for (const d of catalog.documents ?? []) {
    const hit = activity.files[d.path];
    if (hit !== undefined && (d.kind === "state" || d.kind === "core" || d.kind === "knowledge"))
      mergedAt.set(d.path, hit[0]);
  }

  const byEmail = new Map<string, string[]>();
  for (const p of registry.people) {
    const names = [p.name, ...p.aliases].map((n) => `name:${n.toLowerCase()}`);
    byEmail.set(p.id, [...p.emails.map((e) => e.toLowerCase()), ...names]);
  }
  const areaGlobs = new Map<string, EntityId[]>();
  for (const path of Object.keys(activity.files)) areaGlobs.set(path, matcher.areasOf(path));

  const areaActivity = new Map<EntityId, Activity>();
  for (const [path, [at, sha]] of Object.entries(activity.files)) {
    for (const area of areaGlobs.get(path) ?? []) {
      const known = areaActivity.get(area);
      if (!known || at > known.at)
        areaActivity.set(area, { at, detail: `commit ${sha.slice(0, 7)} touching ${path}` });
    }
  }

  const activityOfEntity: ActivityOf = (entity) => {
    const colon = entity.indexOf(":");
    const kind = entity.slice(0, colon);
    const key = entity.slice(colon + 1);
    if (kind === "file") {
      const hit = activity.files[key];
      return hit ? { at: hit[0], detail: `commit ${hit[1].slice(0, 7)}` } : undefined;
    }
    if (kind === "project" || kind === "component") return areaActivity.get(entity);
    if (kind === "commit") {
      const at = activity.commits[key.slice(0, 12)];
      return at === undefined ? undefined : { at, detail: `commit ${key.slice(0, 7)}` };
    }
    if (kind === "person") {
      let best: Activity | undefined;
      for (const email of byEmail.get(key) ?? []) {
        const hit = activity.authors[email];
        if (hit && (!best || hit[0] > best.at))
          best = { at: hit[0], detail: `commit ${hit[1].slice(0, 7)} by ${key}` };
      }
      return best;
    }
    if (kind === "pr" || kind === "issue") {
      // From GitHub when it is configured; issues and PRs share one numbering, so an `#N`
      // that is a pull request follows the pull request, and a `PR #N` that is an issue
      // the issue.
      const hit = options.pulls?.get(Number(key));
      if (hit === undefined) return undefined;
      const what = hit.kind === "pr" ? "pull request" : "issue";
      return { at: hit.at, detail: `${what} #${key} updated at ${isoSeconds(hit.at)}` };
    }
    return undefined;
  };

  // An entity's activity is the same for every learning linked to it: look it up once.
  const knownActivity = new Map<EntityId, Activity | undefined>();
  const activityOf: ActivityOf = (entity) => {
    if (knownActivity.has(entity)) return knownActivity.get(entity);
    const activity = activityOfEntity(entity);
    knownActivity.set(entity, activity);
    return activity;
  };

  // Engrams of one batch share a creation time: parse each once.
  const writtenAt = new Map<string, number>();
  const confirmedOf = (learning: LinkedLearning) => {
    const origin = learning.origin?.confirmed_at;
    if (origin) return { at: Math.floor(Date.parse(origin) / 1000), by: "origin" as const };
    let merged: number | undefined;
    for (const id of learning.engrams) {
      const at = mergedAt.get(id);
      if (at !== undefined && (merged === undefined || at < merged)) merged = at;
    }
    if (merged !== undefined) return { at: merged, by: "merge" as const };
    let at = writtenAt.get(learning.written_at);
    if (at === undefined) {
      at = Math.floor(Date.parse(learning.written_at) / 1000);
      writtenAt.set(learning.written_at, at);
    }
    return { at, by: "local" as const };
  };

  return { catalog, registry, learnings, activityOf, confirmedOf, head: activity.head };
}

/**
 * The linked learnings of a catalog, and its state and core documents as items beside them
 * (`documentItem`), cached in the state folder by catalog hash (which covers the documents'
 * hashes) and registry: a read of the graph then parses one file instead of every engram.
 */
async function linkedLearnings(
  ctx: RepoContext,
  catalog: Catalog,
  registry: Registry,
  matcher: ReturnType<typeof entityMatcher>,
): Promise<LinkedLearning[]> {
  const key = sha256Hex(`${CACHE_VERSION}\n${catalog.hash}\n${JSON.stringify(registry)}`);
  const cachePath = join(ctx.paths.root, "graph", "learnings.json");
  try {
    const cached = JSON.parse(readFileSync(cachePath, "utf8")) as {
      key: string;
      learnings: LinkedLearning[];
    };
    if (cached.key === key) return cached.learnings;
  } catch {
    // No cache, or a damaged one: derive it below.
  }
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  const sessions = await readSessionEvidence(ctx.repoDir, catalog);
  // Only the current side: what a later item replaced is not context (supersession.ts).
  const learnings = learningsOf(withoutReplaced([...engrams.values()])).map((l) =>
    linkLearning({ ...l, evidence: l.evidence + (sessions.get(l.id) ?? 0) }, engrams, matcher),
  );
  for (const doc of await readGraphDocuments(ctx.repoDir, catalog)) {
    learnings.push(documentItem(doc, matcher));
  }
  // Sessions' knowledge is memory like the engrams': one learning per claim, whichever holds it.
  const byId = new Map(learnings.map((l) => [l.id, l]));
  for (const k of await readKnowledge(ctx.repoDir, catalog)) {
    const item = knowledgeLearning(k, matcher);
    const known = byId.get(item.id);
    if (known !== undefined) known.evidence += item.evidence;
    else {
      learnings.push(item);
      byId.set(item.id, item);
    }
  }
  learnings.sort((a, b) => a.id.localeCompare(b.id));
  mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
  writeFileAtomicSync(cachePath, JSON.stringify({ key, learnings }));
  return learnings;
}

async function activityFor(ctx: RepoContext): Promise<ActivityCache> {
  const head = await headSha(ctx.repoDir);
  const cachePath = join(ctx.paths.root, "graph", "activity.json");
  try {
    const cached = JSON.parse(readFileSync(cachePath, "utf8")) as ActivityCache;
    if (cached.version === CACHE_VERSION && cached.head === head) return cached;
  } catch {
    // No cache, or a damaged one: read git again below.
  }
  const cache: ActivityCache = {
    version: CACHE_VERSION,
    head,
    files: {},
    authors: {},
    commits: {},
    added: {},
  };
  for (const commit of await logWithFiles(ctx.repoDir, MAX_COMMITS)) {
    // Newest first: the first time a key is seen is its newest activity.
    cache.commits[commit.sha.slice(0, 12)] = commit.at;
    for (const key of [commit.email, `name:${commit.name.toLowerCase()}`]) {
      const known = cache.authors[key];
      if (!known || commit.at > known[0]) cache.authors[key] = [commit.at, commit.sha];
    }
    for (const file of commit.files) {
      const known = cache.files[file];
      if (!known || commit.at > known[0]) cache.files[file] = [commit.at, commit.sha];
    }
  }
  cache.added = Object.fromEntries(await firstAdded(ctx.repoDir, MEMORY_DIR));
  mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
  writeFileAtomicSync(cachePath, JSON.stringify(cache));
  return cache;
}
