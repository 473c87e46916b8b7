import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { entityMatcher } from "../../src/core/graph/entities.js";
import { learningsOf } from "../../src/core/graph/learnings.js";
import { sealEngram } from "../../src/core/model/engram.js";
import type { SyncCandidate } from "../../src/core/sync/item.js";
import { learningCandidates, learningStates } from "../../src/core/sync/learning-items.js";
import { DEFAULT_SCHEDULE } from "../../src/core/sync/queue.js";
import { defaultConfig, type TanaSyncConfig } from "../../src/schema/config.js";
import type { Engram } from "../../src/schema/engram.js";
import type { Registry } from "../../src/schema/registry.js";
import type { EngineOptions } from "../../src/sync/engine.js";
import type { QueueStore } from "../../src/sync/queue-store.js";
import { SyncLog } from "../../src/sync/sync-log.js";
import { schemaFromMapping, schemaRecord } from "../../src/sync/targets/tana-schema.js";
import { TanaTarget, type TanaTargetOptions } from "../../src/sync/targets/tana-target.js";
import { engramBody } from "../core/engine-fixtures.js";
import { STAND_IN_HOSTS } from "./bins.js";
import { FakeTana, type FakeTanaOptions, QUICK_TANA_RATE } from "./fake-tana.js";
import type { FakeNode } from "./fake-tana-store.js";

/** People and projects: Ada, Grace and Atlas exist in Tana; Bob and Zephyr do not. */
export const TANA_REGISTRY: Registry = {
  people: [
    { id: "ada", name: "Ada Lovelace", aliases: ["Ada"], emails: [] },
    { id: "grace", name: "Grace Hopper", aliases: ["Grace"], emails: [] },
    { id: "bob", name: "Bob Nobody", aliases: ["Bob"], emails: [] },
  ],
  projects: [
    { id: "atlas", name: "Atlas", aliases: [], paths: [] },
    { id: "zephyr", name: "Zephyr", aliases: [], paths: [] },
  ],
  components: [],
};

const MENTIONS = ["Ada", "Grace", "Bob", "Atlas", "Zephyr", "", "Ada and Atlas", ""];

/** The entities Tana holds before any sync: name -> node id. */
export function seedTanaEntities(tana: FakeTana): Record<string, string> {
  return {
    "Ada Lovelace": tana.store.addEntity("Ada Lovelace", "person"),
    "Grace Hopper": tana.store.addEntity("Grace Hopper", "person"),
    Atlas: tana.store.addEntity("Atlas", "project"),
  };
}

/**
 * `n` public learnings (lessons of ten per engram), some mentioning people and projects,
 * `variant` changing the text of the first `changed` of them.
 */
export function tanaEngrams(n: number, changed = 0): Engram[] {
  const engrams: Engram[] = [];
  for (let e = 0; e * 10 < n; e++) {
    const facts: string[] = [];
    for (let i = e * 10; i < Math.min(n, e * 10 + 10); i++) {
      const who = MENTIONS[i % MENTIONS.length];
      const edit = i < changed ? " (revised)" : "";
      facts.push(
        `Lesson: retry step ${i} of the pipeline twice${who ? ` as ${who} found` : ""}${edit}`,
      );
    }
    const version = `20260105-${String(100000 + e).slice(1)}Z`;
    engrams.push(
      sealEngram(
        engramBody({
          version,
          scope: "lt",
          facts,
          privacy: "public",
          signals: { ...engramBody().signals, mean_confidence: 0.9, lessons: facts.length },
        }),
      ),
    );
  }
  return engrams;
}

/** The learning candidates of those engrams, as the Tana source builds them. */
export function tanaCandidates(
  engrams: readonly Engram[],
  registry = TANA_REGISTRY,
): SyncCandidate[] {
  const byId = new Map(engrams.map((e) => [e.engram_id, e]));
  const matcher = entityMatcher(registry);
  const learnings = learningsOf(engrams).map((l) => matcher.link(l));
  return learningCandidates(learningStates(learnings), byId, {
    default_privacy: "private",
    default_confidence: 0.5,
    project: "bench",
  });
}

export function tanaConfig(tana: FakeTana, extra: Partial<TanaSyncConfig> = {}): TanaSyncConfig {
  return {
    ...defaultConfig().sync.tana,
    endpoint: tana.inputUrl,
    local_api_url: tana.localUrl,
    calls_per_second: tana.perSecond,
    ...extra,
  };
}

export function tempSyncDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "engram-tana-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The config of a repository syncing to the Tana stand-in (buffer flushed at every run). */
export function tanaRepoConfig(fake: FakeTana): string {
  return [
    "[memory]",
    "buffer_keep_recent_events = 0",
    "[sync.tana]",
    `endpoint = "${fake.inputUrl}"`,
    `local_api_url = "${fake.localUrl}"`,
    `calls_per_second = ${fake.perSecond}`,
    "",
  ].join("\n");
}

export const TANA_TAGS = { learning: "pai_learning", proposal: "pai_proposal" };
export const TANA_AT = "2026-01-05T10:00:00.000Z";

