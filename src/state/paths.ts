import { join } from "node:path";

/** Where the Director's local state lives inside the git-ignored state folder. */
export interface StatePaths {
  root: string;
  journal: string;
  seen: string;
  meta: string;
  intent: string;
  quarantine: string;
  spool: string;
  /**
   * The state folder holding `spool` and `sealKey`: `root`, except in a linked worktree,
   * whose notes go to its main worktree's state folder (one spool per repository).
   */
  spoolRoot: string;
  lock: string;
  sealKey: string;
  /** What an idle cycle needs of the catalog, keyed by its bytes (`catalog-summary.ts`). */
  catalogSummary: string;
}

/** `[state] dir` by default. */
export const DEFAULT_STATE_DIR = ".engram";

/** `stateDir` is `[state] dir`, relative to the repository (the config rule refuses others). */
export function statePaths(repoDir: string, stateDir: string): StatePaths {
  const root = join(repoDir, stateDir);
  return {
    root,
    journal: join(root, "buffer", "journal.ndjson"),
    seen: join(root, "buffer", "seen.keys"),
    meta: join(root, "buffer", "meta.json"),
    intent: join(root, "buffer", "cycle-intent.json"),
    quarantine: join(root, "quarantine.ndjson"),
    spool: join(root, "spool"),
    spoolRoot: root,
    lock: join(root, "director.lock"),
    sealKey: join(root, "seal.key"),
    catalogSummary: join(root, "catalog-summary.json"),
  };
}

/**
 * The paths of a linked worktree's state folder, with the spool and the seal key of its main
 * worktree's (`home`): every worktree's notes reach the Director that drains that spool, and
 * a sensitive note is sealed under the key that Director opens it with.
 */
export function sharedSpoolPaths(own: StatePaths, home: StatePaths): StatePaths {
  return { ...own, spool: home.spool, sealKey: home.sealKey, spoolRoot: home.root };
}
