/**
 * The claims engrams hold, cached for session consolidation (`.engram/graph/claims.json`):
 * a cycle whose engrams did not change reads the cache, not the engram files, and merges the
 * same evidence byte for byte; a stale, damaged or ill-shaped cache is ignored and rebuilt.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  claimsKey,
  type LearningClaim,
  parseClaims,
  serializeClaims,
} from "../../src/core/graph/claims-cache.js";
import { learningId } from "../../src/core/graph/learnings.js";
import { sha256Hex } from "../../src/core/model/canonical.js";
import {
  catalogEntryFor,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { focusCandidates } from "../../src/core/rendering/focus.js";
import type { SessionStepReport } from "../../src/director/consolidate.js";
import type { Catalog } from "../../src/schema/engram.js";
import { body } from "../core/verify-fixtures.js";
import { assertBuilt, director, jsonOf } from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { binIn, endedSession, SESSION_ENV } from "../support/sessions.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

const ENGRAMS = 12;
/** MEMORY.md's budget: 4 focus candidates, so the cycle itself reads only 4 of 12 engrams. */
const MAX_ITEMS = 1;
const CLAIMS_PATH = ".engram/graph/claims.json";
/** A fact every engram holds. */
const SHARED = "CI runs vitest with pool=forks, café";

/**
 * Twelve engrams in twelve batches: each states its own fact, and all state one fact and one
 * decision, so those learnings have an evidence of 12.
 */
function writeMemory(repo: TempRepo): Catalog {
  const engrams = Array.from({ length: ENGRAMS }, (_, n) => {
    const minute = String(10 + n).padStart(2, "0");
    return sealEngram(
      body(n, {
        version: `20261122-10${minute}00Z`,
        created_at: `2026-11-22T10:${minute}:00.000Z`,
      }),
    );
  });
  const entries = engrams.map((e) => {
    const text = serializeEngram(e);
    const entry = catalogEntryFor(e, Buffer.byteLength(text));
    repo.write(entry.path, text);
    return entry;
  });
  const catalog = sealCatalog(1, "2026-11-22T10:21:00.000Z", entries);
  repo.write("memory/catalog.json", serializeCatalog(catalog));
  return catalog;
}

/** A repository initialized with MEMORY.md's small budget and the twelve engrams. */
async function initializedMemory(): Promise<{ repo: TempRepo; catalog: Catalog }> {
  const repo = temps.repo();
  repo.writeConfig(`[memory]\nmemory_md_max_items = ${MAX_ITEMS}\n`);
  await binIn(director, repo, ["init"]);
  return { repo, catalog: writeMemory(repo) };
}

interface Outcome {
  merged: SessionStepReport["merged_items"][];
  evidence: string;
  catalog: string;
}

async function consolidate(repo: TempRepo): Promise<Outcome> {
  const run = jsonOf<{ sessions: SessionStepReport[] }>(
    await binIn(director, repo, ["run", "--json"]),
  );
  expect(run.sessions).toHaveLength(1);
  return {
    merged: run.sessions.map((s) => s.merged_items),
    evidence: readFileSync(repo.path("memory/knowledge/evidence.json"), "utf8"),
    catalog: readFileSync(repo.path("memory/catalog.json"), "utf8"),
  };
}

/** The cache file as the cycle left it: valid for the catalog's engrams. */
function cachedClaims(repo: TempRepo, catalog: Catalog): LearningClaim[] | undefined {
  return parseClaims(readFileSync(repo.path(CLAIMS_PATH), "utf8"), claimsKey(catalog.entries));
}

