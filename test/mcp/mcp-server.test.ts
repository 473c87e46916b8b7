import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  director,
  ROOT,
  runBin,
  type Spawned,
  spawnBin,
  WORKER_BIN,
  worker,
} from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let repo: TempRepo;
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };

beforeAll(async () => {
  assertBuilt();
  repo = dirs.repo();
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  expect((await director(["init", "--repo", repo.dir], { cwd: repo.dir, env: ENV })).code).toBe(0);
  const notes: [string, string, string][] = [
    ["decision", "Use zod for every schema", "schema"],
    ["lesson", "Run the filesystem tests in forked workers", "testing"],
    ["fact", "The hub acknowledges after the journal fsync", "bus"],
  ];
  for (const [kind, text, topic] of notes) {
    const why = kind === "decision" ? ["--rationale", "one validator from input to output"] : [];
    const r = await worker(
      ["emit", "--repo", repo.dir, "--kind", kind, "--text", text, "--topic", topic, ...why],
      {
        cwd: repo.dir,
        env: ENV,
      },
    );
    expect(r.code).toBe(0);
  }
  expect(
    (await director(["run", "--force", "--repo", repo.dir], { cwd: repo.dir, env: ENV })).code,
  ).toBe(0);
});

afterAll(() => dirs.cleanup());

const stdioClient = (dir = repo.dir): Promise<Client> => stdioMcpClient(dir, ENV);

/** Starts `worker mcp --http 127.0.0.1:0` and reads its first line. */
async function httpServer(): Promise<{ child: Spawned; address: string }> {
  const child = spawnBin(
    WORKER_BIN,
    ["mcp", "--http", "127.0.0.1:0", "--repo", repo.dir, "--json"],
    {
      cwd: repo.dir,
      env: ENV,
    },
  );
  const lines = createInterface({ input: child.child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.done.then((r) => reject(new Error(`worker mcp exited ${r.code}: ${r.stderr}`)));
  });
  return { child, address: (JSON.parse(first) as { listening: string }).listening };
}

function textOf(content: unknown): string {
  return String((content as { text?: unknown } | undefined)?.text);
}

