/**
 * `memory_sync` and hybrid `memory_recall` with the SDK client over stdio, against the local
 * Notion server.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/bins.js";
import { FakeNotion } from "../support/fake-notion.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { episodeNote, notionSyncRepo, SYNC_TOKEN, syncEnv } from "../support/sync-repo.js";
import { waitUntil } from "../support/wait.js";

const dirs = new TempDirs();
const server = new FakeNotion({ token: SYNC_TOKEN, perSecond: 50 });
let repo: TempRepo;
let client: Client;

beforeAll(async () => {
  assertBuilt();
  const url = await server.start();
  repo = await notionSyncRepo(
    dirs,
    [
      episodeNote("rollback needed a schema migration", 0.9, "failure"),
      episodeNote("flag cleanup went as planned", 0.5, "partial"),
      episodeNote("private rollback note", 0.9, "failure", "private"),
    ],
    url,
  );
  client = await stdioMcpClient(repo.dir, syncEnv(10));
});

afterAll(async () => {
  await client?.close();
  await server.stop();
  dirs.cleanup();
});

type Sync = {
  action: string;
  depth: { pending: number; synced: number };
  run: { mode: string; item: { key: string; state: string; remote_id: string | null } | null };
  notices: string[];
};

/** The local id of the episode with this text, read from the engram files on disk. */
function episodeId(text: string): string {
  const catalog = JSON.parse(readFileSync(join(repo.dir, "memory", "catalog.json"), "utf8")) as {
    entries: { path: string }[];
  };
  for (const entry of catalog.entries) {
    const engram = JSON.parse(readFileSync(join(repo.dir, entry.path), "utf8")) as {
      episodes?: { id: string; text?: string }[];
    };
    const found = engram.episodes?.find((e) => e.text === text);
    if (found) return found.id;
  }
  throw new Error(`no episode "${text}"`);
}

describe("memory_sync and hybrid memory_recall over stdio", () => {
  it("reports the queue, syncs one item by id, and refuses an unknown id as a tool error", async () => {
    const before = await client.callTool({ name: "memory_sync", arguments: {} });
    expect(before.isError, JSON.stringify(before.content)).toBeFalsy();
    expect((before.structuredContent as Sync).action).toBe("status");

    const id = episodeId("flag cleanup went as planned");
    const synced = await client.callTool({ name: "memory_sync", arguments: { id } });
    expect(synced.isError, JSON.stringify(synced.content)).toBeFalsy();
    const sc = synced.structuredContent as Sync;
    expect(sc.action).toBe("sync");
    expect(sc.run.mode).toBe("online");
    expect(sc.run.item).toMatchObject({ key: `episode:${id}`, state: "synced" });
    expect(sc.depth.synced).toBeGreaterThanOrEqual(1);
    const pages = server.store.pagesOf("Episodes").map((p) => p.content);
    expect(pages).toContain("flag cleanup went as planned");

    const unknown = await client.callTool({ name: "memory_sync", arguments: { id: "ep_nope" } });
    expect(unknown.isError).toBe(true);
    expect(JSON.stringify(unknown.content)).toMatch(/ep_nope/);
    const wrongTarget = await client.callTool({
      name: "memory_sync",
      arguments: { target: "jira" },
    });
    expect(wrongTarget.isError).toBe(true);
  });

  it("memory_recall with a low confidence adds the store's hits, and says when it is down", async () => {
    const r = await client.callTool({
      name: "memory_recall",
      arguments: { query: "planned cleanup", confidence: 0.2 },
    });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const sc = r.structuredContent as {
      scope: { remote_store: { asked: boolean } };
      hits: { source: string }[];
      remote_hits: { source: string; title: string }[];
      remote: { mode: string };
    };
    expect(sc.remote.mode).toBe("now");
    expect(sc.scope.remote_store.asked).toBe(true);
    expect(sc.hits[0]?.source).toBe("local");
    expect(sc.remote_hits[0]).toMatchObject({ source: "notion" });
    expect(sc.remote_hits[0]?.title).toContain("flag cleanup");

    // 0.7+: answered locally, validated by the server after the answer, cached for the next.
    const call = () =>
      client.callTool({
        name: "memory_recall",
        arguments: { query: "flag", confidence: 0.8 },
      });
    const first = (await call()).structuredContent as { remote: { targets: { state: string }[] } };
    expect(first.remote.targets[0]?.state).toBe("deferred");
    let later = first;
    await waitUntil(
      async () => {
        later = (await call()).structuredContent as typeof first;
        return later.remote.targets[0]?.state === "cached";
      },
      "the background validation to cache the remote answer",
      100,
    );
    expect(
      (later as unknown as { remote_hits: { title: string }[] }).remote_hits[0]?.title,
    ).toContain("flag cleanup");

    server.setDown(true);
    try {
      const down = await client.callTool({
        name: "memory_recall",
        arguments: { query: "planned cleanup", confidence: 0.2, refresh: true },
      });
      expect(down.isError).toBeFalsy();
      const d = down.structuredContent as { hits: unknown[]; notices: string[] };
      expect(d.hits.length).toBeGreaterThan(0);
      expect(d.notices.join("\n")).toMatch(/notion unreachable/);
    } finally {
      server.setDown(false);
    }
  });
});