describe("session consolidation with the engrams' claims cached", () => {
  it("reads no engram beyond MEMORY.md's when its engrams are unchanged, with the same evidence", async () => {
    const { repo, catalog } = await initializedMemory();
    const own = "Token refresh goes through src/auth/refresh.ts (3)";

    // The first session's cycle reads every engram and writes the cache.
    await endedSession(repo, [["fact", own]]);
    const first = await consolidate(repo);
    expect(first.merged).toEqual([[{ seq: 1, kind: "fact", into: learningId(own), evidence: 2 }]]);
    const claims = cachedClaims(repo, catalog);
    expect(claims?.find((c) => c.text === SHARED)?.evidence).toBe(ENGRAMS);

    // A second session, ended; its cycle is run on copies with the cache as each case has it.
    await endedSession(repo, [
      ["fact", SHARED.toUpperCase()],
      ["decision", "hash with rfc 8785"],
      ["fact", own],
      ["fact", "A claim no engram holds"],
    ]);
    const uncached = temps.copy(repo);
    rmSync(uncached.path(CLAIMS_PATH));
    const reference = await consolidate(uncached);
    expect(reference.merged).toEqual([
      [
        { seq: 1, kind: "fact", into: learningId(SHARED), evidence: ENGRAMS + 1 },
        { seq: 2, kind: "decision", into: learningId("Hash with RFC 8785"), evidence: ENGRAMS + 1 },
        { seq: 3, kind: "fact", into: learningId(own), evidence: 3 },
      ],
    ]);
    // Rebuilt from the engrams: the same claims as the first cycle cached.
    expect(cachedClaims(uncached, catalog)).toEqual(claims);

    // Every engram MEMORY.md does not need is damaged: only the cache can give its claims.
    const candidates = new Set(focusCandidates(catalog, MAX_ITEMS * 4).map((e) => e.path));
    const others = catalog.entries.filter((e) => !candidates.has(e.path));
    expect(others.length).toBe(ENGRAMS - 4);
    const damage = (target: TempRepo) => {
      for (const e of others) writeFileSync(target.path(e.path), "{ damaged");
    };
    const withoutCache = temps.copy(repo);
    rmSync(withoutCache.path(CLAIMS_PATH));
    damage(withoutCache);
    const failed = await director(["run", "--json"], { cwd: withoutCache.dir, env: SESSION_ENV });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain("not valid JSON");

    damage(repo);
    expect(await consolidate(repo)).toEqual(reference);
  });

  it("ignores a stale, damaged or ill-shaped cache, rebuilds it, and merges the same evidence", async () => {
    const { repo, catalog } = await initializedMemory();
    await endedSession(repo, [["fact", SHARED]]);
    const base = temps.copy(repo);
    const reference = await consolidate(repo);
    const valid = readFileSync(repo.path(CLAIMS_PATH), "utf8");
    const key = claimsKey(catalog.entries);
    const claims = parseClaims(valid, key) as LearningClaim[];

    // What a cache of another catalog says: the shared claim with a larger evidence.
    const forged = claims.map((c) => (c.text === SHARED ? { ...c, evidence: 99 } : c));
    const body = JSON.stringify(forged.map((c) => [c.id, c.type, c.text, c.rationale, 2.5]));
    const header = (k: string, b: string) =>
      JSON.stringify({
        format: "engram-claims",
        version: 1,
        key: k,
        digest: sha256Hex(b),
        count: forged.length,
      });
    const cases: Record<string, string> = {
      stale: serializeClaims(claimsKey(catalog.entries.slice(1)), forged),
      truncated: valid.slice(0, Math.floor(valid.length / 2)),
      edited: valid.replace(`,${ENGRAMS}]`, ",99]"),
      "wrong shape": `${header(key, body)}\n${body}\n`,
      "not JSON": "\u0000garbage",
    };
    expect(cases.edited).not.toBe(valid);
    for (const [name, text] of Object.entries(cases)) {
      const copy = temps.copy(base);
      mkdirSync(copy.path(".engram", "graph"), { recursive: true });
      writeFileSync(copy.path(CLAIMS_PATH), text);
      expect(await consolidate(copy), name).toEqual(reference);
      expect(readFileSync(copy.path(CLAIMS_PATH), "utf8"), name).toBe(valid);
    }
    // A folder in its place can be neither read nor replaced: the engrams are read, no temp
    // file is left behind.
    const folder = temps.copy(base);
    mkdirSync(folder.path(CLAIMS_PATH), { recursive: true });
    expect(await consolidate(folder)).toEqual(reference);
    expect(readdirSync(folder.path(".engram", "graph"))).toEqual(["claims.json"]);
  });
});