/** A target as a new process opens it: the schema ids from the queue's mapping. */
export function openTanaTarget(
  tana: FakeTana,
  store: QueueStore,
  extra: Partial<TanaSyncConfig> = {},
  more: Partial<TanaTargetOptions> = {},
): TanaTarget {
  return new TanaTarget({
    config: tanaConfig(tana, extra),
    token: "input-token",
    localToken: "local-token",
    registry: TANA_REGISTRY,
    schema: schemaFromMapping(store.load().mapping, TANA_TAGS),
    clock: () => TANA_AT,
    ...more,
  });
}

/** `director sync init --target tana` on a target: the supertags, their ids in the mapping. */
export async function initTana(store: QueueStore, target: TanaTarget): Promise<void> {
  await target.health();
  await target.ensureSchema();
  const q = store.load();
  const ids = target.schemaIds;
  if (ids === null) throw new Error("no schema ids");
  const entries = schemaRecord(ids, TANA_TAGS, TANA_AT, q.mapping);
  store.commit({ ...q, mapping: { ...q.mapping, ...entries } }, Object.keys(entries));
}

/** The learning nodes Tana holds (not in the trash). */
export function tanaLearningNodes(tana: FakeTana): FakeNode[] {
  const tag = tana.store.tagByName(TANA_TAGS.learning);
  return tag === undefined ? [] : tana.store.tagged(tag.id).filter((n) => !n.inTrash);
}

/**
 * A node's content as a reader of Tana sees it: its `content` field, then its content parts
 * (children described `content, part i of n`, not in the trash) in the order of their index;
 * `indexes` lists every part child found, so a repeated or missing part shows.
 */
export function tanaContentOf(
  tana: FakeTana,
  node: FakeNode,
  contentAttr: string,
): { text: string; indexes: number[] } {
  const parts = node.children
    .map((id) => tana.store.nodes.get(id))
    .filter((n): n is FakeNode => n !== undefined && !n.inTrash)
    .map((n) => ({ n, index: Number(/^content, part (\d+) of \d+/.exec(n.description)?.[1]) }))
    .filter((p) => Number.isInteger(p.index))
    .sort((a, b) => a.index - b.index);
  return {
    text: (node.fields.get(contentAttr)?.[0] ?? "") + parts.map((p) => p.n.name).join(""),
    indexes: parts.map((p) => p.index),
  };
}

/**
 * A Tana stand-in started and a sync folder made for each test of the calling file, stopped
 * and removed after it: `tana` and `dir` are the current test's. `clock`: the stand-in's
 * clock for search lag (a test's own, read at each request).
 */
export function useFakeTana(options: Partial<FakeTanaOptions> & { clock?: () => number } = {}): {
  readonly tana: FakeTana;
  readonly dir: string;
} {
  let tana: FakeTana | undefined;
  let tmp: { dir: string; remove: () => void } | undefined;
  beforeEach(async () => {
    const { clock, ...rest } = options;
    tana = new FakeTana({
      token: "input-token",
      localToken: "local-token",
      perSecond: QUICK_TANA_RATE,
      ...rest,
    });
    if (clock !== undefined) tana.clock = clock;
    await tana.start();
    tmp = tempSyncDir();
  });
  afterEach(async () => {
    await tana?.stop();
    tmp?.remove();
  });
  return {
    get tana() {
      return tana as FakeTana;
    },
    get dir() {
      return (tmp as { dir: string }).dir;
    },
  };
}

/** The engine's options for a Tana test: the default schedule, a sync log in `dir`, no seal key. */
export function tanaEngine(
  store: QueueStore,
  target: TanaTarget,
  dir: string,
  clock: () => string,
): EngineOptions {
  return {
    store,
    target,
    schedule: DEFAULT_SCHEDULE,
    clock,
    log: new SyncLog(join(dir, "log"), 8),
    sealKey: () => undefined,
  };
}

/** The token variables the Tana service tests name in their config. */
const TANA_TOKEN_VARS = { ENGRAM_TEST_TANA: "input-token", ENGRAM_TEST_TANA_LOCAL: "local-token" };

/**
 * A Tana stand-in for the service run in process: started, its entities seeded, and the
 * environment set as a user would (the stand-in's host and the token variables allowed).
 * `stop` undoes it all.
 */
export async function startTanaService(): Promise<{ tana: FakeTana; stop: () => Promise<void> }> {
  const tana = new FakeTana({
    token: "input-token",
    localToken: "local-token",
    perSecond: QUICK_TANA_RATE,
  });
  await tana.start();
  seedTanaEntities(tana);
  const env: Record<string, string> = {
    ...TANA_TOKEN_VARS,
    ENGRAM_ALLOW_HOSTS: STAND_IN_HOSTS.ENGRAM_ALLOW_HOSTS as string,
    ENGRAM_ALLOW_TOKEN_VARS: Object.keys(TANA_TOKEN_VARS).join(","),
  };
  Object.assign(process.env, env);
  return {
    tana,
    stop: async () => {
      await tana.stop();
      for (const key of Object.keys(env)) delete process.env[key];
    },
  };
}
