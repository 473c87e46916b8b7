/**
 * Review in a minute (issue 37): an insight Notion holds that a later note replaces is
 * withdrawn: its page goes to Notion's trash, once, the new side gets a page of its own. On a
 * bad day: the run is killed (kill -9) after the page was trashed and before its answer came,
 * and the next run's lookup is rate limited; the page is trashed once all the same (the
 * stand-in, like Notion, refuses to edit a page in the trash). Through the bins.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, DIRECTOR_BIN, director, spawnBin, worker } from "../support/bins.js";
import { killWhen } from "../support/crash.js";
import { FakeNotion } from "../support/fake-notion.js";
import { TempDirs } from "../support/repo.js";
import { json, notionSyncRepo, ok, SYNC_EPOCH, SYNC_TOKEN, syncEnv } from "../support/sync-repo.js";

const dirs = new TempDirs();
let server: FakeNotion | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

const OLD = "Use Postgres advisory locks for the job queue";
const NEW = "Use Redis locks for the job queue";

interface RunJson {
  sent: { created_or_updated: number; failed: number };
}

describe("a replaced insight in Notion", () => {
  it("is withdrawn once: its page trashed through a kill -9 and a 429, the new side sent", async () => {
    const notion = new FakeNotion({ token: SYNC_TOKEN });
    server = notion;
    let now = SYNC_EPOCH * 1000;
    notion.clock = () => now;
    await notion.start();
    const repo = await notionSyncRepo(dirs, [], notion.url, 50, {
      sync: [
        "insight_pending_min_confidence = 0.5",
        "insight_pending_min_evidence = 1",
        "insight_validated_min_evidence = 1",
      ],
    });
    let seconds = 0;
    const decide = async (text: string, extra: string[] = []) => {
      const args = ["emit", "--kind", "decision", "--text", text, "--rationale", "load test"];
      const more = ["--privacy", "public", "--confidence", "0.9", "--topic", "jobs", ...extra];
      ok(await worker([...args, ...more], { cwd: repo.dir, env: syncEnv(seconds++) }));
      ok(await director(["run", "--force"], { cwd: repo.dir, env: syncEnv(seconds++) }));
    };
    const sync = async () =>
      json<RunJson>(
        await director(["sync", "run", "--target", "notion", "--force", "--json"], {
          cwd: repo.dir,
          env: syncEnv(seconds++),
        }),
      );
    const insights = () => notion.store.pagesOf("Insights");

    await decide(OLD);
    expect((await sync()).sent.failed).toBe(0);
    const old = insights().find((p) => p.content.includes(OLD));
    expect(old?.in_trash).toBe(false);
    const oldId = old?.id as string;
    const oldPage = new RegExp(`^/v1/pages/${oldId}$`);

    const catalog = JSON.parse(readFileSync(join(repo.dir, "memory/catalog.json"), "utf8")) as {
      entries: { engram_id: string }[];
    };
    await decide(NEW, ["--supersedes", `${catalog.entries[0]?.engram_id}#d0`]);

    // The trash is carried out at once, its answer held back: the run dies in between.
    notion.inject({ kind: "delay", ms: 60_000, method: "PATCH", path: oldPage });
    const spawned = spawnBin(DIRECTOR_BIN, ["sync", "run", "--target", "notion", "--force"], {
      cwd: repo.dir,
      env: syncEnv(seconds++),
    });
    killWhen(spawned, () => notion.store.pages.get(oldId)?.in_trash === true, 0);
    expect((await spawned.done).signal).toBe("SIGKILL");

    // The next run finds the send cut by a crash: no page by its key (the trash is not
    // listed), so it waits for the store's lag to settle before it believes the miss.
    await sync();
    expect(notion.requests.filter((r) => oldPage.test(r.path))).toHaveLength(2);
    // Past the settle time; the page's lookup is rate limited.
    seconds += 600;
    now = (SYNC_EPOCH + seconds) * 1000;
    notion.inject({ kind: "status", status: 429, retryAfter: 1, method: "GET", path: oldPage });
    const after = await sync();
    expect(after.sent).toMatchObject({ created_or_updated: 1, failed: 0 });
    expect(insights().find((p) => p.id === oldId)?.in_trash).toBe(true);
    const current = insights().filter((p) => !p.in_trash);
    expect(current.map((p) => p.content).join("\n")).toContain(NEW);
    expect(current.map((p) => p.content).join("\n")).not.toContain(OLD);
    // Trashed once: no second edit of the page (Notion refuses to edit a page in the trash).
    const edits = notion.requests.filter((r) => r.method === "PATCH" && oldPage.test(r.path));
    expect(edits).toHaveLength(1);
    expect(notion.requests.filter((r) => r.status === 400)).toEqual([]);
    expect(notion.doubles()).toEqual([]);
    expect(notion.earlyRequests).toBe(0);
    const lookups = notion.requests.filter((r) => r.method === "GET" && oldPage.test(r.path));
    expect(lookups.map((r) => r.status)).toEqual([200, 429, 200]);

    // Sent once: the next run has nothing to withdraw again.
    const calls = notion.requests.length;
    const again = await sync();
    expect(again.sent.created_or_updated).toBe(0);
    expect(notion.requests.slice(calls).filter((r) => oldPage.test(r.path))).toEqual([]);
  }, 120_000);
});
