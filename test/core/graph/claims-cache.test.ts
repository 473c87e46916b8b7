/**
 * The claims cache file (`.engram/graph/claims.json`): what is written reads back the same,
 * and any file not written for this key, whole and well formed, reads as no cache at all.
 */
import { describe, expect, it } from "vitest";
import {
  claimsKey,
  type LearningClaim,
  parseClaims,
  serializeClaims,
} from "../../../src/core/graph/claims-cache.js";
import { learningId } from "../../../src/core/graph/learnings.js";
import { sha256Hex } from "../../../src/core/model/canonical.js";
import { catalogEntry } from "../../support/catalog-entries.js";

const claim = (text: string, over: Partial<LearningClaim> = {}): LearningClaim => ({
  id: learningId(text),
  type: "insight",
  text,
  rationale: null,
  evidence: 1,
  ...over,
});

const CLAIMS: LearningClaim[] = [
  claim("Deploys go out on Tuesdays", { evidence: 3 }),
  claim("Hash with RFC 8785", { type: "decision", rationale: "byte-identical files" }),
  claim('café \u2028 "quoted" \ud800 lone surrogate', { type: "self_knowledge" }),
  claim("Run the migration first", { type: "pattern", evidence: 12 }),
].sort((a, b) => (a.id < b.id ? -1 : 1));

const KEY = claimsKey([catalogEntry(1), catalogEntry(2)]);
const TEXT = serializeClaims(KEY, CLAIMS);

/** The file with its rows replaced, header digest and count recomputed: well sealed, bad rows. */
function resealed(rows: unknown[], key = KEY): string {
  const body = JSON.stringify(rows);
  const header = {
    format: "engram-claims",
    version: 1,
    key,
    digest: sha256Hex(body),
    count: rows.length,
  };
  return `${JSON.stringify(header)}\n${body}\n`;
}

const row = (c: LearningClaim) => [c.id, c.type, c.text, c.rationale, c.evidence];

describe("claims cache", () => {
  it("reads back what it wrote, in order, for its key", () => {
    expect(parseClaims(TEXT, KEY)).toEqual(CLAIMS);
    expect(parseClaims(serializeClaims(KEY, []), KEY)).toEqual([]);
  });

  it("is keyed by the engram entries: their ids, paths and hashes, in order", () => {
    const [a, b] = [catalogEntry(1), catalogEntry(2)];
    expect(claimsKey([a, b])).toBe(KEY);
    expect(claimsKey([b, a])).not.toBe(KEY);
    expect(claimsKey([a])).not.toBe(KEY);
    expect(claimsKey([a, { ...b, hash: `sha256:${"f".repeat(64)}` }])).not.toBe(KEY);
    expect(claimsKey([a, { ...b, path: `${b.path}.moved` }])).not.toBe(KEY);
    // What the catalog says beside the engrams (topics, sizes) changes no learning.
    expect(claimsKey([a, { ...b, topics: ["other"], bytes: 7 }])).toBe(KEY);
  });

  it("ignores a cache written for other engrams", () => {
    expect(parseClaims(TEXT, claimsKey([catalogEntry(1)]))).toBeUndefined();
    expect(parseClaims(resealed(CLAIMS.map(row), claimsKey([])), KEY)).toBeUndefined();
  });

  it("ignores a damaged file: truncated, edited, empty or not JSON", () => {
    for (let cut = 0; cut < TEXT.length; cut += 7) {
      expect(parseClaims(TEXT.slice(0, cut), KEY)).toBeUndefined();
    }
    expect(parseClaims(TEXT.replace("Tuesdays", "Thursdays"), KEY)).toBeUndefined();
    expect(TEXT).toContain("null,3]");
    expect(parseClaims(TEXT.replace("null,3]", "null,4]"), KEY)).toBeUndefined();
    expect(parseClaims(`${TEXT}\n`, KEY)).toBeUndefined();
    expect(parseClaims("", KEY)).toBeUndefined();
    expect(parseClaims("\u0000\u0001\n\n", KEY)).toBeUndefined();
    expect(parseClaims(`null\n${TEXT.slice(TEXT.indexOf("\n") + 1)}`, KEY)).toBeUndefined();
  });

  it("ignores a well-sealed file whose rows have the wrong shape", () => {
    const [first, second] = CLAIMS.map(row) as [unknown[], unknown[]];
    const bad: unknown[][] = [
      [{ id: first[0] }],
      [[...first, "extra"]],
      [first.slice(0, 4)],
      [["l_NOTHEX0000000000", ...first.slice(1)]],
      [[first[0], "lesson", ...first.slice(2)]],
      [[first[0], first[1], 42, ...first.slice(3)]],
      [[...first.slice(0, 3), 7, first[4]]],
      [[...first.slice(0, 4), 0]],
      [[...first.slice(0, 4), 1.5]],
      [[...first.slice(0, 4), "2"]],
      [[...first.slice(0, 4), 2 ** 60]],
      [second, first],
      [first, first],
      [null],
    ];
    for (const rows of bad)
      expect(parseClaims(resealed(rows), KEY), JSON.stringify(rows)).toBeUndefined();
    // The header's count must match too.
    const counted = TEXT.replace(`"count":${CLAIMS.length}`, `"count":${CLAIMS.length + 1}`);
    expect(parseClaims(counted, KEY)).toBeUndefined();
    expect(parseClaims(resealed([first, second]), KEY)).toEqual(CLAIMS.slice(0, 2));
  });
});
