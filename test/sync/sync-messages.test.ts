/**
 * Sync speaks where it used to stay silent: a first run that sends nothing because memory is
 * private says why and how to share; `--id` of a private item refuses, non-zero; the markdown
 * folders example of docs/sync.md loads when appended to the config `director init` writes;
 * `sync status` of a store that is down says so for every kind, with the URL and the cause;
 * `sync init` against a down store names the URL, what failed and what to check.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/parse.js";
import { assertBuilt, director, ROOT, succeeded, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const env = { SOURCE_DATE_EPOCH: "1767607200", NOTION_TOKEN: "secret_test" };
const dirs = new TempDirs();
let server: FakeGraphiti | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

/** A port nothing listens on: taken from the system, then closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Sets `key` in `[section]` of a generated config (its line, or its commented example). */
function setKey(text: string, section: string, key: string, value: string): string {
  const at = text.indexOf(`\n[${section}]\n`);
  expect(at).toBeGreaterThan(0);
  const line = new RegExp(`\\n(# )?${key} = [^\\n]*`);
  const rest = text.slice(at + 1);
  const m = line.exec(rest);
  expect(m).not.toBeNull();
  const i = at + 1 + (m?.index ?? 0);
  return `${text.slice(0, i)}\n${key} = ${value}${text.slice(i + (m?.[0].length ?? 0))}`;
}

async function initRepo(edit: (config: string) => string): Promise<TempRepo> {
  const repo = dirs.repo("engram-sync-msg-");
  succeeded(await director(["init"], { cwd: repo.dir }));
  const generated = readFileSync(join(repo.dir, "config", "dev.toml"), "utf8");
  repo.writeConfig(edit(setKey(generated, "memory", "buffer_keep_recent_events", "0")));
  return repo;
}

describe("sync says what privacy keeps back", () => {
  it("a first run of private notes says nothing was sent and how to share; --id of one refuses", async () => {
    server = new FakeGraphiti();
    await server.start();
    const url = server.url;
    const repo = await initRepo((c) => setKey(c, "sync.graphiti", "url", `"${url}"`));
    const opts = { cwd: repo.dir, env };
    succeeded(
      await worker(
        [
          "emit",
          "--kind",
          "lesson",
          "--text",
          "keep the cache warm",
          "--confidence",
          "0.95",
          "--outcome",
          "failure",
        ],
        opts,
      ),
    );
    succeeded(await director(["run", "--force"], opts));

    const run = await director(["sync", "run", "--target", "graphiti"], opts);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/nothing sent: all \d+ item\(s\) are private/);
    expect(run.stdout).toMatch(/worker emit --privacy public/);
    expect(run.stdout).toMatch(/\[sync\] default_privacy/);
    expect(server.calls).toHaveLength(0);

    const epId = execFileSync("grep", ["-rhoE", "ep_[0-9a-z]+", join(repo.dir, "memory")], {
      encoding: "utf8",
    }).split("\n")[0] as string;
    expect(epId).toMatch(/^ep_/);
    const refused = await director(["sync", "run", "--target", "graphiti", "--id", epId], opts);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`--id ${epId}: private`));
    expect(refused.stderr).toMatch(/Nothing was sent/);
  });
});

describe("the markdown folders example of docs/sync.md", () => {
  it("loads when appended to the config director init writes", async () => {
    const docs = readFileSync(join(ROOT, "docs", "sync.md"), "utf8");
    const section = docs.slice(docs.indexOf("## Markdown memory files"));
    const example = /```toml\n([\s\S]*?)```/.exec(section)?.[1] as string;
    expect(example).toMatch(/\[\[sources\.markdown\.folders\]\]/);
    const repo = dirs.repo("engram-sync-docs-");
    succeeded(await director(["init"], { cwd: repo.dir }));
    const generated = readFileSync(join(repo.dir, "config", "dev.toml"), "utf8");
    const config = parseConfigText(`${generated}\n${example}`, "config/dev.toml");
    expect(config.sources.markdown.folders).toMatchObject([
      { path: "notes/learning", kind: "learning" },
    ]);
    // And the bins load it too.
    repo.writeConfig(`${generated}\n${example}`);
    succeeded(await director(["status"], { cwd: repo.dir }));
  });
});

describe("sync against a store that is down", () => {
  it("status is not ok for any kind and names the URL and the cause", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const repo = await initRepo((c) =>
      setKey(
        setKey(
          setKey(c, "sync.graphiti", "url", `"${url}"`),
          "sync.notion",
          "base_url",
          `"http://127.0.0.1:${port}"`,
        ),
        "sync.notion",
        "parent_page_id",
        '"1a2b3c4d5e6f47a8b9c0d1e2f3a4b5c6"',
      ),
    );
    const opts = { cwd: repo.dir, env };
    const status = await director(["sync", "status", "--target", "graphiti"], opts);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/unhealthy/);
    expect(status.stdout).not.toMatch(/: ok\b/);
    expect(status.stdout).toMatch(/episode: unknown/);
    expect(status.stdout).toContain(`cannot reach ${url}: connection refused`);

    const graphiti = await director(["sync", "init", "--target", "graphiti"], opts);
    expect(graphiti.code).toBe(69);
    expect(graphiti.stdout).not.toMatch(/ready|validated/);
    expect(graphiti.stderr).toContain(`cannot reach ${url}: connection refused`);
    expect(graphiti.stderr).toMatch(/Check that the server runs/);

    const notion = await director(["sync", "init", "--target", "notion"], opts);
    expect(notion.code).toBe(69);
    expect(notion.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect(notion.stderr).toMatch(/connection refused .*\[ECONNREFUSED\]/);
    expect(notion.stderr).toMatch(/\[sync\.notion\] base_url/);
  });
});
