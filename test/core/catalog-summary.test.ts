/**
 * The catalog summary cache (`.engram/catalog-summary.json`): what is written reads back the
 * same, and any file not written for these catalog bytes, or not well formed, is no cache.
 */
import { describe, expect, it } from "vitest";
import { tierUsage } from "../../src/core/compaction/budget.js";
import {
  parseCatalogSummary,
  serializeCatalogSummary,
  summarizeCatalog,
} from "../../src/core/compaction/catalog-summary.js";
import { sha256Hex } from "../../src/core/model/canonical.js";
import { sealCatalog } from "../../src/core/model/engram.js";
import { catalogEntry } from "../support/catalog-entries.js";

const entries = [catalogEntry(1), catalogEntry(2), { ...catalogEntry(3), scope: "lt" as const }];
const CATALOG = sealCatalog(7, "2026-11-26T10:00:00.000Z", entries);
const SUMMARY = summarizeCatalog(CATALOG);
const KEY = sha256Hex("the catalog file's bytes");
const TEXT = serializeCatalogSummary(KEY, SUMMARY);

describe("catalog summary", () => {
  it("holds the catalog's version, time, hash and tier usage", () => {
    expect(SUMMARY).toEqual({
      catalog_version: 7,
      created_at: "2026-11-26T10:00:00.000Z",
      hash: CATALOG.hash,
      tiers: tierUsage(CATALOG.entries),
    });
    expect(SUMMARY.tiers).toEqual({ st: { files: 2, bytes: 20 }, lt: { files: 1, bytes: 10 } });
  });

  it("reads back what it wrote, for the same bytes only", () => {
    expect(parseCatalogSummary(TEXT, KEY)).toEqual(SUMMARY);
    expect(serializeCatalogSummary(KEY, SUMMARY)).toBe(TEXT);
    expect(parseCatalogSummary(TEXT, sha256Hex("other bytes"))).toBeUndefined();
  });

  it("is no cache when the file is not whole or a field is out of shape", () => {
    const fields = JSON.parse(TEXT) as Record<string, unknown>;
    const variant = (over: Record<string, unknown>) =>
      parseCatalogSummary(JSON.stringify({ ...fields, ...over }), KEY);
    expect(parseCatalogSummary("", KEY)).toBeUndefined();
    expect(parseCatalogSummary(TEXT.slice(0, -20), KEY)).toBeUndefined();
    expect(parseCatalogSummary("[]", KEY)).toBeUndefined();
    expect(parseCatalogSummary(TEXT, "not a key")).toBeUndefined();
    expect(variant({ format: "engram-claims" })).toBeUndefined();
    expect(variant({ version: 1 })).toBeUndefined();
    expect(variant({ catalog_version: -1 })).toBeUndefined();
    expect(variant({ catalog_version: 1.5 })).toBeUndefined();
    expect(variant({ created_at: "yesterday" })).toBeUndefined();
    expect(variant({ hash: "sha256:ABC" })).toBeUndefined();
    expect(variant({ tiers: null })).toBeUndefined();
    expect(variant({ tiers: { st: { files: 1, bytes: 1 } } })).toBeUndefined();
    expect(
      variant({ tiers: { st: { files: 1, bytes: "1" }, lt: { files: 0, bytes: 0 } } }),
    ).toBeUndefined();
    // A well-formed variant is taken as it is: the check is of shape, the key of content.
    expect(variant({ catalog_version: 8 })?.catalog_version).toBe(8);
  });
});
