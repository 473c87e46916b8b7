import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  director,
  jsonOf,
  worker,
} from "../support/bins.js";
import { ADA_ENGINE_REGISTRY } from "../support/graph-fixtures.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let repo: TempRepo;

const epoch = (iso: string) => String(Math.floor(Date.parse(iso) / 1000));
const NOW = epoch("2026-11-17T12:00:00Z");
const SESSION_AT = { SOURCE_DATE_EPOCH: epoch("2026-10-01T10:00:00Z") };

async function ok(result: Promise<BinResult>): Promise<BinResult> {
  const r = await result;
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

/** Everything committed at a known date (author and committer). */
function commitAt(iso: string, message: string): void {
  const before = process.env.GIT_COMMITTER_DATE;
  process.env.GIT_COMMITTER_DATE = iso;
  try {
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "--allow-empty", "-m", message, `--date=${iso}`]);
  } finally {
    if (before === undefined) delete process.env.GIT_COMMITTER_DATE;
    else process.env.GIT_COMMITTER_DATE = before;
  }
}

const session = (args: string[]) =>
  ok(worker(["session", ...args], { cwd: repo.dir, env: SESSION_AT }));

interface Item {
  text: string;
  fresh: boolean;
  confirmed_by: string;
  confirmed_at: string;
  graph_activity: { entity: string; at: string; detail: string } | null;
  why: string;
}

async function freshnessOf(text: string): Promise<Item | undefined> {
  const r = await ok(
    worker(["freshness", "--threshold", "30", "--all", "--json"], {
      cwd: repo.dir,
      env: { SOURCE_DATE_EPOCH: NOW },
    }),
  );
  return jsonOf<{ learnings: Item[] }>(r).learnings.find((l) => l.text.startsWith(text));
}

beforeAll(async () => {
  assertBuilt();
  repo = dirs.repo();
  repo.write("config/registry.toml", ADA_ENGINE_REGISTRY);
  await ok(director(["init"], { cwd: repo.dir }));
  repo.write("src/engine/plan.ts", "export const plan = 1;\n");
  repo.write("src/other.ts", "export const other = 1;\n");
  commitAt("2025-01-01T10:00:00Z", "initial");
});

afterAll(() => dirs.cleanup());

describe("state and core documents in the graph", () => {
  it("carry their entities, verify, and stay fresh while the file they name moves", async () => {
    const { session_id: id } = jsonOf<{ session_id: string }>(await session(["start", "--json"]));
    await session([
      "write",
      "--session",
      id,
      "--kind",
      "state",
      "--key",
      "build",
      "--value",
      '"flaky in src/engine/plan.ts, @nobody knows why"',
    ]);
    await session([
      "write",
      "--session",
      id,
      "--kind",
      "core",
      "--key",
      "team",
      "--value",
      '{"lead":"Ada Lovelace"}',
      "--confidence",
      "0.95",
    ]);
    await session(["end", id]);
    const run = jsonOf<{ sessions: { unlinked_mentions?: string[] }[] }>(
      await ok(director(["run", "--json"], { cwd: repo.dir, env: SESSION_AT })),
    );
    expect(run.sessions[0]?.unlinked_mentions).toEqual(["@nobody"]);
    const read = (path: string) =>
      JSON.parse(readFileSync(join(repo.dir, path), "utf8")) as { entities?: string[] };
    expect(read("memory/state/build.json").entities).toEqual([
      "file:src/engine/plan.ts",
      "project:engine",
    ]);
    expect(read("memory/core/team.json").entities).toEqual(["person:ada"]);
    await ok(director(["verify"], { cwd: repo.dir }));
    commitAt("2026-10-01T10:00:00Z", "memory: session");

    // The file has not moved since January 2025: the document is as old as its merge.
    const before = await freshnessOf("state build:");
    expect(before?.confirmed_by).toBe("merge");
    expect(before?.confirmed_at).toBe("2026-10-01T10:00:00Z");
    expect(before?.fresh).toBe(false);
    expect(before?.graph_activity?.at).toBe("2025-01-01T10:00:00Z");

    // An edit of the file a week ago: the document follows it.
    repo.write("src/engine/plan.ts", "export const plan = 2;\n");
    commitAt("2026-11-10T10:00:00Z", "engine: faster plans");
    const after = await freshnessOf("state build:");
    expect(after?.fresh).toBe(true);
    expect(["file:src/engine/plan.ts", "project:engine"]).toContain(after?.graph_activity?.entity);
    expect(after?.graph_activity?.at).toBe("2026-11-10T10:00:00Z");
    expect(after?.why).toMatch(/last moved 7 days ago \(commit [0-9a-f]{7}/);

    // Context finds the document by its words and by the file it names.
    const context = jsonOf<{ items: { text: string; engram_id: string }[] }>(
      await ok(worker(["context", "src/engine/plan.ts", "--json"], { cwd: repo.dir })),
    );
    expect(context.items).toContainEqual(
      expect.objectContaining({
        text: "state build: flaky in src/engine/plan.ts, @nobody knows why",
        engram_id: "memory/state/build.json",
      }),
    );
  });
});
