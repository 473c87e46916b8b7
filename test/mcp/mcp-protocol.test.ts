import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../../src/mcp/tool-names.js";
import { assertBuilt, childEnv, type Spawned, WORKER_BIN, worker } from "../support/bins.js";
import { httpMcpClient, httpMcpServer, memoryRepo, stdioMcpClient } from "../support/mcp-client.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

/*
 * Bad input gets the protocol's answer (MCP 2025-11-25), over stdio and over HTTP:
 * unknown tool -32602; arguments outside the input schema a tool error naming the field
 * (SEP-1303); unknown resource -32002; a non-JSON line -32700.
 */

const dirs = new TempDirs();
let repo: TempRepo;
let http: { child: Spawned; address: string };
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };

beforeAll(async () => {
  assertBuilt();
  repo = await memoryRepo(dirs, ENV);
  http = await httpMcpServer(repo.dir, ENV);
});

afterAll(async () => {
  http.child.child.kill("SIGTERM");
  await http.child.done;
  dirs.cleanup();
});

function textOf(result: unknown): string {
  const first = (result as { content?: { text?: string }[] }).content?.[0];
  return String(first?.text);
}

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

const transports: [string, () => Promise<Client>][] = [
  ["stdio", () => stdioMcpClient(repo.dir, ENV)],
  ["streamable HTTP", () => httpMcpClient(http.address)],
];

describe.each(transports)("worker mcp over %s answers bad input by the protocol", (_, connect) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client.close();
  });

  it("an unknown tool is a JSON-RPC error -32602 naming it", async () => {
    const error = await rejection(client.callTool({ name: "no_such_tool", arguments: {} }));
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/Unknown tool: no_such_tool/);
  });

  it("arguments outside the schema are a tool error that names the field, not -32603", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["memory_recall", { query: 42 }, /^memory_recall: invalid arguments: query: /],
      ["memory_recall", { query: "x", limit: 0 }, /limit: /],
      ["memory_recall", { query: "x", tier: ["st"] }, /tier: unknown field/],
      ["memory_emit", { kind: "rumour", text: "x" }, /kind: /],
      ["memory_emit", { kind: "fact", text: "x".repeat(8001) }, /text: .*8000/],
      ["memory_emit", { kind: "fact", text: "x", rationale: "" }, /rationale: /],
      ["memory_emit", { kind: "fact", text: "x", issue: "" }, /issue: /],
      ["memory_emit", { kind: "fact", text: "x", topics: ["t".repeat(65)] }, /topics\.0: .*64/],
      ["memory_emit", { kind: "fact", text: "x", links: ["l".repeat(513)] }, /links\.0: .*512/],
      ["memory_emit", { kind: "fact", text: "x", topics: Array(33).fill("t") }, /topics: .*32/],
      ["memory_context", {}, /topic: /],
    ];
    for (const [name, args, pattern] of cases) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
      const text = textOf(result);
      expect(text).toMatch(pattern);
      // Field names, never the CLI's flags or the SDK's raw dump.
      expect(text).not.toMatch(/--[a-z]|MCP error|-3260|"code":/);
    }
    // Still serving.
    const ok = await client.callTool({ name: "memory_status", arguments: {} });
    expect(ok.isError).toBeFalsy();
  });

  it("an unknown resource is -32002, for an unknown engram and an unknown URI alike", async () => {
    for (const uri of ["engram://engrams/e_nope", "engram://nothing-here", "file:///etc/passwd"]) {
      const error = await rejection(client.readResource({ uri }));
      expect(error.code, uri).toBe(-32002);
      expect(error.message).toMatch(/Resource not found/);
    }
  });
});

