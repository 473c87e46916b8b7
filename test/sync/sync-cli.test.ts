import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSealed } from "../../src/core/ingest/seal.js";
import { deriveSyncKey } from "../../src/core/sync/outgoing.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { assertBuilt, DIRECTOR_BIN, director, spawnBin } from "../support/bins.js";
import { killWhen } from "../support/crash.js";
import { FakeNotion } from "../support/fake-notion.js";
import { Rng } from "../support/random.js";
import { TempDirs } from "../support/repo.js";
import {
  episodeNote,
  json,
  notionSyncRepo,
  ok,
  SYNC_TOKEN,
  syncEnv,
} from "../support/sync-repo.js";

const dirs = new TempDirs();
let server: FakeNotion | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

const env = syncEnv;
const repoWith = (notes: readonly Record<string, unknown>[], url: string, perSecond = 50) =>
  notionSyncRepo(dirs, notes, url, perSecond);
const note = episodeNote;
const TOKEN = SYNC_TOKEN;

describe("director sync through the bins", () => {
  it("sends the policy's episodes, keeps private ones, waits for approval, then sends ciphertext", async () => {
    server = new FakeNotion({ token: TOKEN, perSecond: 50 });
    const url = await server.start();
    const repo = await repoWith(
      [
        note("surprising failure", 0.9, "failure"),
        note("unsure success", 0.6, "success"),
        note("lucky success", 0.1, "success"),
        note("as expected partial", 0.5, "partial"),
        note("abandoned quietly", 0.2, "abandoned"),
        note("near partial", 0.45, "partial"),
        note("private failure words", 0.9, "failure", "private"),
        note("sensitive failure words", 0.9, "failure", "sensitive"),
      ],
      url,
    );
    const run = json<{ sent: { created_or_updated: number }; queued: { private: number } }>(
      await director(["sync", "run", "--json"], { cwd: repo.dir, env: env() }),
    );
    expect(run.queued.private).toBeGreaterThanOrEqual(1);
    const titles = () =>
      server?.store
        .pagesOf("Episodes")
        .map((p) => p.content)
        .sort() ?? [];
    expect(titles()).toEqual(["lucky success", "surprising failure", "unsure success"]);
    const everything =
      JSON.stringify([...server.store.pages.values()]) +
      JSON.stringify([...server.store.blocks.values()]);
    expect(everything).not.toContain("private failure words");
    expect(everything).not.toContain("sensitive failure words");

    const pending = json<{ items: { local_id: string; preview: unknown }[] }>(
      await director(["sync", "pending", "--json"], { cwd: repo.dir, env: env() }),
    );
    expect(pending.items).toHaveLength(1);
    expect(JSON.stringify(pending)).not.toContain("sensitive");
    const id = pending.items[0]?.local_id as string;
    ok(await director(["sync", "approve", id], { cwd: repo.dir, env: env(1) }));
    ok(await director(["sync", "run"], { cwd: repo.dir, env: env(2) }));
    const sealedPage = server.store.pagesOf("Episodes").find((p) => p.key === `episode:${id}`);
    expect(sealedPage).toBeDefined();
    expect(JSON.stringify(sealedPage)).not.toContain("sensitive failure words");
    const key = Buffer.from(
      readFileSync(join(repo.dir, ".engram", "seal.key"), "utf8").trim(),
      "hex",
    );
    expect(openSealed(deriveSyncKey(key), JSON.parse(sealedPage?.content ?? "{}"))).toContain(
      "sensitive failure words",
    );

    const queue = new QueueStore(join(repo.dir, ".engram", "sync"), "notion").load();
    expect(Object.keys(queue.mapping).length).toBeGreaterThan(0);
    const status = json<{ depth: { pending: number }; metrics: { success_rate: number } }>(
      await director(["sync", "status", "--json"], { cwd: repo.dir, env: env(3) }),
    );
    expect(status.metrics.success_rate).toBe(1);
    const again = json<{ sent: { created_or_updated: number } }>(
      await director(["sync", "run", "--force", "--json"], { cwd: repo.dir, env: env(4000) }),
    );
    expect(again.sent.created_or_updated).toBe(0);
    expect(server.doubles()).toEqual([]);
  });

  it("kill -9 of sync run at random points loses nothing and doubles nothing", async () => {
    server = new FakeNotion({ token: TOKEN, perSecond: 20 });
    const url = await server.start();
    const notes = Array.from({ length: 30 }, (_, i) => note(`episode ${i}`, 0.9, "failure"));
    const repo = await repoWith(notes, url, 20);
    // Seeded (ENGRAM_CRASH_SEED), so a failing kill point can be replayed.
    const rng = new Rng(Number(process.env.ENGRAM_CRASH_SEED ?? 20_261_122));
    let killedMidRun = 0;
    for (let round = 0; round < 5; round++) {
      const before = server.requests.length;
      const spawned = spawnBin(DIRECTOR_BIN, ["sync", "run"], { cwd: repo.dir, env: env(round) });
      // Killed once it is talking to the server, at a random point of the run.
      const posts = () =>
        server?.requests.slice(before).filter((r) => r.method === "POST" && r.path === "/v1/pages")
          .length ?? 0;
      killWhen(spawned, () => posts() > 0, rng.int(0, 199));
      const r = await spawned.done;
      if (r.signal === "SIGKILL") killedMidRun++;
    }
    expect(killedMidRun).toBeGreaterThan(0);
    // Interrupted sends are retried on the schedule: move the clock past every delay.
    for (const seconds of [2000, 4000, 6000, 8000]) {
      ok(await director(["sync", "run"], { cwd: repo.dir, env: env(seconds), timeoutMs: 60_000 }));
    }
    const keys = server.store
      .pagesOf("Episodes")
      .map((p) => p.content)
      .sort();
    expect(keys).toEqual(notes.map((n) => n.text).sort());
    expect(server.doubles()).toEqual([]);
  });
});
