/**
 * Every MCP entry `worker setup` writes starts a working server as the host would start it:
 * exactly the command, args and env it names, from the repository, with a PATH that holds no
 * engram bin (a host started from a desktop has no shell PATH), through the official SDK
 * client: initialize, tools/list, memory_recall.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, describeResult, ENGRAM_BIN, ROOT, runBin } from "../support/bins.js";
import { memoryRepo } from "../support/mcp-client.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

/** Where git lives, and no engram, worker or director bin. */
const BARE_PATH = "/usr/bin:/bin";
const dirs = new TempDirs();
let repo: TempRepo;
let home: string;
let codexHome: string;

beforeAll(async () => {
  assertBuilt();
  repo = await memoryRepo(dirs, { SOURCE_DATE_EPOCH: "1790000000" });
  home = dirs.dir("engram-home-");
  codexHome = dirs.dir("engram-codex-");
  for (const dir of BARE_PATH.split(":")) {
    for (const bin of ["engram", "worker", "director"]) {
      expect(existsSync(join(dir, bin)), `${dir}/${bin}`).toBe(false);
    }
  }
});
afterAll(() => dirs.cleanup());

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The JSON blocks of a Markdown document. */
function jsonBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

describe("the documents' MCP entries", () => {
  it("never register the npx form, which runs an unrelated npm package called worker", () => {
    for (const doc of ["README.md", "docs/mcp.md", "docs/hosts.md"]) {
      const text = readFileSync(join(ROOT, doc), "utf8");
      for (const block of jsonBlocks(text)) {
        expect(block, doc).not.toMatch(/"command":\s*"(npx|worker|engram)"/);
      }
    }
    const mcp = jsonBlocks(readFileSync(join(ROOT, "docs", "mcp.md"), "utf8")).join("\n");
    expect(mcp).toContain('"args": ["/path/to/engram/dist/bin/engram.js", "worker", "mcp"');
  });
});

const jsonEntry = (path: string): Entry =>
  (JSON.parse(readFileSync(path, "utf8")) as { mcpServers: Record<string, Entry> }).mcpServers
    .engram as Entry;

/** The files each setup writes its server into, and how to read the entry back. */
const CASES: { host: string; user: boolean; entry: () => Entry }[] = [
  { host: "claude-code", user: false, entry: () => jsonEntry(repo.path(".mcp.json")) },
  { host: "claude-code", user: true, entry: () => jsonEntry(join(home, ".claude.json")) },
  {
    host: "codex",
    user: false,
    entry: () =>
      (
        parseToml(readFileSync(join(codexHome, "config.toml"), "utf8")) as unknown as {
          mcp_servers: Record<string, Entry>;
        }
      ).mcp_servers.engram as Entry,
  },
  { host: "cursor", user: false, entry: () => jsonEntry(repo.path(".cursor", "mcp.json")) },
  { host: "cursor", user: true, entry: () => jsonEntry(join(home, ".cursor", "mcp.json")) },
  { host: "gemini", user: false, entry: () => jsonEntry(repo.path(".gemini", "settings.json")) },
  { host: "gemini", user: true, entry: () => jsonEntry(join(home, ".gemini", "settings.json")) },
];

describe("the MCP server entry worker setup writes", () => {
  for (const { host, user, entry } of CASES) {
    it(`${host}${user ? " --user" : ""}: starts from the repository with no engram on PATH, and answers`, async () => {
      const r = await runBin(ENGRAM_BIN, ["worker", "setup", host, ...(user ? ["--user"] : [])], {
        cwd: repo.dir,
        env: { HOME: home, CODEX_HOME: codexHome },
      });
      expect(r.code, describeResult(r)).toBe(0);
      const server = entry();
      expect(server.command).toBe(process.execPath);
      expect(server.args[0]).toBe(ENGRAM_BIN);
      // Exactly what the entry names: the host adds its own environment, here a bare one.
      const client = new Client({ name: `${host}-stand-in`, version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: server.command,
          args: server.args,
          env: { PATH: BARE_PATH, HOME: home, ...server.env },
          cwd: repo.dir,
          stderr: "pipe",
        }),
      );
      try {
        expect(client.getServerVersion()?.name).toBe("engram");
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toContain("memory_recall");
        const recall = await client.callTool({
          name: "memory_recall",
          arguments: { query: "zod schema" },
        });
        expect(recall.isError).toBeFalsy();
        const answer = recall.structuredContent as {
          status: string;
          hits: { text: string }[];
        };
        expect(answer.status).toBe("found");
        expect(answer.hits.map((h) => h.text).join(" ")).toContain("zod");
      } finally {
        await client.close();
      }
    });
  }
});