describe("memory_emit publishes exactly what it accepts", () => {
  let client: Client;
  beforeAll(async () => {
    client = await stdioMcpClient(dirs.copy(repo).dir, ENV);
  });
  afterAll(async () => {
    await client.close();
  });

  it("has the note's limits and a description for every field in its published schema", async () => {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const emit = tools.tools.find((t) => t.name === "memory_emit")!;
    const props = emit.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.text).toMatchObject({ minLength: 1, maxLength: 8000 });
    expect(props.rationale).toMatchObject({ minLength: 1, maxLength: 8000 });
    expect(props.issue).toMatchObject({ minLength: 1 });
    expect(props.topics).toMatchObject({ maxItems: 32, items: { minLength: 1, maxLength: 64 } });
    expect(props.links).toMatchObject({ maxItems: 32, items: { minLength: 1, maxLength: 512 } });
    for (const [field, schema] of Object.entries(props)) {
      expect(schema.description, `memory_emit.${field}`).toEqual(expect.any(String));
    }
    expect(emit.description).toMatch(/director run/);
  });

  it("accepts every call its published schema accepts, and refuses every other", async () => {
    const tools = await client.listTools();
    const schema = tools.tools.find((t) => t.name === "memory_emit")!.inputSchema;
    const validate = new Ajv({ strict: false }).compile(schema);
    const near = (n: number) => [n - 1, n, n + 1];
    const calls: Record<string, unknown>[] = [
      ...near(8000).map((n) => ({ kind: "fact", text: "t".repeat(n) })),
      ...near(8000).map((n) => ({ kind: "fact", text: "t", rationale: "r".repeat(n) })),
      ...near(64).map((n) => ({ kind: "lesson", text: "t", topics: ["p".repeat(n)] })),
      ...near(32).map((n) => ({ kind: "lesson", text: "t", topics: Array(n).fill("p") })),
      ...near(512).map((n) => ({ kind: "fact", text: "t", links: [`src/${"a".repeat(n - 4)}`] })),
      ...near(128).map((n) => ({ kind: "fact", text: "t", issue: "1".repeat(n) })),
      { kind: "fact", text: "" },
      { kind: "fact", text: "t", rationale: "" },
      { kind: "fact", text: "t", issue: "" },
      { kind: "fact", text: "t", confidence: 1.5 },
      { kind: "fact", text: "t", privacy: "secret" },
      { kind: "fact", text: "t", outcome: "success", privacy: "public", confidence: 0.5 },
      { kind: "fact" },
      { text: "t" },
    ];
    for (const args of calls) {
      const published = validate(args);
      const result = await client.callTool({ name: "memory_emit", arguments: args });
      const shown = JSON.stringify(args).slice(0, 100);
      expect(result.isError === true, `${shown}: ${textOf(result)}`).toBe(!published);
      if (published) expect(result.structuredContent).toMatchObject({ spooled: true });
    }
  });

  it("says when the note becomes visible", async () => {
    const result = await client.callTool({
      name: "memory_emit",
      arguments: { kind: "fact", text: "The MCP answer says when a note is visible" },
    });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { message: string }).message).toMatch(
      /next `director run`/,
    );
  });
});

describe("worker mcp over stdio, raw bytes", () => {
  it("answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600", async () => {
    const child = spawn(process.execPath, [WORKER_BIN, "mcp", "--repo", repo.dir], {
      env: childEnv(ENV),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const replies = createInterface({ input: child.stdout });
    const next = () => new Promise<string>((resolve) => replies.once("line", resolve));
    try {
      let reply = next();
      child.stdin.write("this is not json\n");
      expect(JSON.parse(await reply)).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700 },
      });
      reply = next();
      child.stdin.write('{"hello":"world"}\n');
      expect(JSON.parse(await reply)).toMatchObject({ id: null, error: { code: -32600 } });
      // The server goes on: a real request after the bad lines is answered.
      reply = next();
      child.stdin.write(
        `${JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        })}\n`,
      );
      expect(JSON.parse(await reply)).toMatchObject({
        id: 7,
        result: { serverInfo: { name: "engram" } },
      });
    } finally {
      child.stdin.end();
      child.kill("SIGTERM");
    }
  });
});

describe("worker --help", () => {
  it("names every tool the server has", async () => {
    const help = await worker(["mcp", "--help"], { cwd: repo.dir });
    const top = await worker(["--help"], { cwd: repo.dir });
    for (const name of TOOL_NAMES) {
      expect(help.stdout + help.stderr).toContain(name);
      expect(top.stdout + top.stderr).toContain(name);
    }
  });
});
