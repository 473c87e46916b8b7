import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { CATALOG_PATH, FOCUS_PATH } from "../core/model/paths.js";
import { renderFocusFor } from "../core/rendering/focus.js";
import type { VersionRecord } from "../core/versions/log.js";
import { planRollback } from "../core/versions/rollback.js";
import { focusDocumentsOf } from "../core/versions/step.js";
import { StateError } from "../errors.js";
import { readMemoryFiles } from "../repo/memory-files.js";
import { confinedCatalog } from "../repo/memory-tree.js";
import type { Snapshot } from "../repo/version-snapshots.js";
import { Catalog, type Engram } from "../schema/engram.js";
import type { EventBuffer } from "../state/buffer.js";
import type { VersionContent } from "./version-files.js";
import { commitVersion } from "./versions.js";

export interface RollbackResult {
  target: number;
  /** Where the target's memory was read: its snapshot, main's commit, or the work tree. */
  read_from: VersionContent["from"];
  version: VersionRecord;
  snapshot: Snapshot | null;
  engrams_restored: number;
  engrams_removed: number;
}

/**
 * Makes, in the memory tree `ctx.repoDir`, a new version whose memory equals `target`'s: the
 * rollback is one more version (made_by rollback), written like a restore through the cycle's
 * crash-safe intent. The caller holds the Director state and has read the target's files.
 */
export async function rollbackOn(
  ctx: RepoContext,
  buffer: EventBuffer,
  content: VersionContent,
  gitDir: string,
): Promise<RollbackResult> {
  const current = await readMemoryFiles(ctx.repoDir);
  const raw = content.files.get(CATALOG_PATH);
  const parsed = Catalog.safeParse(raw === undefined ? undefined : JSON.parse(raw));
  if (!parsed.success) {
    throw new StateError(`version ${content.record.version}: its memory/catalog.json is not valid`);
  }
  const now = receiptTime();
  const createdAt = now > current.catalog.created_at ? now : current.catalog.created_at;
  // The target's catalog is content too: its paths are confined before the plan uses them.
  const target = confinedCatalog(
    parsed.data as Catalog,
    `version ${content.record.version}: ${CATALOG_PATH}`,
  );
  const plan = planRollback(current, { catalog: target, files: content.files }, createdAt);
  const engrams = new Map<string, Engram>();
  for (const entry of plan.catalog.entries) {
    const text = content.files.get(entry.path);
    if (text === undefined) {
      throw new StateError(`version ${content.record.version}: ${entry.path} is missing from it`);
    }
    engrams.set(entry.engram_id, JSON.parse(text) as Engram);
  }
  const focus = renderFocusFor(
    plan.catalog,
    engrams,
    ctx.config.memory,
    undefined,
    focusDocumentsOf(plan.catalog, content.files),
  );
  const { record, snapshot } = await commitVersion(ctx, buffer, {
    catalog: plan.catalog,
    madeBy: { kind: "rollback", target: content.record.version },
    writes: [...plan.writes, { path: FOCUS_PATH, text: focus.text }],
    deletes: plan.deletes,
    documents: plan.documents,
    carried: content.record.counts,
    gitDir,
  });
  const before = new Set(current.catalog.entries.map((e) => e.engram_id));
  const after = new Set(plan.catalog.entries.map((e) => e.engram_id));
  return {
    target: content.record.version,
    read_from: content.from,
    version: record,
    snapshot,
    engrams_restored: [...after].filter((id) => !before.has(id)).length,
    engrams_removed: [...before].filter((id) => !after.has(id)).length,
  };
}
