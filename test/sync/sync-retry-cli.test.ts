import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director } from "../support/bins.js";
import { FakeNotion } from "../support/fake-notion.js";
import { TempDirs } from "../support/repo.js";
import { episodeNote, json, notionSyncRepo, SYNC_TOKEN, syncEnv } from "../support/sync-repo.js";

const dirs = new TempDirs();
let server: FakeNotion | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

interface Run {
  sent: { created_or_updated: number; failed: number };
  depth: { pending: number; failed: number };
  stats: { processed: number; failed: number; skipped: number };
  notices: string[];
}

describe("director sync retry", () => {
  it("puts failed items back to pending for the operator; the next run sends them once", async () => {
    server = new FakeNotion({ token: SYNC_TOKEN });
    const notion = server;
    const url = await notion.start();
    const notes = ["first refused", "second refused", "third refused"].map((t) =>
      episodeNote(t, 0.9, "failure"),
    );
    const repo = await notionSyncRepo(dirs, notes, url);
    // The store refuses every page: a permanent error, failed at once with a notice.
    notion.script = (r) =>
      r.method === "POST" && r.path === "/v1/pages" ? { kind: "status", status: 400 } : undefined;
    const refused = json<Run>(
      await director(["sync", "run", "--json"], { cwd: repo.dir, env: syncEnv() }),
    );
    expect(refused.sent).toMatchObject({ created_or_updated: 0, failed: 3 });
    expect(refused.stats).toMatchObject({ processed: 3, failed: 3, skipped: 0 });
    expect(refused.notices.join("\n")).toContain("director sync retry --id ep_");
    // A permanent failure does not come back by itself.
    notion.script = undefined;
    const still = json<Run>(
      await director(["sync", "run", "--json"], { cwd: repo.dir, env: syncEnv(4000) }),
    );
    expect(still.depth).toMatchObject({ failed: 3, pending: 0 });

    const usage = await director(["sync", "retry"], { cwd: repo.dir, env: syncEnv(4001) });
    expect(usage.code).toBe(2);
    const id = /director sync retry --id (ep_\w+)/.exec(refused.notices.join("\n"))?.[1] as string;
    const one = json<{ requeued: string[]; still_failed: number }>(
      await director(["sync", "retry", "--id", id, "--json"], {
        cwd: repo.dir,
        env: syncEnv(4002),
      }),
    );
    expect(one).toEqual({ requeued: [`episode:${id}`], still_failed: 2 });
    const again = await director(["sync", "retry", "--id", id], {
      cwd: repo.dir,
      env: syncEnv(4003),
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("not failed");
    const rest = json<{ requeued: string[]; still_failed: number }>(
      await director(["sync", "retry", "--all", "--json"], { cwd: repo.dir, env: syncEnv(4004) }),
    );
    expect(rest.requeued).toHaveLength(2);
    expect(rest.still_failed).toBe(0);
    const sent = json<Run>(
      await director(["sync", "run", "--json"], { cwd: repo.dir, env: syncEnv(4005) }),
    );
    expect(sent.sent.created_or_updated).toBe(3);
    expect(
      notion.store
        .pagesOf("Episodes")
        .map((p) => p.content)
        .sort(),
    ).toEqual(notes.map((n) => n.text).sort());
    expect(notion.doubles()).toEqual([]);
  });
});
