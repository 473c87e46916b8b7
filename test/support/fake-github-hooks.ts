/**
 * One local GitHub-compatible server for a test file: started before its tests, stopped
 * after them, and after each test no request or response broke GitHub's OpenAPI description.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { FakeGitHub } from "./fake-github.js";
import type { TempDirs } from "./repo.js";

export interface FakeGitHubHandle {
  readonly fake: FakeGitHub;
  readonly apiUrl: string;
}

export function useFakeGitHub(dirs: TempDirs, token: string, prefix: string): FakeGitHubHandle {
  let fake: FakeGitHub | undefined;
  let apiUrl = "";
  beforeAll(async () => {
    fake = new FakeGitHub({ dir: dirs.dir(prefix), token });
    apiUrl = await fake.start();
  });
  afterAll(async () => {
    await fake?.stop();
    dirs.cleanup();
  });
  afterEach(() => {
    expect(fake?.violations).toEqual([]);
  });
  return {
    get fake() {
      if (!fake) throw new Error("the fake GitHub starts in beforeAll");
      return fake;
    },
    get apiUrl() {
      return apiUrl;
    },
  };
}
