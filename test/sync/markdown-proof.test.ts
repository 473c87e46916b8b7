import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/schema/config.js";
import { GraphitiTarget } from "../../src/sync/targets/graphiti-target.js";
import { assertBuilt, director, succeeded } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { waitUntil } from "../support/wait.js";

const EPOCH = 1_767_607_200; // 2026-01-05T10:00:00Z
const dirs = new TempDirs();
let server: FakeGraphiti | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

/** The long file's body: 12,000 characters in paragraphs, none of them a secret. */
const LONG = Array.from({ length: 120 }, (_, i) => `Paragraph ${i}: ${"observation ".repeat(8)}`)
  .join("\n\n")
  .slice(0, 12_000);

/** 20 memory files: 3 with malformed frontmatter, 2 with none, one long, one about apt-28. */
function writeNotes(repo: TempRepo): void {
  for (let i = 0; i < 20; i++) {
    const name = `notes/learning/note-${String(i).padStart(2, "0")}.md`;
    let text = `---\ncapture_type: LEARNING\nrating: ${i % 10}\ntags: [t${i}]\ntimestamp: 2026-01-0${1 + (i % 5)}T10:00:00Z\n---\n# Lesson ${i}\n\nWhat we learned in step ${i}.\n`;
    if (i < 3)
      text = `---\ncapture_type: LEARNING\ntags: [broken, ${i}\n---\n# Broken ${i}\n\nBody ${i} survives.\n`;
    if (i === 3 || i === 4) text = `# No frontmatter ${i}\n\nPlain body ${i}.\n`;
    if (i === 5) text = `---\ncapture_type: RESEARCH\n---\n${LONG}`;
    if (i === 6)
      text =
        "---\ntitle: apt-28 renamed its loader\nsource: threat report\n---\nThe loader moved.\n";
    repo.write(name, text);
  }
  // engram's own view, in the same folder: never read back in.
  repo.write(
    "notes/learning/MEMORY.md",
    "<!-- engram: generated from memory/catalog.json version 1 -->\n",
  );
}

