/**
 * A history import's pull request (issue 37): each decision names the commit it was read
 * from and is dated by it (the engram's window is the import's, not the commit's), newest
 * first, under the commits' date range.
 */

import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, describeResult, director, jsonOf } from "../support/bins.js";
import { proposeRun, setup } from "../support/proposals.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

interface RunJson {
  proposal: { would_open: { title: string; body: string } | null };
}

function commitAt(repo: TempRepo, path: string, message: string, date: string): string {
  repo.write(path, `${message}\n`);
  git(repo.dir, ["add", "-A"]);
  execFileSync(
    "git",
    [
      "-c",
      "user.name=A Dev",
      "-c",
      "user.email=dev@example.invalid",
      "commit",
      "-q",
      "-m",
      message,
    ],
    {
      cwd: repo.dir,
      env: childEnv({
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
      }),
      stdio: "ignore",
    },
  );
  return git(repo.dir, ["rev-parse", "HEAD"]).trim();
}

describe("a history import's pull request", () => {
  it("names each decision's commit and its day, newest first, under the commits' range", async () => {
    const { clone } = await setup(dirs);
    const older = commitAt(
      clone,
      "src/logger.ts",
      "Switch the logger from winston to pino\n\nbecause pino writes JSON without a transport",
      "2021-03-04T10:00:00Z",
    );
    const newer = commitAt(
      clone,
      "src/cache.ts",
      "Switch the cache from memcached to Redis\n\nbecause memcached lost keys on restart",
      "2024-06-07T10:00:00Z",
    );
    const r = await director(["ingest", "--from-git", "HEAD"], { cwd: clone.dir });
    expect(r.code, describeResult(r)).toBe(0);
    const run = await proposeRun(clone);
    expect(run.code, describeResult(run)).toBe(0);
    const out = jsonOf<RunJson>(run).proposal;
    const body = out.would_open?.body ?? "";
    expect(body).toContain(
      `**Switch the cache from memcached to Redis** — why: because memcached lost keys on restart (by \`git-history\` on 2024-06-07, commit \`${newer.slice(0, 12)}\`)`,
    );
    expect(body).toContain(
      `**Switch the logger from winston to pino** — why: because pino writes JSON without a transport (by \`git-history\` on 2021-03-04, commit \`${older.slice(0, 12)}\`)`,
    );
    expect(body).toContain(
      "Read from the repository's history: commits of 2021-03-04 to 2024-06-07, newest first.",
    );
    // Newest first.
    expect(body.indexOf("memcached to Redis**")).toBeLessThan(body.indexOf("winston to pino**"));
  });
});
