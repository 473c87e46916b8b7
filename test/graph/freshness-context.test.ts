import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { ADA_ENGINE_REGISTRY } from "../support/graph-fixtures.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let repo: TempRepo;

const epoch = (iso: string) => String(Math.floor(Date.parse(iso) / 1000));
const NOW = epoch("2026-11-17T12:00:00Z");

/** A commit at a known date by a known author. */
function commitAt(iso: string, message: string, author = "Bob Builder <bob@example.com>"): void {
  const [, name, email] = /^(.*) <(.*)>$/.exec(author) as RegExpExecArray;
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, [
    "-c",
    `user.name=${name}`,
    "-c",
    `user.email=${email}`,
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    message,
    `--date=${iso}`,
  ]);
  // git -c sets the committer too; its date comes from the environment, set below.
}

async function learn(iso: string, notes: string[][]): Promise<void> {
  const env = { SOURCE_DATE_EPOCH: epoch(iso) };
  for (const args of notes) {
    const r = await worker(["emit", "--repo", repo.dir, ...args], { cwd: repo.dir, env });
    expect(r.code, r.stderr).toBe(0);
  }
  const run = await director(["run", "--force", "--repo", repo.dir], { cwd: repo.dir, env });
  expect(run.code, run.stderr).toBe(0);
}

beforeAll(async () => {
  assertBuilt();
  repo = dirs.repo();
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  repo.write("config/registry.toml", ADA_ENGINE_REGISTRY);
  expect((await director(["init", "--repo", repo.dir], { cwd: repo.dir })).code).toBe(0);
  repo.write("src/engine/plan.ts", "export const plan = 1;\n");
  repo.write("src/legacy/old.ts", "export const old = 1;\n");
  repo.write("src/docs/readme.ts", "export const readme = 1;\n");
  withDate("2024-11-01T10:00:00Z", () => commitAt("2024-11-01T10:00:00Z", "initial"));

  // Two years ago: a learning about a file that is still edited today.
  await learn("2024-11-20T10:00:00Z", [
    [
      "--kind",
      "lesson",
      "--text",
      "The planner caches plans per issue",
      "--link",
      "src/engine/plan.ts",
    ],
  ]);
  withDate("2024-11-20T10:00:00Z", () =>
    commitAt("2024-11-20T10:00:00Z", "memory: planner lesson"),
  );

  repo.write("src/legacy/old.ts", "export const old = 2;\n");
  withDate("2025-09-20T10:00:00Z", () => commitAt("2025-09-20T10:00:00Z", "legacy: last change"));

  // Two months ago: a learning about a file nobody touched for more than a year.
  await learn("2026-09-16T10:00:00Z", [
    [
      "--kind",
      "fact",
      "--text",
      "The legacy loader reads only v1 configs",
      "--link",
      "src/legacy/old.ts",
    ],
    [
      "--kind",
      "decision",
      "--text",
      "Ada reviews every planner change",
      "--rationale",
      "she wrote the scheduler",
    ],
    [
      "--kind",
      "fact",
      "--text",
      "Docs pages are generated from the readme module",
      "--link",
      "src/docs/readme.ts",
    ],
    [
      "--kind",
      "fact",
      "--text",
      "Cache entries expire after one hour",
      "--link",
      "src/engine/plan.ts",
    ],
  ]);
  withDate("2026-09-16T10:00:00Z", () => commitAt("2026-09-16T10:00:00Z", "memory: legacy fact"));

  repo.write("src/engine/plan.ts", "export const plan = 2;\n");
  withDate("2026-11-10T10:00:00Z", () =>
    commitAt("2026-11-10T10:00:00Z", "engine: faster plans", "Ada Lovelace <ada@example.com>"),
  );
});

afterAll(() => {
  delete process.env.GIT_COMMITTER_DATE;
  dirs.cleanup();
});

function withDate(iso: string, body: () => void): void {
  const before = process.env.GIT_COMMITTER_DATE;
  process.env.GIT_COMMITTER_DATE = iso;
  try {
    body();
  } finally {
    if (before === undefined) delete process.env.GIT_COMMITTER_DATE;
    else process.env.GIT_COMMITTER_DATE = before;
  }
}

interface FreshnessJson {
  stale: number;
  learnings: {
    text: string;
    fresh: boolean;
    temporal_fresh: boolean;
    confirmed_by: string;
    confirmed_at: string;
    graph_activity: { entity: string; at: string } | null;
    why: string;
  }[];
}