async function setUp(url: string, extra: string[] = []): Promise<TempRepo> {
  const repo = dirs.repo("engram-md-proof-");
  succeeded(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(
    [
      "[sync]",
      "retry_delays_seconds = [60, 60, 60, 60]",
      "[sync.graphiti]",
      `url = "${url}"`,
      "confirm_wait_seconds = 3",
      "retries = 1",
      "[[sources.markdown.folders]]",
      'path = "notes/learning"',
      "[[sources.markdown.folders]]",
      'path = "notes/missing"',
      'kind = "research"',
      ...extra,
      "",
    ].join("\n"),
  );
  writeNotes(repo);
  return repo;
}

function syncAt(repo: TempRepo, minutes: number) {
  const env = { SOURCE_DATE_EPOCH: String(EPOCH + minutes * 60) };
  return async (...args: string[]) => {
    const r = succeeded(
      await director(["sync", "run", "--target", "graphiti", ...args, "--json"], {
        cwd: repo.dir,
        env,
      }),
    );
    return { json: JSON.parse(r.stdout), stderr: r.stderr };
  };
}

describe("markdown memory files to the knowledge-graph stand-in (the Proof)", () => {
  it("syncs 20 files twice: dropped episode retried, long one in parts, second run sends nothing", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = await setUp(server.url);
    server.dropNext();

    const first = await syncAt(repo, 0)();
    expect(first.json.stats).toEqual({
      processed: 20,
      succeeded: 19,
      failed: 1,
      deferred: 0,
      skipped: 0,
    });
    expect(first.json.markdown).toMatchObject({ files: 20, excluded: 1, unchanged: 0 });
    const warnings: string[] = first.json.markdown.warnings;
    expect(warnings.filter((w) => w.includes("malformed YAML frontmatter"))).toHaveLength(3);
    expect(warnings.filter((w) => w.includes("no YAML frontmatter"))).toHaveLength(2);
    expect(warnings).toContain("[sources.markdown] notes/missing: folder not found; skipped");
    expect(first.stderr).toContain("folder not found");

    // The dropped episode stays pending until get_episodes lists it; the next run sends it.
    const second = await syncAt(repo, 2)();
    expect(second.json.stats).toEqual({
      processed: 1,
      succeeded: 1,
      failed: 0,
      deferred: 0,
      skipped: 19,
    });
    const calls = server.calls.length;
    expect(calls).toBe(20 + 2 + 1); // 20 files, 2 more parts of the long one, 1 resend
    expect(server.calls.every((c) => c.uuid === null)).toBe(true);
    expect(server.failures).toEqual([]);

    const third = await syncAt(repo, 4)();
    expect(third.json.stats).toEqual({
      processed: 0,
      succeeded: 0,
      failed: 0,
      deferred: 0,
      skipped: 20,
    });
    expect(server.calls.length).toBe(calls);

    // 22 episodes, once each: the long file complete in three parts, in order.
    expect(server.episodes).toHaveLength(22);
    const parts = server.episodes
      .filter((e) => e.name.startsWith("RESEARCH: Paragraph 0") || e.name.includes("(part "))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(parts.map((p) => p.name.slice(-10))).toEqual(["(part 1/3)", "(part 2/3)", "(part 3/3)"]);
    expect(parts.map((p) => p.content).join("")).toBe(LONG.trim());
    expect(parts.every((p) => p.content.length <= 5000)).toBe(true);
    const apt = server.episodes.find((e) => e.name === "apt-28 renamed its loader");
    expect(apt?.source_description).toContain("Source: threat report");
    expect(apt?.group_id).toBe("learning");
    // FalkorDB reads Lucene syntax: the query is escaped, and still finds apt-28.
    const falkor = new GraphitiTarget({
      config: { ...defaultConfig().sync.graphiti, url: server.url, backend: "falkordb" },
    });
    const found = (await falkor.searchNodes("apt-28", ["learning"])) as { nodes: unknown[] };
    await falkor.close();
    expect(server.searches.at(-1)?.query).toBe("apt\\-28");
    expect(found.nodes).toHaveLength(1);
    const broken = server.episodes.find((e) => e.content.includes("Body 1 survives."));
    expect(broken?.name).toBe("Broken 1");
  });

  it("--dry-run lists changes with no call; the run then updates, adds and archives; --all re-sends", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = await setUp(server.url);
    await syncAt(repo, 0)();
    const episodes = server.episodes.length;

    repo.write("notes/learning/note-10.md", "---\nrating: 2\n---\n# Lesson 10\n\nRevised.\n");
    repo.write("notes/learning/new.md", "# Fresh\n\nA new note.\n");
    unlinkSync(repo.path("notes/learning/note-11.md"));
    const requests = server.requests;
    const dry = await syncAt(repo, 2)("--dry-run");
    expect(server.requests).toBe(requests);
    const planned = dry.json.would_send.map(
      (s: { action: string; file: string | null }) => `${s.action} ${s.file ?? ""}`,
    );
    expect(planned.sort()).toEqual([
      "create notes/learning/new.md",
      "remove ",
      "update notes/learning/note-10.md",
    ]);

    const run = await syncAt(repo, 2)();
    expect(run.json.stats).toMatchObject({ processed: 3, succeeded: 3, failed: 0 });
    expect(server.episodes).toHaveLength(episodes); // one added, one removed, one replaced
    expect(server.episodes.some((e) => e.content.endsWith("Revised."))).toBe(true);
    expect(server.episodes.some((e) => e.name === "Lesson 11")).toBe(false);

    const calls = server.calls.length;
    const all = await syncAt(repo, 4)("--all");
    expect(all.json.stats).toMatchObject({ processed: 20, succeeded: 20, failed: 0 });
    expect(server.calls.length).toBe(calls + 22);
    expect(server.episodes).toHaveLength(episodes);
  });

  it("--hook returns whatever the server does; the next run delivers everything once", async () => {
    const probe = new FakeGraphiti();
    await probe.start();
    const url = probe.url;
    const port = probe.port;
    await probe.stop();
    const repo = await setUp(url);
    const lock = join(repo.dir, ".engram", "sync", "graphiti", "hook.lock");

    // Another hook holds the lock (this live process): the second exits at once, saying so.
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, `${process.pid}\n`);
    const busy = succeeded(
      await director(["sync", "run", "--target", "graphiti", "--hook"], { cwd: repo.dir }),
    );
    expect(busy.stdout).toContain(`another sync hook is syncing graphiti (pid ${process.pid})`);
    unlinkSync(lock);

    // Server down: the hook returns, the detached run finds it down and keeps everything queued.
    const hook = succeeded(
      await director(["sync", "run", "--target", "graphiti", "--hook", "--json"], {
        cwd: repo.dir,
      }),
    );
    expect(JSON.parse(hook.stdout)).toMatchObject({ started: true });
    await waitUntil(() => !existsSync(lock), "the detached sync run to release its hook lock");
    const log = readFileSync(join(repo.dir, ".engram", "sync", "graphiti", "hook.log"), "utf8");
    expect(log).toContain("local-only");

    server = new FakeGraphiti();
    await server.start(port);
    const next = await syncAt(repo, 1)();
    expect(next.json.stats).toMatchObject({ processed: 20, succeeded: 20, failed: 0 });
    expect(server.calls).toHaveLength(22);
    const again = await syncAt(repo, 2)();
    expect(again.json.stats.processed).toBe(0);
    expect(server.calls).toHaveLength(22);
  });
});
