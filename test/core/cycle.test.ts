import { describe, expect, it } from "vitest";
import { overBudget, tierUsage } from "../../src/core/compaction/budget.js";
import { isIdleCycle } from "../../src/core/compaction/decide.js";
import {
  CATALOG_PATH,
  ENGRAM_PATH_PATTERN,
  engramPath,
  FOCUS_PATH,
  tierDir,
} from "../../src/core/model/paths.js";
import { MemoryConfig } from "../../src/schema/config.js";
import type { CatalogEntry } from "../../src/schema/engram.js";

const memory = MemoryConfig.parse({ st_max_files: 2, st_max_total_bytes: 100 });

function entry(scope: "st" | "lt", bytes: number, n: number): CatalogEntry {
  const id = `e_${n.toString(16).padStart(32, "0")}`;
  return {
    engram_id: id,
    scope,
    version: "20260101-000000Z",
    path: engramPath(scope, "20260101-000000Z", id),
    hash: `sha256:${"0".repeat(64)}`,
    bytes,
    topics: [],
  } as CatalogEntry;
}

describe("the cycle's decisions before any engram is read", () => {
  const quiet = {
    take: 0,
    newSignals: false,
    focusFresh: true,
    overBudget: false,
    focusDue: false,
  };

  it("is idle only when nothing at all calls for work", () => {
    expect(isIdleCycle(quiet)).toBe(true);
    expect(isIdleCycle({ ...quiet, take: 1 })).toBe(false);
    expect(isIdleCycle({ ...quiet, newSignals: true })).toBe(false);
    expect(isIdleCycle({ ...quiet, focusFresh: false })).toBe(false);
    expect(isIdleCycle({ ...quiet, overBudget: true })).toBe(false);
    expect(isIdleCycle({ ...quiet, focusDue: true })).toBe(false);
  });

  it("is over budget when a tier passes its file or byte budget, not at it", () => {
    expect(overBudget(tierUsage([entry("st", 50, 1), entry("st", 50, 2)]), memory)).toBe(false);
    expect(overBudget(tierUsage([entry("st", 50, 1), entry("st", 51, 2)]), memory)).toBe(true);
    expect(
      overBudget(tierUsage([entry("st", 1, 1), entry("st", 1, 2), entry("st", 1, 3)]), memory),
    ).toBe(true);
    expect(overBudget(tierUsage([entry("lt", 1, 1)]), memory)).toBe(false);
  });
});

describe("memory paths", () => {
  it("builds what the path pattern reads back", () => {
    const path = engramPath("lt", "20260101-000000Z", `e_${"a".repeat(32)}`);
    expect(path).toBe(`memory/lt/20260101-000000Z/engram_e_${"a".repeat(32)}.json`);
    expect(ENGRAM_PATH_PATTERN.exec(path)?.slice(1)).toEqual([
      "lt",
      "20260101-000000Z",
      `e_${"a".repeat(32)}`,
    ]);
    expect(path.startsWith(`${tierDir("lt")}/`)).toBe(true);
    expect([CATALOG_PATH, FOCUS_PATH]).toEqual(["memory/catalog.json", "MEMORY.md"]);
  });
});
