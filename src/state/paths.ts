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
    lock: join(root, "director.lock"),
    sealKey: join(root, "seal.key"),
    catalogSummary: join(root, "catalog-summary.json"),
  };
}
