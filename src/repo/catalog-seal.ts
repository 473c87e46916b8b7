import { catalogHashOf } from "../core/model/engram.js";
import { CATALOG_PATH } from "../core/model/paths.js";
import { InputError } from "../errors.js";
import type { Catalog } from "../schema/engram.js";

/**
 * What every command that writes memory asks of the catalog it builds on: that it hashes to
 * the hash it states. A catalog edited by hand (or by a pull request) is never built on, and
 * never sealed again, which would erase the evidence: the command stops and says how to get
 * the last good one back.
 */
export function assertCatalogSealed(catalog: Catalog): Catalog {
  let recomputed: string;
  try {
    recomputed = catalogHashOf(catalog);
  } catch (error) {
    // A value nested too deep (or a number out of range) cannot be hashed: not a seal either.
    recomputed = `no hash (${(error as Error).message})`;
  }
  if (recomputed === catalog.hash) return catalog;
  throw new InputError(
    `${CATALOG_PATH} fails its own hash: it states ${catalog.hash}, its content gives ${recomputed}. ` +
      "It was edited by hand or damaged; the Director will not build on it or seal it again. " +
      `Restore the last good one (\`git checkout main -- ${CATALOG_PATH}\`, or an earlier commit ` +
      `from \`git log -- ${CATALOG_PATH}\`), check it with \`director verify\`, then run again`,
    CATALOG_PATH,
    "/hash",
  );
}
