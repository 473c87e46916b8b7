/** A proposal as the Director hands it to the pull-request body, for the body's tests. */
import type { Proposal, ProposalRow } from "../../src/core/rendering/pr-body.js";

export const HASH_A = `sha256:${"a".repeat(64)}`;
export const HASH_B = `sha256:${"b".repeat(64)}`;
export const FILE_URL = (path: string) => `https://github.com/octo/repo/blob/engram/main/${path}`;

export function row(i: number, over: Partial<ProposalRow> = {}): ProposalRow {
  const id = `e_${i.toString(16).padStart(32, "0")}`;
  return {
    engram_id: id,
    scope: "st",
    path: `memory/st/20250101-000000Z/engram_${id}.json`,
    topics: ["ci", `topic${i}`],
    first_fact: `fact number ${i}`,
    event_count: i + 1,
    ...over,
  };
}

export function proposal(over: Partial<Proposal> = {}): Proposal {
  return {
    base: {
      branch: "main",
      sha: "0123456789abcdef0123456789abcdef01234567",
      catalog_version: 7,
      catalog_hash: HASH_A,
    },
    head: { branch: "engram/main", catalog_version: 8, catalog_hash: HASH_B },
    compacted_events: 12,
    source_window: { start_ts: "2025-01-01T00:00:00.000Z", end_ts: "2025-01-01T02:00:00.000Z" },
    written: [row(1), row(2, { scope: "lt" })],
    promoted: [{ ...row(3, { scope: "lt" }), reason: "repeated in 3 engrams" }],
    evicted: [
      { engram_id: "e_old", scope: "st", path: "memory/st/20240101-000000Z/engram_e_old.json" },
    ],
    tiers_before: { st: { files: 10, bytes: 20_000 }, lt: { files: 2, bytes: 3_000 } },
    tiers_after: { st: { files: 11, bytes: 21_000 }, lt: { files: 4, bytes: 5_000 } },
    budgets: {
      st_max_files: 64,
      st_max_total_bytes: 262_144,
      lt_max_files: 256,
      lt_max_total_bytes: 1_048_576,
    },
    focus: { bytes_before: 1_000, bytes_after: 1_200, max_bytes: 8_192 },
    ...over,
  };
}
