/**
 * A bootstrap from a real history: `director ingest --from-git` then one ordinary
 * `director run` turns a generated project history of 200+ commits into knowledge (decisions
 * with their reasons, lessons, per-area summaries, noise counted) rather than a commit log.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestGitRange } from "../../src/director/from-git.js";
import { initRepository } from "../../src/director/init.js";
import { type RunResult, runCycle } from "../../src/director/run.js";
import { type HistoryFixture, writeHistoryFixture } from "../support/history-fixture.js";
import { readEngrams } from "../support/memory.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

interface Bootstrap {
  dir: string;
  ingested: Awaited<ReturnType<typeof ingestGitRange>>;
  run: RunResult;
  memoryMd: string;
  decisions: { title: string; rationale: string }[];
  facts: string[];
  links: { type: string; ref: string }[];
}

/** ingest --from-git RANGE, then one `director run` (not forced), default configuration. */
async function bootstrap(dir: string, range: string): Promise<Bootstrap> {
  const ctx = await openContext({ repo: dir });
  initRepository(ctx);
  const ingested = await ingestGitRange(ctx, range);
  process.env.SOURCE_DATE_EPOCH = "1795000000";
  let run: RunResult;
  try {
    run = await runCycle(ctx);
  } finally {
    delete process.env.SOURCE_DATE_EPOCH;
  }
  const engrams = readEngrams(dir).map((e) => e.engram);
  return {
    dir,
    ingested,
    run,
    memoryMd: readFileSync(join(dir, "MEMORY.md"), "utf8"),
    decisions: engrams.flatMap((e) => e.decisions),
    facts: engrams.flatMap((e) => e.facts),
    links: engrams.flatMap((e) => e.links as { type: string; ref: string }[]),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("a bootstrap from a generated history of 200+ commits", () => {
  let fixture: HistoryFixture;
  let b: Bootstrap;

  beforeAll(async () => {
    const repo = dirs.repo("engram-bootstrap-");
    fixture = writeHistoryFixture(repo.dir, 200);
    b = await bootstrap(repo.dir, "main");
  });

  it("reads every commit and compacts the whole range in the next run, window or not", () => {
    expect(fixture.commits).toBeGreaterThanOrEqual(200);
    expect(b.ingested).toMatchObject({ commits: fixture.commits, quarantined: 0 });
    // The default newest window (200 events) protects a live swarm, not a history import.
    expect(b.run.compaction).toBe("history");
    expect(b.run.compacted_events).toBe(b.ingested.accepted);
    expect(b.run.buffer.events).toBe(0);
  });

  it("turns at least 90% of labelled decisions into engram decisions, with their reasons", () => {
    const found = fixture.decisions.filter((want) =>
      b.decisions.some(
        (d) =>
          d.title.toLowerCase().includes(want.needle.toLowerCase()) &&
          (want.rationale === undefined || d.rationale.includes(want.rationale)),
      ),
    );
    const missing = fixture.decisions.filter((d) => !found.includes(d)).map((d) => d.needle);
    expect(found.length / fixture.decisions.length, missing.join("\n")).toBeGreaterThanOrEqual(0.9);
    // "(#287)" in a subject is a link to the pull request (the newest decisions' links fit).
    expect(b.links).toContainEqual({ type: "pr", ref: "#287" });
    // No decision that was not labelled: the classifier does not invent choices.
    const extra = b.decisions.filter(
      (d) => !fixture.decisions.some((w) => d.title.toLowerCase().includes(w.needle.toLowerCase())),
    );
    expect(extra).toEqual([]);
  });

  it("counts noise without remembering it: summary lines with years, no subject anywhere", () => {
    const all = `${b.memoryMd}\n${b.facts.join("\n")}\n${b.decisions.map((d) => `${d.title} ${d.rationale}`).join("\n")}`;
    for (const subject of fixture.noise) {
      expect(all, subject).not.toMatch(
        new RegExp(`(^|[^\\w])${escapeRegExp(subject)}($|[^\\w])`, "m"),
      );
    }
    expect(b.facts).toContainEqual(expect.stringMatching(/^\d+ dependency bumps, 2019-202\d$/));
    expect(b.facts).toContainEqual(expect.stringMatching(/^\d+ merge commits, 2019-202\d$/));
    expect(b.facts).toContainEqual(
      expect.stringMatching(/^\d+ release and version commits, 2019-202\d$/),
    );
    expect(b.facts).toContainEqual(
      expect.stringMatching(/^\d+ commits with content-free subjects, 2019-202\d$/),
    );
    expect(b.memoryMd).not.toContain("Commit:");
  });

  it("keeps lessons from reverts and regression fixes, and summarises changes per area", () => {
    for (const lesson of fixture.lessons) {
      expect(
        b.facts.some((f) => f.startsWith("Lesson: ") && f.includes(lesson)),
        lesson,
      ).toBe(true);
    }
    expect(b.facts).toContainEqual(expect.stringMatching(/^Lesson: Reverted ".+": .*because/));
    expect(b.facts).toContainEqual(expect.stringMatching(/^Area src: \d+ commits, 2019-202\d \(/));
    expect(b.facts).toContainEqual(expect.stringMatching(/^Area packages\/web: /));
    expect(b.facts).toContainEqual(expect.stringMatching(/^Convention: Rename /));
  });

  it("puts the newest decisions first in MEMORY.md, within its budgets", () => {
    const newest = [...fixture.decisions].sort((x, y) => y.at - x.at).slice(0, 10);
    const md = b.memoryMd.toLowerCase();
    const positions = newest.map((d) => md.indexOf(d.needle.toLowerCase()));
    expect(
      positions.every((p) => p >= 0),
      newest.map((d) => d.needle).join("\n"),
    ).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    const oldest = [...fixture.decisions].sort((x, y) => x.at - y.at)[0];
    const end = md.indexOf("\n## ", md.indexOf("## decisions") + 1);
    const decisionsEnd = end === -1 ? md.length : end;
    const oldestAt = md.indexOf(oldest?.needle.toLowerCase() ?? "");
    expect(oldestAt === -1 || oldestAt > (positions.at(-1) as number)).toBe(true);
    expect(decisionsEnd).toBeGreaterThan(positions.at(-1) as number);
    expect(b.run.focus?.items).toBeLessThanOrEqual(60);
    expect(b.run.focus?.bytes).toBeLessThanOrEqual(16 * 1024);
  });
});

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("a bootstrap from this repository's own history", () => {
  it.skipIf(!existsSync(join(ROOT, ".git")))(
    "remembers decisions and summaries, never a commit log, in a clone of this repository",
    async () => {
      const dir = dirs.dir("engram-self-");
      git(dir, ["clone", "-q", "--no-hardlinks", ROOT, "clone"]);
      const clone = join(dir, "clone");
      // From scratch: the memory this repository already keeps is not the bootstrap's.
      for (const path of ["memory", "MEMORY.md", "config"]) {
        rmSync(join(clone, path), { recursive: true, force: true });
      }
      const b = await bootstrap(clone, "HEAD");
      expect(b.ingested.commits).toBeGreaterThan(50);
      expect(b.run.buffer.events).toBe(0);
      // No commit listed (an area quoting a subject that says "Commit:" is not one).
      expect(b.memoryMd).not.toMatch(/^- Commit:/m);
      // Every history fact is a summary or a note, never one commit's subject.
      const bullets = b.memoryMd.split("\n").filter((l) => l.startsWith("- "));
      expect(bullets.length).toBeGreaterThan(0);
      expect(b.facts.some((f) => /^Area \S+: \d+ commits?, /.test(f))).toBe(true);
    },
  );
});
