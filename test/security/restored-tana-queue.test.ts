import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { queueStore } from "../../src/sync/service.js";
import { tanaRun } from "../../src/sync/tana-service.js";
import type { FakeTana } from "../support/fake-tana.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { startTanaService, tanaCandidates, tanaEngrams } from "../support/tana-fixtures.js";

/*
 * A state folder restored from a branch is the attacker's: its Tana mapping may name any node
 * of the workspace. A run trashes and rewrites only the nodes engram's own listing shows.
 */

const dirs = new TempDirs();
let tana: FakeTana;
let stopTana: () => Promise<void>;
let repo: TempRepo;
afterAll(() => dirs.cleanup());

beforeEach(async () => {
  ({ tana, stop: stopTana } = await startTanaService());
  repo = dirs.repo("engram-tana-restored-");
  repo.writeConfig(
    [
      "[sync.tana]",
      `endpoint = "${tana.inputUrl}"`,
      `local_api_url = "${tana.localUrl}"`,
      'token_env = "ENGRAM_TEST_TANA"',
      'local_token_env = "ENGRAM_TEST_TANA_LOCAL"',
      "",
    ].join("\n"),
  );
});
afterEach(() => stopTana());

const source = (hash: string, candidates: SyncCandidate[]) => ({
  hash,
  load: async () => candidates,
});

describe("a restored Tana mapping cannot aim at other nodes", () => {
  it("neither trashes nor rewrites a node engram did not make", async () => {
    const ctx = await openContext({ repo: repo.dir });
    const first = await tanaRun(ctx, {}, source("v1", tanaCandidates(tanaEngrams(3))));
    expect(first.sent.created_or_updated).toBe(3);
    const theirs = tana.store.addNode("someone else's plan");
    const foreign = tana.store.nodes.get(theirs);
    const before = JSON.stringify({ ...foreign, fields: [...(foreign?.fields ?? [])] });

    // Every mapping and record names their node, "written" in the future: never settled.
    const store = queueStore(ctx, "tana");
    const q = store.load();
    for (const key of Object.keys(q.mapping)) {
      if (!key.startsWith("learning:")) continue;
      const m = q.mapping[key];
      if (m !== undefined)
        q.mapping[key] = { ...m, remote_id: theirs, synced_at: "2999-01-01T00:00:00Z" };
      const r = q.records[key];
      if (r !== undefined) q.records[key] = { ...r, remote_id: theirs };
    }
    store.compact(q);

    // The third learning left memory (archived), the others changed (updated).
    const changed = tanaCandidates(tanaEngrams(2)).map((c) => ({
      ...c,
      item: { ...c.item, fields: { ...c.item.fields, confidence: 0.61 } },
    }));
    await tanaRun(ctx, {}, source("v2", changed));
    const after = tana.store.nodes.get(theirs);
    expect(after?.inTrash).toBe(false);
    expect(JSON.stringify({ ...after, fields: [...(after?.fields ?? [])] })).toBe(before);
  });
});
