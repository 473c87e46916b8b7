/**
 * `memory_sync` with `target: "tana"` over stdio: the Tana queue's state, and one learning
 * synced now by its id, as its learning state says (confirmed on main: a learning node).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, type BinResult, describeResult, director, worker } from "../support/bins.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, TempDirs } from "../support/repo.js";
import { tanaRepoConfig } from "../support/tana-fixtures.js";

const dirs = new TempDirs();
const tana = new FakeTana({ token: "in-tok", localToken: "loc-tok", perSecond: QUICK_TANA_RATE });
const env = { SOURCE_DATE_EPOCH: "1767607200", TANA_TOKEN: "in-tok", TANA_LOCAL_TOKEN: "loc-tok" };
let client: Client;
let learningId = "";

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

beforeAll(async () => {
  assertBuilt();
  await tana.start();
  const repo = dirs.repo("engram-mcp-tana-");
  ok(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(tanaRepoConfig(tana));
  const text = "warm the cache before the first request";
  ok(
    await worker(["emit", "--kind", "lesson", "--text", text, "--privacy", "public"], {
      cwd: repo.dir,
      env,
    }),
  );
  ok(await director(["run", "--force"], { cwd: repo.dir, env }));
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", "memory"]);
  const listed = JSON.parse(
    ok(await worker(["learnings", "--json"], { cwd: repo.dir, env })).stdout,
  ) as { learnings: { id: string; text: string; status: string }[] };
  const found = listed.learnings.find((l) => l.text === text);
  expect(found?.status).toBe("confirmed");
  learningId = found?.id ?? "";
  client = await stdioMcpClient(repo.dir, env);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await tana.stop();
  dirs.cleanup();
});

type Sync = {
  action: string;
  target: string;
  depth: { pending: number; synced: number };
  run: { mode: string; item: { key: string; state: string; remote_id: string | null } | null };
};

describe("memory_sync with target tana", () => {
  it("reports the Tana queue, then syncs one learning by id as a learning node", async () => {
    const status = await client.callTool({ name: "memory_sync", arguments: { target: "tana" } });
    expect(status.isError, JSON.stringify(status.content)).toBeFalsy();
    expect(status.structuredContent).toMatchObject({ action: "status", target: "tana" });
    expect(tana.calls).toHaveLength(0);

    const synced = await client.callTool({
      name: "memory_sync",
      arguments: { target: "tana", id: learningId },
    });
    expect(synced.isError, JSON.stringify(synced.content)).toBeFalsy();
    const sc = synced.structuredContent as Sync;
    expect(sc.action).toBe("sync");
    expect(sc.run.mode).toBe("online");
    expect(sc.run.item).toMatchObject({ key: `learning:${learningId}`, state: "synced" });
    const tag = tana.store.tagByName("pai_learning");
    const nodes = tana.store.tagged(tag?.id ?? "");
    expect(nodes.map((n) => n.name)).toEqual(["warm the cache before the first request"]);
    expect(nodes[0]?.id).toBe(sc.run.item?.remote_id);

    const unknown = await client.callTool({
      name: "memory_sync",
      arguments: { target: "tana", id: "l_nope" },
    });
    expect(unknown.isError).toBe(true);
  });
});