describe("worker freshness", () => {
  it("keeps an old learning about an active file fresh and flags a recent one about a dead file", async () => {
    const r = await worker(
      ["freshness", "--threshold", "30", "--all", "--json", "--repo", repo.dir],
      {
        cwd: repo.dir,
        env: { SOURCE_DATE_EPOCH: NOW },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf<FreshnessJson>(r);
    const planner = out.learnings.find((l) => l.text.includes("planner caches"));
    const legacy = out.learnings.find((l) => l.text.includes("legacy loader"));
    expect(planner?.confirmed_by).toBe("merge");
    expect(planner?.confirmed_at).toBe("2024-11-20T10:00:00Z");
    expect(planner?.temporal_fresh).toBe(false);
    expect(planner?.fresh).toBe(true);
    expect(["file:src/engine/plan.ts", "project:engine"]).toContain(
      planner?.graph_activity?.entity,
    );
    expect(planner?.graph_activity?.at).toBe("2026-11-10T10:00:00Z");
    expect(planner?.why).toMatch(/last moved 7 days ago/);

    expect(legacy?.confirmed_at).toBe("2026-09-16T10:00:00Z");
    expect(legacy?.fresh).toBe(false);
    expect(legacy?.graph_activity?.entity).toBe("file:src/legacy/old.ts");
    expect(legacy?.why).toMatch(/file:src\/legacy\/old\.ts last moved 423 days ago/);

    const text = await worker(["freshness", "--repo", repo.dir], {
      cwd: repo.dir,
      env: { SOURCE_DATE_EPOCH: NOW },
    });
    expect(text.stdout).toMatch(/STALE .*legacy loader/);
    expect(text.stdout).not.toMatch(/planner caches/);
  });
});

interface ContextJson {
  status: string;
  tokens: number;
  max_tokens: number;
  scope: { memory_version: number; remote_store: { asked: boolean } };
  items: { text: string; via: string; shared: string[] }[];
  markdown: string;
}

describe("worker context", () => {
  it("returns the topic's learnings and those linked through shared files and people, within the budget", async () => {
    const r = await worker(["context", "planner", "--json", "--repo", repo.dir], { cwd: repo.dir });
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf<ContextJson>(r);
    expect(out.status).toBe("found");
    expect(out.scope.memory_version).toBeGreaterThanOrEqual(2);
    expect(out.scope.remote_store.asked).toBe(false);
    const texts = out.items.map((i) => i.text);
    expect(texts).toContain("The planner caches plans per issue");
    expect(texts).toContain("Ada reviews every planner change");
    expect(texts.some((t) => t.includes("Docs pages"))).toBe(false);
    // No word of the topic, linked through the planner's file: it comes in by the graph.
    const neighbour = out.items.find((i) => i.text === "Cache entries expire after one hour");
    expect(neighbour?.via).toBe("neighbour");
    expect(neighbour?.shared).toContain("file:src/engine/plan.ts");
    expect(encode(out.markdown).length).toBe(out.tokens);
    expect(out.tokens).toBeLessThanOrEqual(2000);

    // Linked through a shared file only: the neighbour comes in by the graph, not the words.
    const byFile = jsonOf<ContextJson>(
      await worker(["context", "src/legacy/old.ts", "--json", "--repo", repo.dir], {
        cwd: repo.dir,
      }),
    );
    expect(byFile.items.map((i) => i.text)).toContain("The legacy loader reads only v1 configs");

    const tight = jsonOf<ContextJson>(
      await worker(["context", "planner", "--max-tokens", "40", "--json", "--repo", repo.dir], {
        cwd: repo.dir,
      }),
    );
    expect(tight.tokens).toBeLessThanOrEqual(40);
    expect(encode(tight.markdown).length).toBeLessThanOrEqual(40);
    expect(tight.items.length).toBeLessThan(out.items.length);
  });

  it("tells an empty memory apart from a topic that matches nothing", async () => {
    const none = jsonOf<ContextJson>(
      await worker(["context", "kubernetes", "--json", "--repo", repo.dir], { cwd: repo.dir }),
    );
    expect(none.status).toBe("no_match");
    const empty = dirs.repo();
    expect((await director(["init", "--repo", empty.dir], { cwd: empty.dir })).code).toBe(0);
    const r = jsonOf<ContextJson>(
      await worker(["context", "planner", "--json", "--repo", empty.dir], { cwd: empty.dir }),
    );
    expect(r.status).toBe("memory_empty");
  });

  it("names the file, line and field of a bad registry", async () => {
    const bad = dirs.repo();
    expect((await director(["init", "--repo", bad.dir], { cwd: bad.dir })).code).toBe(0);
    bad.write(
      "config/registry.toml",
      '[[people]]\nid = "ok"\nname = "Ok"\n\n[[people]]\nid = "bad id!"\nname = "x"\n',
    );
    const r = await worker(["context", "x", "--repo", bad.dir], { cwd: bad.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\/registry\.toml:5: people\.1\.id/);
  });
});
