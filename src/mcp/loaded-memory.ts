import { statSync } from "node:fs";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import type { RecallIndex } from "../core/recall/recall.js";
import { readCatalog } from "../repo/memory-tree.js";
import type { Catalog } from "../schema/engram.js";
import { recallIndexFor } from "../worker/recall.js";

/**
 * The catalog and recall index a long-lived server keeps between calls: reloaded only when
 * `memory/catalog.json` changes (size or modification time), so a query costs the search,
 * not the reading of 10,000 engrams' index.
 */
export class LoadedMemory {
  private stamp = "";
  private loaded: Promise<{ catalog: Catalog; index: RecallIndex }> | undefined;

  constructor(private readonly ctx: RepoContext) {}

  get(): Promise<{ catalog: Catalog; index: RecallIndex }> {
    const stamp = catalogStamp(this.ctx.repoDir);
    if (this.loaded === undefined || stamp !== this.stamp) {
      this.stamp = stamp;
      const ctx = this.ctx;
      this.loaded = (async () => {
        const catalog = await readCatalog(ctx.repoDir);
        return { catalog, index: await recallIndexFor(ctx, catalog) };
      })();
      // A failed load is not kept: the next call tries again.
      this.loaded.catch(() => {
        this.loaded = undefined;
      });
    }
    return this.loaded;
  }
}

function catalogStamp(repoDir: string): string {
  try {
    const s = statSync(join(repoDir, CATALOG_PATH), { bigint: true });
    return `${s.size}:${s.mtimeNs}:${s.ino}`;
  } catch {
    return "missing";
  }
}
