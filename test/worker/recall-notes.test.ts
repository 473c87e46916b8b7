/**
 * Recall as an agent uses it, through the built bins and the MCP server: a hit is a note; a
 * promoted decision does not hide the lesson beside it; plurals and inflections match; the
 * commit history is searched; the top hits fit the token budget; a decision's confidence
 * survives its promotion.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };
let repo: TempRepo;

interface Hit {
  id: string;
  kind: string;
  text: string;
  rationale?: string;
  scope: string;
  engram_id?: string;
  commit?: string;
  senders: string[];
  tokens: number;
  confidence?: number;
  truncated?: true;
}

const LESSON = "The payment API returns 429 under load; retry with jitter";
const LONG = `Webhooks from the billing provider arrive out of order. ${"Each event carries a sequence number and the consumer keeps the highest one it applied per account. ".repeat(12)}`;

beforeAll(async () => {
  assertBuilt();
  repo = dirs.repo("engram-recall-notes-");
  jsonOf(await director(["init", "--json"], { cwd: repo.dir, env: ENV }));
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, [
    "commit",
    "-qm",
    "Drop the Postgres advisory locks\n\nRedis locks replace them: the advisory locks held connections open across deploys.",
  ]);
  const emit = async (args: string[]) =>
    jsonOf(await worker(["emit", ...args, "--json"], { cwd: repo.dir, env: ENV }));
  await emit([
    "--kind",
    "lesson",
    "--text",
    LESSON,
    "--topic",
    "payments",
    "--link",
    "src/payments/retry.ts",
    "--worker",
    "agent-a",
  ]);
  await emit([
    "--kind",
    "decision",
    "--text",
    "Store money as integer cents",
    "--rationale",
    "floats lose precision",
    "--topic",
    "payments",
    "--confidence",
    "0.9",
    "--link",
    "PR#7",
    "--worker",
    "agent-b",
  ]);
  await emit(["--kind", "fact", "--text", LONG.trim(), "--topic", "billing"]);
  jsonOf(await director(["run", "--flush", "--json"], { cwd: repo.dir, env: ENV }));
});

afterAll(() => dirs.cleanup());

const recall = async (query: string, ...flags: string[]) =>
  jsonOf<Hit[]>(
    await worker(["recall", query, "--json", "--no-signal", ...flags], { cwd: repo.dir, env: ENV }),
  );

describe("worker recall", () => {
  it("finds the lesson beside a promoted decision, and the decision as long-term memory", async () => {
    const [lesson] = await recall("retry with jitter");
    expect(lesson).toMatchObject({ kind: "lesson", text: LESSON, scope: "st" });
    const [decision] = await recall("why do we store integer cents?");
    expect(decision).toMatchObject({
      kind: "decision",
      text: "Store money as integer cents",
      rationale: "floats lose precision",
      scope: "lt",
    });
    const text = await worker(["recall", "retry with jitter", "--no-signal"], { cwd: repo.dir });
    expect(text.stdout).toContain(LESSON);
  });

  it("keeps the decision's confidence through its promotion", () => {
    const catalog = JSON.parse(readFileSync(join(repo.dir, "memory/catalog.json"), "utf8")) as {
      entries: { scope: string; path: string }[];
    };
    const lt = catalog.entries.filter((e) => e.scope === "lt");
    expect(lt).toHaveLength(1);
    const engram = JSON.parse(readFileSync(join(repo.dir, lt[0]!.path), "utf8")) as {
      decisions: { title: string }[];
      signals: { mean_confidence: number | null };
    };
    expect(engram.decisions.map((d) => d.title)).toEqual(["Store money as integer cents"]);
    expect(engram.signals.mean_confidence).toBe(0.9);
  });

  it("shows a decision's stated confidence on its hit", async () => {
    const [decision] = await recall("why do we store integer cents?");
    expect(decision).toMatchObject({ kind: "decision", scope: "lt", confidence: 0.9 });
  });

  it("credits each note to its own sender and links, through compaction and promotion", async () => {
    const [lesson] = await recall("retry with jitter");
    expect(lesson?.senders).toEqual(["agent-a"]);
    const [decision] = await recall("why do we store integer cents?");
    expect(decision).toMatchObject({ scope: "lt", senders: ["agent-b"] });
    const { learnings } = jsonOf<{ learnings: { text: string; entities: string[] }[] }>(
      await worker(["learnings", "--json"], { cwd: repo.dir, env: ENV }),
    );
    const cents = learnings.find((l) => l.text === "Store money as integer cents");
    const retry = learnings.find((l) => l.text === LESSON);
    expect(cents?.entities).toContain("pr:7");
    expect(cents?.entities).not.toContain("file:src/payments/retry.ts");
    expect(retry?.entities).toContain("file:src/payments/retry.ts");
    expect(retry?.entities).not.toContain("pr:7");
  });

  it("matches plurals and inflections", async () => {
    expect((await recall("webhook sequence"))[0]?.text).toContain("Webhooks from the billing");
    expect((await recall("retries"))[0]?.text).toBe(LESSON);
  });

  it("searches the commit history as its own scope", async () => {
    const hits = await recall("why did we drop the advisory locks?");
    const commit = hits.find((h) => h.scope === "history");
    expect(commit).toMatchObject({ kind: "commit", text: "Drop the Postgres advisory locks" });
    expect(commit?.commit).toBe(
      git(repo.dir, ["log", "-1", "--format=%H", "--grep=advisory"]).trim(),
    );
    expect(commit?.rationale).toContain("Redis locks replace them");
    expect(await recall("advisory locks", "--scope", "st,lt")).toEqual([]);
    // A new commit is found by the next recall: the cached history grows with HEAD.
    git(repo.dir, [
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "Adopt pnpm workspaces for the monorepo",
    ]);
    const [pnpm] = await recall("pnpm workspaces", "--scope", "history");
    expect(pnpm?.text).toBe("Adopt pnpm workspaces for the monorepo");
    expect((await recall("advisory locks", "--scope", "history"))[0]?.kind).toBe("commit");
  });

  it("fits the hits in the token budget, 512 by default with --json", async () => {
    const all = await recall("billing webhooks sequence account payment", "--limit", "5");
    expect(all.reduce((n, h) => n + h.tokens, 0)).toBeLessThanOrEqual(512);
    const small = await recall("billing webhooks sequence", "--max-tokens", "40");
    expect(small.reduce((n, h) => n + h.tokens, 0)).toBeLessThanOrEqual(40);
    expect(small[0]?.truncated).toBe(true);
    expect(small[0]?.text.endsWith("…")).toBe(true);
    const whole = await recall("billing webhooks sequence", "--max-tokens", "5000");
    // Whole as memory holds it (compaction keeps an item's first 1,000 or so characters).
    expect(whole[0]?.truncated).toBeUndefined();
    expect(whole[0]?.text.length).toBeGreaterThan(900);
    const bad = await worker(["recall", "x", "--max-tokens", "0"], { cwd: repo.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--max-tokens");
  });
});

describe("worker context", () => {
  it("reads a topic's words as recall does: plurals and inflections meet", async () => {
    const r = await worker(["context", "webhook sequences", "--json"], { cwd: repo.dir, env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { markdown: string }).markdown).toContain(
      "Webhooks from the billing",
    );
  });
});

describe("MCP memory_recall", () => {
  it("answers with the same notes, within its token budget", async () => {
    const client = await stdioMcpClient(repo.dir, ENV);
    try {
      const found = await client.callTool({
        name: "memory_recall",
        arguments: { query: "retry with jitter" },
      });
      const sc = found.structuredContent as { hits: Hit[]; tokens: number; max_tokens: number };
      expect(sc.hits[0]).toMatchObject({ kind: "lesson", text: LESSON });
      expect(sc.max_tokens).toBe(512);
      expect(sc.tokens).toBeLessThanOrEqual(512);
      const history = await client.callTool({
        name: "memory_recall",
        arguments: { query: "advisory locks", history: false },
      });
      expect((history.structuredContent as { status: string }).status).toBe("no_match");
    } finally {
      await client.close();
    }
  });

  it("keeps the history index between calls until HEAD moves", async () => {
    const client = await stdioMcpClient(repo.dir, ENV);
    const cache = join(repo.dir, ".engram", "recall-history.json");
    const commits = async (query: string) => {
      const r = await client.callTool({ name: "memory_recall", arguments: { query } });
      return ((r.structuredContent as { hits?: Hit[] }).hits ?? []).filter(
        (h) => h.scope === "history",
      );
    };
    try {
      expect((await commits("advisory locks")).length).toBeGreaterThan(0);
      expect(existsSync(cache)).toBe(true);
      rmSync(cache);
      // Same HEAD: the server answers from what it holds, without reading history again.
      expect((await commits("advisory locks")).length).toBeGreaterThan(0);
      expect(existsSync(cache)).toBe(false);
      git(repo.dir, ["commit", "-q", "--allow-empty", "-m", "Adopt the hexagonal layout"]);
      expect((await commits("hexagonal layout"))[0]?.text).toContain("hexagonal");
      expect(existsSync(cache)).toBe(true);
    } finally {
      await client.close();
    }
  });
});
