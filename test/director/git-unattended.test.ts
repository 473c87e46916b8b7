/**
 * The git children of `director run` never wait on someone who is not there: stdin closed,
 * terminal prompts off, the repository of their folder, and a bound on how long they may
 * take. A `director run` of cadence.test.ts once hung 270 s with no output on a loaded
 * machine; a git waiting for ever was one way to get there. A fake `git` first on PATH
 * records how it was started and then misbehaves as the test asks, before running the real
 * one.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeResult, director, type Env } from "../support/bins.js";
import { proposeRun, remember, setup } from "../support/proposals.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const REAL_GIT = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();

/** A folder holding a `git` that logs each start to `log`, then acts as `$FAKE_GIT_MODE`. */
function fakeGit(): { bin: string; log: string } {
  const bin = dirs.dir("engram-fake-git-");
  const log = join(bin, "starts.log");
  const script = [
    "#!/bin/sh",
    // Node gives a child's "pipe" a socket: anything but a character device (/dev/null) is open.
    `if [ -c /dev/stdin ]; then stdin=closed; else stdin=open; fi`,
    `echo "stdin=$stdin prompt=\${GIT_TERMINAL_PROMPT-unset} git_dir=\${GIT_DIR-unset} git $*" >> "${log}"`,
    'case "$FAKE_GIT_MODE" in',
    // Waits for the end of its stdin, as a git asking for input would wait for an answer.
    "  read-stdin) cat > /dev/null ;;",
    // Never answers (killed with the Director's git child, exec keeps it that one process).
    "  block) exec sleep 600 ;;",
    // A remote that accepts the push and then says nothing.
    '  block-push) if [ "$1" = push ]; then exec sleep 600; fi ;;',
    "esac",
    `exec "${REAL_GIT}" "$@"`,
    "",
  ].join("\n");
  writeFileSync(join(bin, "git"), script);
  chmodSync(join(bin, "git"), 0o755);
  return { bin, log };
}

async function initialized(): Promise<TempRepo> {
  const repo = dirs.repo("engram-git-unattended-");
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  const init = await director(["init"], { cwd: repo.dir });
  expect(init.code, describeResult(init)).toBe(0);
  // An idle run answers "is the state folder ignored?" from .gitignore where that is certain,
  // starting no git; a negation leaves it to git, so each run here has git children.
  writeFileSync(
    join(repo.dir, ".gitignore"),
    `${readFileSync(join(repo.dir, ".gitignore"), "utf8")}!keep-this.log\n`,
  );
  return repo;
}

function withFakeGit(bin: string, extra: Env): Env {
  return { PATH: [bin, process.env.PATH].join(delimiter), ...extra };
}

describe("director run's git children", () => {
  it("start with stdin closed, terminal prompts off and no repository named by the environment", async () => {
    const repo = await initialized();
    const fake = fakeGit();
    const r = await director(["run", "--json"], {
      cwd: repo.dir,
      // A GIT_DIR left in the environment (a git hook running engram) names another repository.
      env: withFakeGit(fake.bin, { FAKE_GIT_MODE: "record", GIT_DIR: join(repo.dir, "nowhere") }),
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(existsSync(fake.log)).toBe(true);
    const starts = readFileSync(fake.log, "utf8").trim().split("\n");
    expect(starts.length).toBeGreaterThan(0);
    for (const line of starts) {
      expect(line).toMatch(/^stdin=closed prompt=0 git_dir=unset git /);
    }
  });

  it("finishes when a git waits for the end of its stdin", async () => {
    const repo = await initialized();
    const fake = fakeGit();
    const r = await director(["run", "--json"], {
      cwd: repo.dir,
      env: withFakeGit(fake.bin, { FAKE_GIT_MODE: "read-stdin" }),
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(JSON.parse(r.stdout).catalog_version).toBe(0);
  });

  it("stops with an error naming the git that stayed silent for ENGRAM_GIT_TIMEOUT_MS", async () => {
    const repo = await initialized();
    const fake = fakeGit();
    const r = await director(["run", "--json"], {
      cwd: repo.dir,
      env: withFakeGit(fake.bin, { FAKE_GIT_MODE: "block", ENGRAM_GIT_TIMEOUT_MS: "1000" }),
    });
    expect(r.code, describeResult(r)).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: "state", exit_code: 3 });
    expect(r.stderr).toMatch(
      /git (ls-files|check-ignore) .*\(in .*\) did not finish \(killed\), silent for 1 s: .*ENGRAM_GIT_TIMEOUT_MS/,
    );
    // Nothing was done under a lock it left behind: the next run, with git back, works.
    const again = await director(["run", "--json"], { cwd: repo.dir });
    expect(again.code, describeResult(again)).toBe(0);
  });

  it("with --pr, every git it starts (pushes included) has terminal prompts off and no GIT_DIR", async () => {
    const { clone } = await setup(dirs);
    await remember(clone, ["pushes never ask for a password"]);
    const fake = fakeGit();
    const r = await director(["run", "--pr", "--force", "--json"], {
      cwd: clone.dir,
      env: withFakeGit(fake.bin, { FAKE_GIT_MODE: "record", GIT_DIR: clone.path("nowhere") }),
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(JSON.parse(r.stdout).proposal.pushed).toBe(true);
    const starts = readFileSync(fake.log, "utf8").trim().split("\n");
    expect(starts.some((line) => / git push /.test(line))).toBe(true);
    for (const line of starts) expect(line).toMatch(/^stdin=\w+ prompt=0 git_dir=unset git /);
    // The same run without the fake git: nothing else differs.
    expect((await proposeRun(clone)).code).toBe(0);
  });

  it("with --pr, a push that stalls stops the run as the remote's failure, and the next run pushes", async () => {
    const { origin, clone } = await setup(dirs);
    await remember(clone, ["a stalled push is retried by the next run"]);
    const fake = fakeGit();
    const r = await director(["run", "--pr", "--force", "--json"], {
      cwd: clone.dir,
      env: withFakeGit(fake.bin, {
        FAKE_GIT_MODE: "block-push",
        ENGRAM_GIT_REMOTE_TIMEOUT_MS: "3000",
      }),
    });
    expect(r.code, describeResult(r)).toBe(69);
    expect(r.stderr).toMatch(
      /git (push|ls-remote|fetch) .*no answer from the remote for 3 s: stopped \(ENGRAM_GIT_REMOTE_TIMEOUT_MS\)/,
    );
    const again = await proposeRun(clone);
    expect(again.code, describeResult(again)).toBe(0);
    expect(git(origin, ["log", "-1", "--format=%s", "engram/memory"])).toMatch(/engram/i);
  });

  it("refuses an ENGRAM_GIT_TIMEOUT_MS that is not a number of milliseconds, naming it", async () => {
    const repo = await initialized();
    const r = await director(["run"], { cwd: repo.dir, env: { ENGRAM_GIT_TIMEOUT_MS: "soon" } });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toContain(
      'ENGRAM_GIT_TIMEOUT_MS: expected a positive number of milliseconds, got "soon"',
    );
  });
});
