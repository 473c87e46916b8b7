import type { RepoContext } from "../context/repo-context.js";
import { emptyCatalog } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import { knowledgeItems, versionTimes } from "../core/versions/knowledge-view.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { StateError } from "../errors.js";
import { memoryFilesOf, snapshotOf } from "../git/version-objects.js";
import { readCatalog } from "../repo/memory-tree.js";
import { Catalog, Engram } from "../schema/engram.js";
import { readSession, sessionsDir } from "../sessions/store.js";
import {
  type RecallMemoryOptions,
  type RecallResult,
  recallIn,
  recallIndexFor,
} from "../worker/recall.js";

/** Where a session's reads came from: its parent's snapshot tag, its parent commit, or the work tree. */
export type SessionSource = "snapshot" | "parent commit" | "work tree" | "empty";

interface ParentMemory {
  catalog: Catalog;
  files: Map<string, string>;
  source: SessionSource;
}

function catalogIn(files: ReadonlyMap<string, string>): Catalog | undefined {
  const text = files.get(CATALOG_PATH);
  if (text === undefined) return undefined;
  const parsed = Catalog.safeParse(JSON.parse(text));
  return parsed.success ? (parsed.data as Catalog) : undefined;
}

/**
 * The memory a session sees: its parent version, read from git objects (the version's snapshot
 * tag, else the commit recorded when it started), so that main moving on changes nothing.
 * The work tree is used only while it still holds the parent version.
 */
async function parentMemory(ctx: RepoContext, sessionId: string): Promise<ParentMemory> {
  const { header } = readSession(sessionsDir(ctx.paths.root), sessionId);
  const wanted = header.parent_catalog_hash;
  const tried: string[] = [];
  const snapshot = await snapshotOf(ctx.repoDir, header.parent_version);
  for (const [commit, root, source] of [
    [snapshot, true, "snapshot"],
    [header.parent_commit ?? undefined, false, "parent commit"],
  ] as const) {
    if (commit === undefined) continue;
    const files = await memoryFilesOf(ctx.repoDir, commit, root);
    const catalog = catalogIn(files);
    if (catalog?.hash === wanted) return { catalog, files, source };
    tried.push(`${source} ${commit.slice(0, 12)}`);
  }
  const empty = emptyCatalog();
  if (empty.hash === wanted) return { catalog: empty, files: new Map(), source: "empty" };
  const current = await readCatalog(ctx.repoDir);
  if (current.hash === wanted) return { catalog: current, files: new Map(), source: "work tree" };
  throw new StateError(
    `session ${sessionId}: its parent version ${header.parent_version} (${wanted}) is in no snapshot tag (engram/v${header.parent_version}) nor at its parent commit${tried.length > 0 ? ` (tried ${tried.join(", ")})` : ""}, and the work tree has moved on`,
  );
}

/** `worker recall --session ID`: a recall over the session's parent version. */
export async function recallInSession(
  ctx: RepoContext,
  sessionId: string,
  query: string,
  options: RecallMemoryOptions,
): Promise<
  RecallResult & { session_id: string; parent_version: number; read_from: SessionSource }
> {
  const parent = await parentMemory(ctx, sessionId);
  const index =
    parent.source === "work tree"
      ? await recallIndexFor(ctx, parent.catalog)
      : await recallIndexFor(ctx, parent.catalog, {
          cacheName: "recall-index.session.json",
          load: async (entries) => {
            const engrams = new Map<string, Engram>();
            for (const entry of entries) {
              const text = parent.files.get(entry.path);
              if (text === undefined) {
                throw new StateError(
                  `session ${sessionId}: ${entry.path} is missing from its parent version`,
                );
              }
              engrams.set(entry.engram_id, Engram.parse(JSON.parse(text)) as Engram);
            }
            return engrams;
          },
          knowledge: async () =>
            knowledgeItems(
              parent.catalog,
              parent.files,
              versionTimes(parent.files.get(VERSION_LOG_PATH)),
            ),
        });
  const result = await recallIn(ctx, { catalog: parent.catalog, index }, query, options);
  return {
    ...result,
    session_id: sessionId,
    parent_version: parent.catalog.catalog_version,
    read_from: parent.source,
  };
}
