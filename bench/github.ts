/**
 * Scenario: GitHub API calls per engram pull request. The real `director run --pr` runs
 * against the local GitHub-compatible server (checked against GitHub's OpenAPI description),
 * whose bare repository is also the git remote: a small and a large PR, each pushed with git
 * and committed through the Git Data API. The number of calls must not grow with the PR.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ENVELOPE_SCHEMA_VERSION } from "../src/schema/envelope.js";
import { FakeGitHub } from "../test/support/fake-github.js";
import { DIRECTOR_CLI, log, removeDir, runNode, tempDir } from "./util.js";

const TOKEN = "ghs_benchTokenForTheLocalServer000000000000";
const IDENTITY = {
  GIT_AUTHOR_NAME: "engram bench",
  GIT_AUTHOR_EMAIL: "bench@engram.invalid",
  GIT_COMMITTER_NAME: "engram bench",
  GIT_COMMITTER_EMAIL: "bench@engram.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

export interface PrCalls {
  engram_files: number;
  api_calls: number;
  via: string;
}

export interface GitHubScenarioResult {
  git_push: { small: PrCalls; large: PrCalls };
  git_data_api: { small: PrCalls; large: PrCalls };
  calls_per_pr_max: number;
  constant: boolean;
  violations: number;
  pass: boolean;
}

function git(dir: string, args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, ...IDENTITY },
    encoding: "utf8",
  });
}

function notes(count: number, offset: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(
      JSON.stringify({
        schema_version: ENVELOPE_SCHEMA_VERSION,
        message_type: "memory_note.v1",
        sent_at: "2026-11-22T12:00:00.000Z",
        sender: { role: "worker", id: `w${i % 7}` },
        seq: i,
        event_id: `bench-gh-${offset + i}`,
        payload: { kind: "fact", text: `bench fact ${offset + i}`, topics: [`topic-${i % 40}`] },
      }),
    );
  }
  return `${lines.join("\n")}\n`;
}

async function proposeOnce(
  fake: FakeGitHub,
  apiUrl: string,
  work: string,
  branch: string,
  useApi: boolean,
  events: number,
  offset: number,
): Promise<PrCalls> {
  const repo = join(work, `${branch.replace(/\W/g, "-")}-${events}`);
  mkdirSync(join(repo, "config"), { recursive: true });
  git(repo, ["init", "-q", "-b", "main"]);
  git(repo, ["remote", "add", "origin", fake.git.dir]);
  git(repo, ["fetch", "-q", "origin"]);
  git(repo, ["checkout", "-q", "-B", "main", "origin/main"]);
  writeFileSync(
    join(repo, "config", "dev.toml"),
    `[memory]\nbuffer_keep_recent_events = 0\n[github]\nhead_branch = "${branch}"\nuse_git_data_api = ${useApi}\n`,
  );
  const input = join(repo, ".engram", "bench.ndjson");
  mkdirSync(join(repo, ".engram"), { recursive: true });
  writeFileSync(input, notes(events, offset));
  const env = {
    ...process.env,
    ...IDENTITY,
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
    GITHUB_API_URL: apiUrl,
    SOURCE_DATE_EPOCH: "1800000000",
  };
  const ingest = await runNode([DIRECTOR_CLI, "ingest", input, "--json"], { cwd: repo, env });
  if (ingest.code !== 0) throw new Error(`ingest: ${ingest.stderr}`);
  const run = await runNode([DIRECTOR_CLI, "run", "--pr", "--force", "--json"], { cwd: repo, env });
  if (run.code !== 0) throw new Error(`run --pr: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as {
    engrams_written: number;
    proposal: { api_calls: number; via: string };
  };
  return {
    engram_files: result.engrams_written,
    api_calls: result.proposal.api_calls,
    via: result.proposal.via,
  };
}

export async function runGitHubScenario(): Promise<GitHubScenarioResult> {
  const work = tempDir("github");
  mkdirSync(join(work, "origin.git"));
  const fake = new FakeGitHub({ dir: join(work, "origin.git"), token: TOKEN });
  const apiUrl = await fake.start();
  try {
    const seed = join(work, "seed");
    mkdirSync(join(seed, "config"), { recursive: true });
    git(seed, ["init", "-q", "-b", "main"]);
    writeFileSync(join(seed, "config", "dev.toml"), "[memory]\nbuffer_keep_recent_events = 0\n");
    const init = await runNode([DIRECTOR_CLI, "init"], { cwd: seed });
    if (init.code !== 0) throw new Error(`init: ${init.stderr}`);
    git(seed, ["add", "-A"]);
    git(seed, ["commit", "-q", "-m", "init"]);
    git(seed, ["remote", "add", "origin", fake.git.dir]);
    git(seed, ["push", "-q", "origin", "main"]);

    const measure = async (useApi: boolean) => {
      const name = useApi ? "engram/api" : "engram/push";
      const small = await proposeOnce(fake, apiUrl, work, `${name}-small`, useApi, 3, 0);
      const large = await proposeOnce(fake, apiUrl, work, `${name}-large`, useApi, 2000, 10_000);
      log(
        `github ${useApi ? "git data api" : "git push"}: ${small.engram_files} engram(s) ${small.api_calls} calls, ${large.engram_files} engram(s) ${large.api_calls} calls`,
      );
      return { small, large };
    };
    const gitPush = await measure(false);
    const gitDataApi = await measure(true);
    const all = [gitPush.small, gitPush.large, gitDataApi.small, gitDataApi.large];
    const constant =
      gitPush.large.api_calls <= gitPush.small.api_calls &&
      gitDataApi.large.api_calls <= gitDataApi.small.api_calls;
    return {
      git_push: gitPush,
      git_data_api: gitDataApi,
      calls_per_pr_max: Math.max(...all.map((c) => c.api_calls)),
      constant,
      violations: fake.violations.length,
      pass: constant && fake.violations.length === 0 && all.every((c) => c.engram_files > 0),
    };
  } finally {
    await fake.stop();
    removeDir(work);
  }
}
