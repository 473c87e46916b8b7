/**
 * Markdown folders (issue 25 item 1): a repository's config may name only folders inside the
 * repository, links followed; a folder outside is read only when the user allows it
 * (ENGRAM_ALLOW_FOLDERS); and only markdown files are read there, never dotfiles, keys or
 * other files, whatever the globs say. Through the bins, with the user's own knowledge-graph
 * stand-in named by the environment.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeResult, director } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

let graph: FakeGraphiti;
beforeEach(async () => {
  graph = new FakeGraphiti();
  await graph.start();
});
afterEach(() => graph.stop());

const SECRETS = ["PRIVATE-KEY-BYTES", "AWS-IN-DOTENV", "TXT-NOT-MARKDOWN", "HIDDEN-MD", "PEM-KEY"];

/** The user's home: a memory folder worth syncing, and what must never leave it. */
function home(): string {
  const dir = dirs.dir("engram-home-");
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  write(".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nPRIVATE-KEY-BYTES\n");
  write(".env", "AWS_SECRET_ACCESS_KEY=AWS-IN-DOTENV\n");
  write("memory/lesson.md", "---\ntitle: home lesson\n---\n# Home\n\nHOME-NOTE: rotate keys.\n");
  write("memory/notes.txt", "TXT-NOT-MARKDOWN\n");
  return dir;
}

async function victim(outside: string): Promise<TempRepo> {
  const repo = dirs.repo("engram-md-victim-");
  expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
  repo.write("notes/ok.md", "# Repo\n\nREPO-NOTE: the build uses tsc.\n");
  repo.write("notes/.hidden.md", "HIDDEN-MD\n");
  repo.write("notes/key.pem", "PEM-KEY\n");
  // Links out of the repository: a folder and a file.
  symlinkSync(outside, repo.path("linked"));
  symlinkSync(join(outside, ".ssh", "id_rsa"), repo.path("notes", "escape.md"));
  const folder = (path: string) => [
    "[[sources.markdown.folders]]",
    `path = ${JSON.stringify(path)}`,
    'globs = ["**/*", "**/.*", ".ssh/*", ".*"]',
  ];
  repo.writeConfig(
    [
      "[sync.graphiti]",
      "confirm_wait_seconds = 5",
      "retries = 0",
      ...folder(outside),
      ...folder("linked"),
      ...folder("notes"),
      "",
    ].join("\n"),
  );
  return repo;
}

function sent(): string {
  return graph.calls.map((c) => c.episode_body).join("\n");
}

describe("markdown folders named by a repository's config", () => {
  it("reads only markdown inside the repository; outside folders only with the user's leave", async () => {
    const outside = home();
    const repo = await victim(outside);
    const env = { ENGRAM_GRAPHITI_URL: graph.url, ENGRAM_ALLOW_FOLDERS: undefined };
    const r = await director(["sync", "run", "--target", "graphiti", "--json"], {
      cwd: repo.dir,
      env,
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(sent()).toContain("REPO-NOTE");
    expect(sent()).not.toContain("HOME-NOTE");
    for (const secret of SECRETS) expect(sent()).not.toContain(secret);
    expect(r.stdout).toContain("outside the repository");
    expect(r.stdout).toContain("ENGRAM_ALLOW_FOLDERS");

    // The user names the folder: its markdown is read, still never a dotfile or a key.
    const allowed = await director(["sync", "run", "--target", "graphiti", "--json"], {
      cwd: repo.dir,
      env: { ...env, ENGRAM_ALLOW_FOLDERS: outside },
    });
    expect(allowed.code, describeResult(allowed)).toBe(0);
    expect(sent()).toContain("HOME-NOTE");
    for (const secret of SECRETS) expect(sent()).not.toContain(secret);
  });

  it("a config file of the user's own, outside the repository, may name the folder", async () => {
    const outside = home();
    const repo = await victim(outside);
    const mine = join(dirs.dir("engram-user-config-"), "engram.toml");
    writeFileSync(
      mine,
      [
        "[sync.graphiti]",
        "confirm_wait_seconds = 5",
        "[[sources.markdown.folders]]",
        `path = ${JSON.stringify(join(outside, "memory"))}`,
        "",
      ].join("\n"),
    );
    const r = await director(["sync", "run", "--target", "graphiti", "--json", "--config", mine], {
      cwd: repo.dir,
      env: { ENGRAM_GRAPHITI_URL: graph.url, ENGRAM_ALLOW_FOLDERS: undefined },
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(sent()).toContain("HOME-NOTE");
    for (const secret of SECRETS) expect(sent()).not.toContain(secret);
  });
});
