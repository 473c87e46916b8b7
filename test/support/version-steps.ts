import { emptyCatalog } from "../../src/core/model/engram.js";
import { DEFAULT_RULES } from "../../src/core/versions/consolidate.js";
import { loadMaster } from "../../src/core/versions/documents.js";
import type { SessionItem } from "../../src/core/versions/items.js";
import type { EndedSession, StepSettings, StepState } from "../../src/core/versions/step.js";

/** Helpers of the version step tests: sessions, settings and the empty memory they start from. */

export const SESSION_AT = "2026-01-01T00:00:00.000Z";

/** An ended session of `list` (facts unless a kind is given), every item at `SESSION_AT`. */
export function endedSession(
  id: string,
  parent: number,
  list: Partial<SessionItem>[],
): EndedSession {
  return {
    session_id: id,
    name: null,
    parent_version: parent,
    parent_catalog_hash: "sha256:x",
    parent_commit: null,
    ended_at: SESSION_AT,
    received_at: SESSION_AT,
    items: list.map((item, i) => ({
      kind: "fact",
      seq: i + 1,
      written_at: SESSION_AT,
      redactions: 0,
      ...item,
    })) as SessionItem[],
  };
}

export const STEP_SETTINGS: StepSettings = {
  rules: DEFAULT_RULES,
  episodesMax: 1000,
  documentsMaxBytes: 1 << 20,
  engrams: new Map(),
  focus: { memory_md_max_bytes: 16_384, memory_md_max_items: 30 },
};

/** Memory before its first version: an empty catalog and master state, no log. */
export function initialStep(): StepState {
  const catalog = emptyCatalog();
  return { catalog, loaded: loadMaster(0, [], new Map()), log: [] };
}

/** What `verifyDocuments` reads of a memory tree (path -> text), with roomy budgets. */
export function documentsInput(files: ReadonlyMap<string, string>) {
  return {
    catalogText: files.get("memory/catalog.json"),
    files: new Map(
      [...files].filter(([p]) => /^memory\/(state|core|sessions|knowledge)\//.test(p)),
    ),
    budgets: { documents_max_bytes: 1 << 20, episodes_max: 1000 },
  };
}
