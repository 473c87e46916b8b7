/**
 * `director ingest --from-git`: commit history and its trailers become events through the
 * normal ingest path, deduplicated by commit, and then engrams.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import {
  commitEnvelopes,
  type GitCommitInfo,
  parseCommitMessage,
  topFolders,
  trailerNotes,
} from "../../src/core/history/git-events.js";
import { ingestGitRange, readGitRange } from "../../src/director/from-git.js";
import { initRepository } from "../../src/director/init.js";
import { runCycle } from "../../src/director/run.js";
import { Envelope, PAYLOAD_SCHEMAS } from "../../src/schema/envelope.js";
import { childEnv, describeResult, runDirector as director } from "../support/bins.js";
import { readEngrams } from "../support/memory.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

let template: TempRepo;
const shas: string[] = [];

function commit(repo: TempRepo, files: Record<string, string>, message: string): string {
  for (const [path, text] of Object.entries(files)) repo.write(path, text);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "-m", message]);
  return git(repo.dir, ["rev-parse", "HEAD"]).trim();
}

beforeAll(async () => {
  template = dirs.repo("engram-from-git-");
  template.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  initRepository(await openContext({ repo: template.dir }));
  shas.push(commit(template, {}, "init engram"));
  shas.push(
    commit(
      template,
      { "src/parser.ts": "export {};\n", "docs/parser.md": "# parser\n" },
      "Add the parser\n\nThe parser reads the config grammar.\n\n" +
        "decision: use a hand-written parser\nRationale: the grammar is tiny\n" +
        "Lesson: fuzz the tokenizer early\nSigned-off-by: A Person <a@example.invalid>",
    ),
  );
  shas.push(
    commit(template, { "build/ci.yml": "on: push\n" }, "Fix the build\n\nSigned-off-by: A <a@x>"),
  );
  shas.push(
    commit(
      template,
      { "src/cache.ts": "export {};\n" },
      "Add a cache\n\nQuestion: should the cache be shared?",
    ),
  );
});

describe("ingest --from-git", () => {
  it("ingests one event per commit plus one per trailer, and deduplicates a re-run", async () => {
    const repo = dirs.copy(template);
    const ctx = await openContext({ repo: repo.dir });
    const first = await ingestGitRange(ctx, "HEAD");
    // init 1 + parser (1 + decision + lesson) + build 1 + cache (1 + question)
    expect(first).toMatchObject({ commits: 4, events: 7, accepted: 7, quarantined: 0 });
    const again = await ingestGitRange(ctx, "HEAD");
    expect(again).toMatchObject({ accepted: 0, duplicates: 7 });

    process.env.SOURCE_DATE_EPOCH = "1795000000";
    try {
      await runCycle(ctx, { force: true });
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
    const engrams = readEngrams(repo.dir).map((e) => e.engram);
    const decisions = engrams.flatMap((e) => e.decisions);
    expect(decisions).toContainEqual({
      title: "use a hand-written parser",
      rationale: "the grammar is tiny",
    });
    const facts = engrams.flatMap((e) => e.facts);
    expect(facts).toContain("Lesson: fuzz the tokenizer early");
    // Commits are summarised per area, not listed; a content-free subject is only counted.
    expect(facts).toContain('Area src: 1 commit, 2026 (1 feature); latest: "Add a cache"');
    expect(facts.some((f) => f.includes("Fix the build"))).toBe(false);
    expect(facts).toContain("1 commit with a content-free subject, 2026");
    const links = engrams.flatMap((e) => e.links as { type: string; ref: string }[]);
    expect(links).toContainEqual({ type: "commit", ref: shas[1] });
    // A commit link stands for its files: git has them.
    expect(links.filter((l) => l.type === "file")).toEqual([]);
    // Still duplicates once compacted: the buffer remembers the keys it compacted.
    expect(await ingestGitRange(ctx, "HEAD")).toMatchObject({ accepted: 0, duplicates: 7 });
  });

  it("reads A..B without A's history, oldest first", async () => {
    const range = await readGitRange(template.dir, "HEAD~2..HEAD");
    expect(range.map((c) => c.sha)).toEqual([shas[2], shas[3]]);
    expect(range[0]?.files).toEqual(["build/ci.yml"]);
    const all = await readGitRange(template.dir, "main");
    expect(all.map((c) => c.sha)).toEqual(shas);
    expect(all[0]?.files).toContain("memory/catalog.json");

    // A side branch: main..side is only the side commit, even with main moved on.
    const repo = dirs.copy(template);
    git(repo.dir, ["checkout", "-q", "-b", "side", shas[1] as string]);
    const side = commit(repo, { "lib/x.ts": "x\n" }, "Side work");
    git(repo.dir, ["checkout", "-q", "main"]);
    git(repo.dir, ["merge", "-q", "--no-ff", "-m", "Merge side", "side"]);
    const merge = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    expect((await readGitRange(repo.dir, `${shas[3]}..main`)).map((c) => c.sha)).toEqual([
      side,
      merge,
    ]);
    expect((await readGitRange(repo.dir, "main..side")).map((c) => c.sha)).toEqual([]);
    const mergeInfo = (await readGitRange(repo.dir, "HEAD^..HEAD")).at(-1);
    expect(mergeInfo?.files).toEqual(["lib/x.ts"]);
  });

  it("matches git rev-list A..B on merges with clocks going backwards", async () => {
    const repo = dirs.repo("engram-revlist-");
    const at = (message: string, epoch: number, ...merge: string[]): string => {
      const env = childEnv({
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_DATE: `@${epoch} +0000`,
        GIT_COMMITTER_DATE: `@${epoch} +0000`,
      });
      const run = (args: string[]) =>
        execFileSync("git", args, { cwd: repo.dir, env, encoding: "utf8", stdio: "pipe" });
      if (merge.length > 0) {
        run(["merge", "-q", "--no-ff", "-s", "ours", "-m", message, ...merge]);
      } else {
        repo.write("f.txt", message);
        run(["add", "-A"]);
        run(["commit", "-q", "-m", message]);
      }
      return run(["rev-parse", "HEAD"]).trim();
    };
    const c1 = at("c1", 1000);
    const c2 = at("c2", 2000);
    git(repo.dir, ["checkout", "-q", "-b", "x", c1]);
    const x1 = at("x1", 500);
    const x2 = at("x2", 3000);
    git(repo.dir, ["checkout", "-q", "-b", "y", x1]);
    const y1 = at("y1", 100);
    git(repo.dir, ["checkout", "-q", "main"]);
    const c3 = at("c3", 1500);
    const m1 = at("m1", 4000, "x");
    const m2 = at("m2", 4000, "y");
    const all = [c1, c2, x1, x2, y1, c3, m1, m2];
    for (const a of all) {
      for (const b of all) {
        const expected = git(repo.dir, ["rev-list", `${a}..${b}`])
          .split("\n")
          .filter(Boolean);
        const got = (await readGitRange(repo.dir, `${a}..${b}`)).map((c) => c.sha);
        expect(got.sort(), `${a}..${b}`).toEqual(expected.sort());
      }
    }
  });

  it("names a range that does not resolve", async () => {
    const ctx = await openContext({ repo: template.dir });
    await expect(ingestGitRange(ctx, "nope..HEAD")).rejects.toThrow(/nope/);
    await expect(ingestGitRange(ctx, "HEAD...main")).rejects.toThrow(/A\.\.\.B/);
  });

  it("runs through the bin, exactly one of FILE or --from-git", async () => {
    const repo = dirs.copy(template);
    const r = await director(["ingest", "--from-git", "HEAD~1..HEAD", "--json"], {
      cwd: repo.dir,
    });
    expect(r.code, describeResult(r)).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({
      range: "HEAD~1..HEAD",
      commits: 1,
      events: 2,
      accepted: 2,
      note_lines: 0,
    });
    // `--json` keys are snake_case like every other command's, at any depth.
    const keys = (v: unknown): string[] =>
      v !== null && typeof v === "object"
        ? Object.entries(v).flatMap(([k, x]) => [k, ...keys(x)])
        : [];
    expect(keys(json).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    const both = await director(["ingest", "x.ndjson", "--from-git", "HEAD"], { cwd: repo.dir });
    expect(both.code, describeResult(both)).toBe(2);
    const none = await director(["ingest"], { cwd: repo.dir });
    expect(none.code, describeResult(none)).toBe(2);
  });
});

describe("commit messages to envelopes (pure)", () => {
  it("reads trailers from the last paragraph only, keys case-insensitive", () => {
    const m = parseCommitMessage(
      "Subject line\n\nDecision: not a trailer, prose goes on\nhere.\n\n" +
        "DECISION: keep it\n  across two lines\nRationale: simple\nrationale: and short\nFact: x",
    );
    expect(m.subject).toBe("Subject line");
    expect(m.body).toContain("not a trailer");
    expect(trailerNotes(m.trailers)).toEqual([
      { kind: "decision", text: "keep it across two lines", rationale: "simple and short" },
      { kind: "fact", text: "x" },
    ]);
    expect(parseCommitMessage("Subject\n\nbody text\nDecision: x").trailers).toEqual([]);
    expect(trailerNotes(parseCommitMessage("S\n\nRationale: orphan").trailers)).toEqual([]);
  });

  it("builds valid envelopes with stable ids, at most 32 links", () => {
    const files = Array.from({ length: 40 }, (_, i) => `pkg${i % 3}/f${i}.ts`);
    const info: GitCommitInfo = {
      sha: "a".repeat(40),
      message: "Big change\n\nLesson: small commits",
      committedAt: 1795000000,
      files,
    };
    const envs = commitEnvelopes(info, 5);
    expect(envs.map((e) => [e.event_id, e.seq])).toEqual([
      [`git:${"a".repeat(40)}`, 5],
      [`git:${"a".repeat(40)}:1`, 6],
    ]);
    expect(envs[0]?.sent_at).toBe("2026-11-18T11:06:40.000Z");
    expect(envs[0]?.sender).toEqual({ role: "operator", id: "git-history" });
    for (const env of envs) {
      const parsed = Envelope.parse(env);
      expect(PAYLOAD_SCHEMAS[parsed.message_type].safeParse(parsed.payload).success).toBe(true);
    }
    const links = envs[0]?.payload.links as { type: string }[];
    expect(links).toHaveLength(32);
    expect(links[0]).toEqual({ type: "commit", ref: "a".repeat(40) });
    expect(topFolders(files)).toEqual(["pkg0", "pkg1", "pkg2"]);
    expect(commitEnvelopes(info, 5)).toEqual(envs);
  });
});
