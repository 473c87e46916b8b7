import type { Catalog, Scope } from "../../schema/engram.js";
import { isCount, isObject, isSha256Ref, isUtcTime } from "../../schema/formats.js";
import { type TierUsage, tierUsage } from "./budget.js";

/**
 * What a cycle needs of the catalog to tell that it has nothing to do: its version, time and
 * hash, and each tier's usage. Cached in the state folder by the sha256 of the catalog file's
 * bytes, so a no-op `director run` on 10,000 engrams hashes 4 MB instead of parsing and
 * checking every entry; any change to the file, a merge or a checkout included, misses.
 */
export interface CatalogSummary {
  catalog_version: number;
  created_at: string;
  hash: string;
  tiers: Record<Scope, TierUsage>;
}

const FORMAT = "engram-catalog-summary";
// 2: written only for a catalog that passed its own hash (a version 1 file may not have).
const VERSION = 2;
const HEX64 = /^[0-9a-f]{64}$/;

export function summarizeCatalog(catalog: Catalog): CatalogSummary {
  const { catalog_version, created_at, hash } = catalog;
  return { catalog_version, created_at, hash, tiers: tierUsage(catalog.entries) };
}

/** The cache file for the catalog file whose bytes hash to `fileSha256` (hex). */
export function serializeCatalogSummary(fileSha256: string, summary: CatalogSummary): string {
  const { st, lt } = summary.tiers;
  return `${JSON.stringify({
    format: FORMAT,
    version: VERSION,
    catalog_sha256: fileSha256,
    catalog_version: summary.catalog_version,
    created_at: summary.created_at,
    hash: summary.hash,
    tiers: { st: { files: st.files, bytes: st.bytes }, lt: { files: lt.files, bytes: lt.bytes } },
  })}\n`;
}

/**
 * The summary a cache file holds when it was written for the catalog file hashing to
 * `fileSha256` and is well formed; undefined otherwise (the caller reads the catalog). The
 * file is treated as hostile: every field is checked.
 */
export function parseCatalogSummary(text: string, fileSha256: string): CatalogSummary | undefined {
  if (!HEX64.test(fileSha256)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(json) || json.format !== FORMAT || json.version !== VERSION) return undefined;
  if (json.catalog_sha256 !== fileSha256) return undefined;
  const { catalog_version, created_at, hash, tiers } = json;
  if (!isCount(catalog_version) || !isUtcTime(created_at) || !isSha256Ref(hash)) return undefined;
  if (!isObject(tiers)) return undefined;
  const st = usageOf(tiers.st);
  const lt = usageOf(tiers.lt);
  if (st === undefined || lt === undefined) return undefined;
  return { catalog_version, created_at, hash, tiers: { st, lt } };
}

function usageOf(v: unknown): TierUsage | undefined {
  if (!isObject(v) || !isCount(v.files) || !isCount(v.bytes)) return undefined;
  return { files: v.files, bytes: v.bytes };
}