async function exercise(client: Client): Promise<void> {
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name).sort()).toEqual([
    "memory_confirm",
    "memory_context",
    "memory_emit",
    "memory_freshness",
    "memory_learnings",
    "memory_recall",
    "memory_status",
    "memory_sync",
  ]);
  for (const tool of tools.tools) {
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.outputSchema?.type).toBe("object");
  }

  const found = await client.callTool({
    name: "memory_recall",
    arguments: { query: "zod schema" },
  });
  expect(found.isError).toBeFalsy();
  const sc = found.structuredContent as {
    status: string;
    scope: { memory_version: number; tiers: string[]; remote_store: { asked: boolean } };
    hits: { text: string; rationale?: string; kind: string }[];
    tokens: number;
  };
  expect(sc.status).toBe("found");
  expect(sc.scope.memory_version).toBeGreaterThanOrEqual(1);
  expect(sc.scope.tiers).toEqual(["lt", "st"]);
  expect(sc.scope.remote_store.asked).toBe(false);
  expect((found.structuredContent as { remote: { mode: string } }).remote.mode).toBe("off");
  expect(sc.hits[0]?.text).toContain("zod");
  expect(sc.hits[0]?.kind).toBe("decision");
  expect(sc.tokens).toBeLessThanOrEqual(512);
  // A decision's hit carries why it was decided, as the CLI's --json does.
  expect(sc.hits[0]?.rationale).toBe("one validator from input to output");

  const none = await client.callTool({
    name: "memory_recall",
    arguments: { query: "kubernetes helm" },
  });
  expect((none.structuredContent as { status: string }).status).toBe("no_match");

  const context = await client.callTool({
    name: "memory_context",
    arguments: { topic: "schema", max_tokens: 200 },
  });
  const cx = context.structuredContent as { status: string; tokens: number; markdown: string };
  expect(cx.status).toBe("found");
  expect(cx.tokens).toBeLessThanOrEqual(200);
  expect(cx.markdown).toContain("zod");
  const fresh = await client.callTool({
    name: "memory_freshness",
    arguments: { stale_only: false },
  });
  expect(fresh.isError, JSON.stringify(fresh.content)).toBeFalsy();
  expect((fresh.structuredContent as { learnings: unknown[] }).learnings.length).toBeGreaterThan(0);

  const status = await client.callTool({ name: "memory_status", arguments: {} });
  const st = status.structuredContent as {
    catalog: { entries: number };
    focus: { present: boolean };
  };
  expect(st.catalog.entries).toBeGreaterThan(0);
  expect(st.focus.present).toBe(true);

  const emitted = await client.callTool({
    name: "memory_emit",
    arguments: { kind: "lesson", text: "MCP notes land on the spool", topics: ["mcp"] },
  });
  expect(emitted.isError).toBeFalsy();
  expect((emitted.structuredContent as { spooled: boolean }).spooled).toBe(true);

  const queue = await client.callTool({ name: "memory_sync", arguments: {} });
  expect(queue.isError, JSON.stringify(queue.content)).toBeFalsy();
  expect(queue.structuredContent).toMatchObject({
    action: "status",
    target: "notion",
    depth: { pending: 0, failed: 0, synced: 0 },
    run: null,
  });

  // Hostile or wrong input: a clear error, and the server keeps serving.
  const badType = await client.callTool({ name: "memory_recall", arguments: { query: 42 } });
  expect(badType.isError).toBe(true);
  const huge = await client.callTool({
    name: "memory_recall",
    arguments: { query: "x".repeat(100_000) },
  });
  expect(huge.isError).toBe(true);
  const badKind = await client.callTool({
    name: "memory_emit",
    arguments: { kind: "rumour", text: "x" },
  });
  expect(badKind.isError).toBe(true);
  await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(
    /Unknown tool/,
  );

  const resources = await client.listResources();
  const uris = resources.resources.map((r) => r.uri);
  expect(uris).toContain("engram://MEMORY.md");
  expect(uris).toContain("engram://catalog.json");
  const engramUri = uris.find((u) => u.startsWith("engram://engrams/e_"));
  expect(engramUri).toBeDefined();
  const focus = await client.readResource({ uri: "engram://MEMORY.md" });
  expect(textOf(focus.contents[0])).toContain("zod");
  const engram = await client.readResource({ uri: engramUri! });
  expect(JSON.parse(textOf(engram.contents[0])).engram_id).toBe(
    engramUri!.slice("engram://engrams/".length),
  );
  await expect(client.readResource({ uri: "engram://engrams/e_nope" })).rejects.toThrow(
    /no engram/,
  );

  // Still serving after all of that.
  const again = await client.callTool({ name: "memory_status", arguments: {} });
  expect(again.isError).toBeFalsy();
}

describe("worker recall", () => {
  it("prints a decision's rationale with its hit, as --json and memory_recall give it", async () => {
    const json = await worker(["recall", "zod schema", "--json"], { cwd: repo.dir, env: ENV });
    expect(json.code, json.stderr).toBe(0);
    const hits = JSON.parse(json.stdout) as { text: string; rationale?: string }[];
    expect(hits[0]?.rationale).toBe("one validator from input to output");
    const text = await worker(["recall", "zod schema"], { cwd: repo.dir, env: ENV });
    expect(text.stdout).toContain("why: one validator from input to output");
  });

  it("takes lesson as a type: the insights lessons become, in context, learnings and MCP", async () => {
    const lesson = "Run the filesystem tests in forked workers";
    const cx = await worker(["context", "testing", "--type", "lesson", "--json"], {
      cwd: repo.dir,
      env: ENV,
    });
    expect(cx.code, cx.stderr).toBe(0);
    expect((JSON.parse(cx.stdout) as { markdown: string }).markdown).toContain(lesson);
    const decisions = await worker(["context", "testing", "--type", "decision", "--json"], {
      cwd: repo.dir,
      env: ENV,
    });
    expect((JSON.parse(decisions.stdout) as { markdown: string }).markdown).not.toContain(lesson);
    const ls = await worker(["learnings", "--type", "lesson", "--json"], {
      cwd: repo.dir,
      env: ENV,
    });
    expect(ls.code, ls.stderr).toBe(0);
    const listed = (JSON.parse(ls.stdout) as { learnings: { type: string; text: string }[] })
      .learnings;
    expect(listed.map((l) => l.text)).toContain(lesson);
    expect(new Set(listed.map((l) => l.type))).toEqual(new Set(["insight"]));
    const bad = await worker(["learnings", "--type", "lessons"], { cwd: repo.dir, env: ENV });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("lesson is insight");

    const client = await stdioClient();
    try {
      const r = await client.callTool({
        name: "memory_context",
        arguments: { topic: "testing", type: "lesson" },
      });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect((r.structuredContent as { markdown: string }).markdown).toContain(lesson);
    } finally {
      await client.close();
    }
  });
});

