import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QueueStore } from "../../src/sync/queue-store.js";
import { assertBuilt, director, succeeded, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { FakeNotion } from "../support/fake-notion.js";
import { TempDirs } from "../support/repo.js";
import { episodeNote, json, notionSyncRepo, SYNC_TOKEN, syncEnv } from "../support/sync-repo.js";

/*
 * A state folder restored from a branch (the action keeps it on one) is the attacker's: its
 * sync queue may name any page, episode or node. A run writes and deletes only what this
 * project made, in its own databases and groups.
 */

const dirs = new TempDirs();
let notion: FakeNotion | undefined;
let graphiti: FakeGraphiti | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await notion?.stop();
  await graphiti?.stop();
  notion = undefined;
  graphiti = undefined;
});
afterAll(() => dirs.cleanup());

/** Points every record and mapping entry of a target's queue at `remoteId`, as a branch could. */
function aimQueue(repoDir: string, target: string, remoteId: string): number {
  const store = new QueueStore(join(repoDir, ".engram", "sync"), target);
  const q = store.load();
  const keys = Object.keys(q.records);
  for (const key of keys) {
    q.records[key] = { ...(q.records[key] as (typeof q.records)[string]), remote_id: remoteId };
    const mapped = q.mapping[key];
    if (mapped !== undefined) q.mapping[key] = { ...mapped, remote_id: remoteId };
  }
  store.compact(q);
  return keys.length;
}

describe("a restored sync queue cannot aim at other projects' data", () => {
  it("Notion: a page of another project's database is never updated", async () => {
    notion = new FakeNotion({ token: SYNC_TOKEN, perSecond: 50 });
    const url = await notion.start();
    const other = await notionSyncRepo(
      dirs,
      [episodeNote("the other project's lesson", 0.9, "failure")],
      url,
    );
    succeeded(await director(["sync", "run"], { cwd: other.dir, env: syncEnv() }));
    const theirs = [...notion.store.pages.values()];
    expect(theirs).toHaveLength(1);
    const theirPage = theirs[0] as (typeof theirs)[number];
    const before = JSON.stringify(theirPage);
    const blocksBefore = JSON.stringify([...notion.store.blocks.values()]);

    const repo = await notionSyncRepo(
      dirs,
      [episodeNote("our own lesson", 0.9, "failure")],
      url,
      50,
      { parent: "our-parent-page" },
    );
    succeeded(await director(["sync", "run"], { cwd: repo.dir, env: syncEnv() }));
    expect(aimQueue(repo.dir, "notion", theirPage.id)).toBeGreaterThan(0);

    const run = json<{ results?: unknown }>(
      await director(["sync", "run", "--all", "--json"], { cwd: repo.dir, env: syncEnv(60) }),
    );
    expect(JSON.stringify(notion.store.pages.get(theirPage.id))).toBe(before);
    const ourBlocks = [...notion.store.blocks.values()].filter((b) => b.parent !== theirPage.id);
    expect(
      JSON.stringify([...notion.store.blocks.values()].filter((b) => b.parent === theirPage.id)),
    ).toBe(
      JSON.stringify(
        (JSON.parse(blocksBefore) as { parent: string }[]).filter((b) => b.parent === theirPage.id),
      ),
    );
    expect(ourBlocks.length).toBeGreaterThan(0);
    expect(JSON.stringify(run)).toContain(`Notion page ${theirPage.id}`);
    // Our item went to its own page, found by its sync key: no second copy.
    expect(notion.store.pages.size).toBe(2);

    // The recorded databases name theirs: nothing is created or written there.
    const recorded = join(".engram", "sync", "notion", "databases.json");
    repo.write(recorded, readFileSync(join(other.dir, recorded), "utf8"));
    repo.write("more.ndjson", `${JSON.stringify(episodeNote("a new lesson", 0.9, "failure"))}\n`);
    succeeded(
      await worker(["emit", "--from", join(repo.dir, "more.ndjson")], {
        cwd: repo.dir,
        env: syncEnv(70),
      }),
    );
    succeeded(await director(["run", "--force"], { cwd: repo.dir, env: syncEnv(70) }));
    const again = await director(["sync", "run", "--all", "--json"], {
      cwd: repo.dir,
      env: syncEnv(80),
    });
    expect(JSON.stringify(notion.store.pages.get(theirPage.id))).toBe(before);
    const theirSource = theirPage.data_source_id;
    expect(
      [...notion.store.pages.values()].filter((p) => p.data_source_id === theirSource),
    ).toHaveLength(1);
    expect(again.stdout + again.stderr).toContain("databases.json names database");
  });

  it("Graphiti: an episode of another group is never deleted", async () => {
    graphiti = new FakeGraphiti();
    await graphiti.start();
    const repo = dirs.repo("engram-graphiti-");
    const env = { SOURCE_DATE_EPOCH: "1767607200" };
    succeeded(await director(["init"], { cwd: repo.dir }));
    repo.writeConfig(
      [
        "[memory]",
        "buffer_keep_recent_events = 0",
        "[sync.graphiti]",
        `url = "${graphiti.url}"`,
        "confirm_wait_seconds = 5",
        "",
      ].join("\n"),
    );
    const file = repo.write(
      "notes.ndjson",
      `${JSON.stringify(episodeNote("retry the flaky fetch twice", 0.95, "failure"))}\n`,
    );
    succeeded(await worker(["emit", "--from", file], { cwd: repo.dir, env }));
    succeeded(await director(["run", "--force"], { cwd: repo.dir, env }));
    const sync = ["sync", "run", "--target", "graphiti", "--json"];
    succeeded(await director(sync, { cwd: repo.dir, env }));
    graphiti.episodes.push({
      uuid: "0f0f0f0f-another-project",
      name: "their episode",
      content: "another project's knowledge",
      group_id: "another-project",
      source: "text",
      source_description: "theirs",
      reference_time: null,
      created_at: new Date(0).toISOString(),
      visible_at: 0,
    });
    expect(aimQueue(repo.dir, "graphiti", "0f0f0f0f-another-project")).toBeGreaterThan(0);

    const run = succeeded(await director([...sync, "--all"], { cwd: repo.dir, env }));
    expect(graphiti.episodes.map((e) => e.uuid)).toContain("0f0f0f0f-another-project");
    expect(run.stdout).toContain("0f0f0f0f-another-project is not listed in this project's groups");
  });
});
