import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/bins.js";
import { memoryRepo, stdioMcpClient } from "../support/mcp-client.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

/*
 * The repository is hostile: a pull request can turn a memory file into a symbolic link to
 * the seal key (issue 25). Resources are served by real path, never through a link.
 */

const dirs = new TempDirs();
let repo: TempRepo;
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };
const SECRET = "SEAL-KEY-MATERIAL-must-never-be-served";

beforeAll(async () => {
  assertBuilt();
  repo = await memoryRepo(dirs, ENV);
});

afterAll(() => dirs.cleanup());

interface Planted {
  repo: TempRepo;
  engramUri: string;
  engramPath: string;
}

/** A copy of the repository with a seal key in its state folder. */
function hostileCopy(): Planted {
  const copy = dirs.copy(repo);
  const key = copy.path(".engram", "seal.key");
  mkdirSync(dirname(key), { recursive: true });
  writeFileSync(key, SECRET);
  const catalog = JSON.parse(readFileSync(copy.path("memory", "catalog.json"), "utf8")) as {
    entries: { engram_id: string; path: string }[];
  };
  const first = catalog.entries[0]!;
  return {
    repo: copy,
    engramUri: `engram://engrams/${first.engram_id}`,
    engramPath: copy.path(...first.path.split("/")),
  };
}

async function refused(planted: Planted, uri: string): Promise<McpError> {
  const client = await stdioMcpClient(planted.repo.dir, ENV);
  try {
    const error = await client.readResource({ uri }).then(
      (r) => {
        throw new Error(`served ${JSON.stringify(r).slice(0, 200)}`);
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect(String((error as Error).message)).not.toContain(SECRET);
    // The server goes on serving after the refusal: memory_status answers (with an error
    // naming the link when the catalog itself is behind one, never its content).
    const status = await client.callTool({ name: "memory_status", arguments: {} });
    if (status.isError) expect(JSON.stringify(status.content)).toMatch(/symbolic link/);
    expect(JSON.stringify(status.content)).not.toContain(SECRET);
    return error as McpError;
  } finally {
    await client.close();
  }
}

describe("MCP resources never follow a link", () => {
  it("serves the engram while it is a plain file", async () => {
    const planted = hostileCopy();
    const client = await stdioMcpClient(planted.repo.dir, ENV);
    try {
      const r = await client.readResource({ uri: planted.engramUri });
      expect(JSON.stringify(r.contents)).toContain("engram_id");
    } finally {
      await client.close();
    }
  });

  it("refuses an engram file that is a link to the seal key", async () => {
    const planted = hostileCopy();
    rmSync(planted.engramPath);
    symlinkSync(planted.repo.path(".engram", "seal.key"), planted.engramPath);
    const error = await refused(planted, planted.engramUri);
    expect(error.code).toBe(-32002);
    expect(error.message).toMatch(/symbolic link/);
  });

  it("refuses an engram reached through a linked folder (a relative ../ link)", async () => {
    const planted = hostileCopy();
    const batch = dirname(planted.engramPath);
    const name = planted.engramPath.slice(batch.length + 1);
    // The batch folder becomes a link to a folder outside memory/ holding a same-named file.
    const outside = planted.repo.path(".engram", "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, name), SECRET);
    renameSync(batch, `${batch}.moved`);
    symlinkSync("../../../.engram/outside", batch);
    const error = await refused(planted, planted.engramUri);
    expect(error.code).toBe(-32002);
  });

  it("refuses MEMORY.md and the catalog when they are links", async () => {
    const planted = hostileCopy();
    const focus = planted.repo.path("MEMORY.md");
    rmSync(focus);
    symlinkSync(".engram/seal.key", focus);
    const error = await refused(planted, "engram://MEMORY.md");
    expect(error.code).toBe(-32002);
    expect(error.message).toMatch(/symbolic link/);
  });

  it("refuses a memory/ folder that is itself a link", async () => {
    const planted = hostileCopy();
    const memory = planted.repo.path("memory");
    renameSync(memory, planted.repo.path(".engram", "memory"));
    symlinkSync(".engram/memory", memory);
    const error = await refused(planted, "engram://catalog.json");
    expect(error.code).toBe(-32002);
    expect(error.code).not.toBe(ErrorCode.InternalError);
  });
});