describe("worker mcp", () => {
  it("serves tools and resources over stdio to the SDK client", async () => {
    const client = await stdioClient();
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it("serves the same over streamable HTTP, checks Host and Origin, and stops on SIGTERM", async () => {
    const { child, address } = await httpServer();
    try {
      const url = new URL(`http://${address}/mcp`);
      const client = new Client({ name: "engram-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(url));
      await exercise(client);
      await client.close();

      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "x", version: "1" },
        },
      };
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      const evilOrigin = await fetch(url, {
        method: "POST",
        headers: { ...headers, origin: "http://evil.example" },
        body: JSON.stringify(init),
      });
      expect(evilOrigin.status).toBe(403);
      const noSession = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(noSession.status).toBe(400);
      const notJson = await fetch(url, { method: "POST", headers, body: "{" });
      expect(notJson.status).toBe(400);
    } finally {
      child.child.kill("SIGTERM");
    }
    const done = await child.done;
    expect(done.code).toBe(0);
    const summary = JSON.parse(done.stdout.trim().split("\n").at(-1)!) as {
      sessions: number;
      refused: number;
    };
    expect(summary.sessions).toBeGreaterThanOrEqual(1);
    expect(summary.refused).toBeGreaterThanOrEqual(1);
  });

  it("answers the MCP inspector's scripted CLI mode", async () => {
    const inspector = join(
      ROOT,
      "node_modules",
      "@modelcontextprotocol",
      "inspector-cli",
      "build",
      "index.js",
    );
    const run = (args: string[]) =>
      runBin(inspector, [process.execPath, WORKER_BIN, "mcp", ...args], {
        cwd: repo.dir,
        env: ENV,
        timeoutMs: 30_000,
      });
    const list = await run(["--method", "tools/list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(
      (JSON.parse(list.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
    ).toContain("memory_recall");
    const call = await run([
      "--method",
      "tools/call",
      "--tool-name",
      "memory_recall",
      "--tool-arg",
      "query=zod",
    ]);
    expect(call.code, call.stderr).toBe(0);
    expect(
      (JSON.parse(call.stdout) as { structuredContent: { status: string } }).structuredContent
        .status,
    ).toBe("found");
  });

  it("serves no file outside memory/, whatever the catalog says", async () => {
    const copy = dirs.copy(repo);
    const catalogPath = copy.path("memory", "catalog.json");
    const catalog = JSON.parse(readFileSync(catalogPath, "utf8")) as {
      entries: { path: string }[];
    };
    const first = catalog.entries[0] as { engram_id: string; path: string };
    first.path = "../../../../../../etc/hostname";
    writeFileSync(catalogPath, JSON.stringify(catalog));
    const client = await stdioClient(copy.dir);
    try {
      // The catalog itself is refused as it is read (src/repo/confine.ts): no tool or
      // resource reads or stats a file through such a path.
      await expect(
        client.readResource({ uri: `engram://engrams/${first.engram_id}` }),
      ).rejects.toThrow(/Resource not found|outside memory|entries\[0\]\.path/);
      const status = await client.callTool({ name: "memory_status", arguments: {} });
      expect(JSON.stringify(status.content)).toContain("entries[0].path");
    } finally {
      await client.close();
    }
  });

  it("refuses to listen beyond this machine", async () => {
    const r = await worker(["mcp", "--http", "0.0.0.0:0", "--repo", repo.dir], { cwd: repo.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/this machine only/);
  });
});
