/**
 * Helpers of the GitHub adapter tests: a fresh fake GitHub and client per test (importing
 * this module registers the hooks; after each test, no request broke the OpenAPI
 * description), and commits and pull requests to make.
 */
import Bottleneck from "bottleneck";
import { afterAll, afterEach, beforeEach, expect } from "vitest";
import { createGitHub, type GitHub } from "../../src/github/client.js";
import { commitThroughApi, type PullRequestRequest } from "../../src/github/publish.js";
import { FakeGitHub } from "../support/fake-github.js";
import { TempDirs } from "../support/repo.js";

export const TOKEN = "ghs_faketoken0123456789";
export const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

export let fake: FakeGitHub;
export let gh: GitHub;
export let logs: string[];

/** Replaces the client the helpers use (an importer cannot assign `gh`). */
export function useClient(next: GitHub): void {
  gh = next;
}

/** A client for the fake: rate-limit waits scaled to milliseconds, writes not spaced. */
export function client(token = TOKEN): GitHub {
  const unspaced = () => new Bottleneck.Group({ maxConcurrent: 1, minTime: 0 });
  return createGitHub(
    { token, apiUrl: fake.url },
    {
      retryAfterBaseValue: 1,
      serverErrorBackoffBase: 1,
      write: unspaced(),
      notifications: unspaced(),
      log: (line) => logs.push(line),
    },
  );
}

beforeEach(async () => {
  fake = new FakeGitHub({ dir: dirs.dir("engram-fake-github-"), token: TOKEN });
  await fake.start();
  fake.seed({ "README.md": "hello\n", "memory/catalog.json": "{}\n" });
  logs = [];
  gh = client();
});

afterEach(async () => {
  await fake.stop();
  // Every request and response of the test conformed to GitHub's OpenAPI description.
  expect(fake.violations).toEqual([]);
});

export const owner = "octo-org";
export const repo = "memory-repo";
export const BRANCH = "engram/memory";

/** `git show <rev>:<path>` in the fake's bare repository. */
export function show(rev: string, path: string): string {
  return fake.git.git(["show", `${rev}:${path}`]);
}

export function files(
  n: number,
  prefix = "memory/st/20260101-000000Z",
): { path: string; content: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    path: `${prefix}/engram_e_${String(i).padStart(4, "0")}.json`,
    content: `{"n":${i}}\n`,
  }));
}

export async function commitFiles(n: number, expectedHeadSha: string | null = null) {
  return commitThroughApi(gh, {
    owner,
    repo,
    branch: BRANCH,
    parent: fake.branchSha("main")!,
    files: files(n),
    message: `memory: ${n} engrams`,
    expectedHeadSha,
  });
}

export function prRequest(extra: Partial<PullRequestRequest> = {}): PullRequestRequest {
  return {
    owner,
    repo,
    head: BRANCH,
    base: "main",
    title: "memory: 2 engrams",
    body: "Proposed memory.",
    labels: ["memory"],
    reviewers: [],
    teamReviewers: [],
    draft: false,
    ...extra,
  };
}
