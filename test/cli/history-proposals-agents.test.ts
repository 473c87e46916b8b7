/**
 * Where agents look: a history import's uncertain decisions listed by `worker learnings` (text
 * and --json) and by the MCP tool `memory_learnings`, each with the one command that confirms
 * it; `memory_confirm` confirms one as `director confirm` does, and the next run remembers it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, describe, expect, it } from "vitest";
import { assertBuilt, director, GIT_IDENTITY, jsonOf, succeeded, worker } from "../support/bins.js";
import { importWithProposal, PROPOSED_TITLE } from "../support/history-proposal.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  dirs.cleanup();
});

const ENV = { ...GIT_IDENTITY, SOURCE_DATE_EPOCH: "1795000000", GIT_CONFIG_GLOBAL: "/dev/null" };

interface Listed {
  import_proposals: { id: string; text: string; confidence: number; confirm: string }[];
}

describe("an import's proposals where agents look", () => {
  it("worker learnings lists each with its confirm command; --status confirmed leaves them out", async () => {
    assertBuilt();
    const repo = dirs.repo("engram-learnings-proposals-");
    const sha = await importWithProposal(repo, ENV);
    const id = sha.slice(0, 12);

    const json = jsonOf<Listed>(await worker(["learnings", "--json"], { cwd: repo.dir, env: ENV }));
    expect(json.import_proposals.map((p) => [p.id, p.text, p.confidence, p.confirm])).toEqual([
      [id, PROPOSED_TITLE, 0.3, `director confirm ${id}`],
    ]);
    const text = await worker(["learnings"], { cwd: repo.dir, env: ENV });
    succeeded(text);
    expect(text.stdout).toContain(PROPOSED_TITLE);
    expect(text.stdout).toContain(`\`director confirm ${id}\``);

    const confirmedOnly = jsonOf<Listed>(
      await worker(["learnings", "--status", "confirmed", "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(confirmedOnly.import_proposals).toEqual([]);
    const lessons = jsonOf<Listed>(
      await worker(["learnings", "--type", "lesson", "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(lessons.import_proposals).toEqual([]);
  });

  it("MCP: memory_learnings lists them, memory_confirm confirms one by id, the next run remembers it", async () => {
    assertBuilt();
    const repo = dirs.repo("engram-mcp-confirm-");
    const sha = await importWithProposal(repo, ENV);
    const id = sha.slice(0, 12);
    const client = await stdioMcpClient(repo.dir, ENV);
    clients.push(client);

    const listed = await client.callTool({ name: "memory_learnings", arguments: {} });
    expect(listed.isError, JSON.stringify(listed)).not.toBe(true);
    const proposals = (listed.structuredContent as unknown as Listed).import_proposals;
    expect(proposals.map((p) => [p.id, p.text, p.confirm])).toEqual([
      [id, PROPOSED_TITLE, `director confirm ${id}`],
    ]);

    // An id naming nothing is refused with the open one named; nothing is confirmed.
    const bad = await client.callTool({ name: "memory_confirm", arguments: { ids: ["abcdef0"] } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain(id);
    const malformed = await client.callTool({ name: "memory_confirm", arguments: { ids: ["x"] } });
    expect(malformed.isError).toBe(true);
    expect(JSON.stringify(malformed.content)).toContain("ids");

    const done = await client.callTool({
      name: "memory_confirm",
      arguments: { ids: [id.slice(0, 8)] },
    });
    expect(done.isError, JSON.stringify(done)).not.toBe(true);
    const r = done.structuredContent as {
      confirmed: { id: string; sha: string }[];
      event_ids: string[];
      transport: string;
    };
    expect(r.confirmed.map((c) => c.id)).toEqual([id]);
    // Over the worker's bus, as memory_emit sends: here the spool the Director drains.
    expect(r.transport).toBe("spool");
    expect(r.event_ids).toEqual([expect.stringMatching(/^git:[0-9a-f]{40}:decision$/)]);
    expect(r.event_ids[0]).toContain(`git:${r.confirmed[0]?.sha}`);

    succeeded(await director(["run"], { cwd: repo.dir, env: ENV }));
    const md = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
    expect(md).toContain(`**${PROPOSED_TITLE}**`);
    // Decided: open nowhere, neither for the CLI nor for MCP.
    const after = await client.callTool({ name: "memory_learnings", arguments: {} });
    expect((after.structuredContent as unknown as Listed).import_proposals).toEqual([]);
    const cli = jsonOf<{ proposals: unknown[] }>(
      await director(["confirm", "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(cli.proposals).toEqual([]);
  });
});
