import type { CatalogEntry } from "../../src/schema/engram.js";

/** A catalog entry numbered `n` (its id, path and hash made of the number), for pure tests. */
export function catalogEntry(n: number): CatalogEntry {
  const hex = String(n).padStart(32, "0");
  return {
    engram_id: `e_${hex}`,
    scope: "st",
    version: "20260101-000000Z",
    path: `memory/st/20260101-000000Z/engram_e_${hex}.json`,
    hash: `sha256:${hex}${hex}`,
    topics: ["t"],
    bytes: 10,
  } as CatalogEntry;
}
