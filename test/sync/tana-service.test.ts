import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { queueStore } from "../../src/sync/service.js";
import { tanaInit, tanaRun } from "../../src/sync/tana-service.js";
import type { FakeTana } from "../support/fake-tana.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import {
  startTanaService,
  TANA_REGISTRY,
  tanaCandidates,
  tanaEngrams,
} from "../support/tana-fixtures.js";

const dirs = new TempDirs();
let tana: FakeTana;
let stopTana: () => Promise<void>;
let repo: TempRepo;
afterAll(() => dirs.cleanup());

beforeEach(async () => {
  ({ tana, stop: stopTana } = await startTanaService());
  repo = dirs.repo("engram-tana-svc-");
  configure(true);
});
afterEach(() => stopTana());

function configure(local: boolean): void {
  repo.writeConfig(
    [
      "[sync.tana]",
      `endpoint = "${tana.inputUrl}"`,
      ...(local ? [`local_api_url = "${tana.localUrl}"`] : []),
      'token_env = "ENGRAM_TEST_TANA"',
      'local_token_env = "ENGRAM_TEST_TANA_LOCAL"',
      `calls_per_second = ${tana.perSecond}`,
      "",
    ].join("\n"),
  );
}

const source = (hash: string, candidates: SyncCandidate[]) => ({
  hash,
  load: async () => candidates,
});

function live(tag = "pai_learning") {
  const t = tana.store.tagByName(tag);
  return t === undefined ? [] : tana.store.tagged(t.id).filter((n) => !n.inTrash);
}

describe("director sync --target tana (service)", () => {
  it("runs init when needed, archives what left memory, reports and recreates stale nodes", async () => {
    const ctx = await openContext({ repo: repo.dir });
    const first = await tanaRun(ctx, {}, source("v1", tanaCandidates(tanaEngrams(12))));
    expect(first.tana.schema?.created).toEqual(["learning", "proposal"]);
    expect(first.sent.created_or_updated).toBe(12);
    expect(live()).toHaveLength(12);
    // Init again finds what the run recorded: nothing created twice.
    const again = await tanaInit(ctx);
    expect(again.created).toEqual([]);
    expect(again.validated).toEqual(["learning", "proposal"]);
    expect([...tana.store.nodes.values()].filter((n) => n.name === "pai_learning")).toHaveLength(1);

    // The twelfth learning left memory: its node goes to the trash (Local API).
    const second = await tanaRun(ctx, {}, source("v2", tanaCandidates(tanaEngrams(11))));
    expect(second.tana.archived).toEqual({ trashed: 1, marked: 0, gone: 0 });
    expect(live()).toHaveLength(11);

    // A workspace reset of three nodes: reported, then created again with --resync.
    const gone = live().slice(0, 3);
    tana.store.reset((n) => !gone.includes(n));
    const third = await tanaRun(ctx, {}, source("v2", tanaCandidates(tanaEngrams(11))));
    expect(third.tana.stale).toHaveLength(3);
    expect(third.notices.join("\n")).toMatch(/3 mapping\(s\) point at nodes gone .*--resync/);
    expect(live()).toHaveLength(8);
    const resync = await tanaRun(
      ctx,
      { resync: true },
      source("v2", tanaCandidates(tanaEngrams(11))),
    );
    expect(resync.tana.recreated).toHaveLength(3);
    expect(live()).toHaveLength(11);
    const after = await tanaRun(ctx, {}, source("v2", tanaCandidates(tanaEngrams(11))));
    expect(after.tana.stale).toEqual([]);
    expect(after.sent.created_or_updated).toBe(0);
    const keys = live().map((n) => n.description);
    expect(new Set(keys).size).toBe(11);
  });

  it("without the Local API: a learning that left memory is marked archived through a field", async () => {
    configure(false);
    const ctx = await openContext({ repo: repo.dir });
    await tanaRun(ctx, {}, source("v1", tanaCandidates(tanaEngrams(3))));
    expect(live()).toHaveLength(3);
    const r = await tanaRun(ctx, {}, source("v2", tanaCandidates(tanaEngrams(2))));
    expect(r.tana.archived).toEqual({ trashed: 0, marked: 1, gone: 0 });
    const archivedAt = [...tana.store.nodes.values()].find(
      (n) => n.kind === "field" && n.name === "archivedAt",
    );
    const marked = live().filter((n) =>
      n.children.some((c) => tana.store.nodes.get(c)?.fields.has(archivedAt?.id ?? "")),
    );
    expect(marked).toHaveLength(1);
  });

  it("learnings written without a link because the lookup failed are linked by the next run", async () => {
    const ctx = await openContext({ repo: repo.dir });
    const entities = new Set([...tana.store.nodes.values()].map((n) => n.id));
    let failing = true;
    tana.localScript = (r) =>
      failing && r.path === "/nodes/search" && r.query.includes("textContains")
        ? { kind: "status", status: 503 }
        : undefined;
    const candidates = tanaCandidates(tanaEngrams(8));
    const request = { registry: TANA_REGISTRY };
    const first = await tanaRun(ctx, request, source("v1", candidates));
    expect(first.sent.created_or_updated).toBe(8);
    expect(first.tana.links.linked).toBe(0);
    expect(first.notices.join("\n")).toMatch(/item\(s\) went without a link .*next run/);
    const refs = () =>
      live().flatMap((n) => [...n.fields.values()].flat().filter((v) => v.startsWith("ref:")));
    expect(refs()).toEqual([]);
    failing = false;
    const second = await tanaRun(ctx, request, source("v1", candidates));
    expect(second.sent.created_or_updated).toBeGreaterThan(0);
    expect(second.tana.links.failed).toBe(0);
    expect(refs().length).toBeGreaterThan(0);
    for (const ref of refs()) expect(entities.has(ref.slice(4))).toBe(true);
    expect(live()).toHaveLength(8);
    // Linked now: a third run sends nothing.
    expect((await tanaRun(ctx, request, source("v1", candidates))).sent.created_or_updated).toBe(0);
  });

  it("Tana not running: the run is local-only with a warning, and nothing is lost", async () => {
    const ctx = await openContext({ repo: repo.dir });
    tana.setLocalDown(true);
    const down = await tanaRun(ctx, {}, source("v1", tanaCandidates(tanaEngrams(5))));
    expect(down.mode).toBe("local-only");
    expect(down.notices.join("\n")).toMatch(/unreachable.*stay queued/);
    expect(queueStore(ctx, "tana").load().records).not.toEqual({});
    tana.setLocalDown(false);
    const up = await tanaRun(ctx, {}, source("v1", tanaCandidates(tanaEngrams(5))));
    expect(up.tana.schema?.created).toEqual(["learning", "proposal"]);
    expect(up.sent.created_or_updated).toBe(5);
    expect(live()).toHaveLength(5);
  });
});
