/**
 * `director dashboard`: the page's data model read from a real repository (init, emit, run),
 * hostile notes written as text, no URL of another origin, and `--serve` on loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import type { DashboardModel } from "../../src/core/dashboard/model.js";
import { readDashboardModel } from "../../src/director/dashboard.js";
import { DIRECTOR_BIN, describeResult, director, jsonOf, spawnBin } from "../support/bins.js";
import { dashboardRepo, HOSTILE_IMG, HOSTILE_SCRIPT } from "../support/dashboard-repo.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

async function ok(p: ReturnType<typeof director>) {
  const r = await p;
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

let repo: TempRepo;
beforeAll(async () => {
  repo = await dashboardRepo(dirs);
});

describe("the dashboard's data model", () => {
  it("holds the catalog, tiers, decisions, engrams with provenance, workers and versions", async () => {
    const model: DashboardModel = await readDashboardModel(await openContext({ repo: repo.dir }));
    expect(model.catalog.version).toBeGreaterThanOrEqual(1);
    expect(model.catalog.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(model.budgets.map((b) => b.label)).toEqual(
      expect.arrayContaining([
        "buffer events",
        "st files",
        "st bytes",
        "lt files",
        "MEMORY.md items",
      ]),
    );
    const st = model.budgets.find((b) => b.label === "st files");
    expect(st?.used).toBe(model.engrams.filter((e) => e.scope === "st").length);
    expect(st?.max).toBeGreaterThan(0);
    const decision = model.decisions.find((d) => d.title === "Pin Node 20 in CI");
    expect(decision).toMatchObject({ rationale: "users run 20" });
    expect(decision?.date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const holder = model.engrams.find((e) => e.id === decision?.source);
    expect(holder?.provenance.senders).toContain("worker-api");
    expect(holder?.topics).toContain("ci");
    expect(model.engrams.some((e) => e.facts.some((f) => f.includes(HOSTILE_IMG)))).toBe(true);
    expect(model.workers.map((w) => w.id)).toEqual(
      expect.arrayContaining(["worker-api", "worker-web"]),
    );
    expect(model.versions.length).toBeGreaterThanOrEqual(1);
    expect(model.versions.at(-1)?.engrams).toBe(model.engrams.length);
    expect(model.focus.present).toBe(true);
    expect(model.focus.items.length).toBeGreaterThan(0);
  });
});

describe("director dashboard", () => {
  it("writes index.html, app.js and style.css; memory's text is escaped and nothing is fetched from elsewhere", async () => {
    const out = join(dirs.dir("engram-dashboard-out-"), "page");
    const r = await ok(director(["dashboard", "--out", out, "--json"], { cwd: repo.dir }));
    const written = jsonOf<{ files: string[]; engrams: number; catalog_version: number }>(r);
    expect(written.files.sort()).toEqual(["app.js", "index.html", "style.css"]);
    const html = readFileSync(join(out, "index.html"), "utf8");
    // The hostile notes never appear as markup, in the page or its data block.
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<script>window.__pwned");
    expect(html).not.toMatch(/<[a-z][^>]*\sonerror/i);
    expect(html).toContain("Pin Node 20 in CI");
    expect(html).toContain(`version ${written.catalog_version}`);
    // One script, ours, beside the page; every src and href is a file beside it.
    const refs = [
      ...html.matchAll(/<(script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*"([^"]*)"/gi),
    ];
    expect(refs.map((m) => m[2])).toEqual(["style.css", "app.js"]);
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:|\/\/|data:text)/i);
    expect(html).toContain('http-equiv="Content-Security-Policy"');
    expect(html).toContain("script-src &#39;self&#39;");
    expect(html).not.toMatch(/<script(?![^>]*(?:src="app\.js"|type="application\/json"))/);
    const data = /<script type="application\/json" id="data">([^<]*)<\/script>/.exec(html);
    const parsed = JSON.parse(data?.[1] ?? "") as DashboardModel;
    expect(parsed.engrams).toHaveLength(written.engrams);
    expect(JSON.stringify(parsed)).toContain(HOSTILE_SCRIPT);
    // No network in the script either.
    const app = readFileSync(join(out, "app.js"), "utf8");
    expect(app).not.toMatch(/fetch\(|XMLHttpRequest|innerHTML|https?:\/\//);
  });

  it("writes to the state folder by default, and writing twice gives the same files", async () => {
    const env = { SOURCE_DATE_EPOCH: "1790000500" };
    await ok(director(["dashboard"], { cwd: repo.dir, env }));
    const first = readFileSync(join(repo.dir, ".engram", "dashboard", "index.html"), "utf8");
    await ok(director(["dashboard"], { cwd: repo.dir, env }));
    expect(readFileSync(join(repo.dir, ".engram", "dashboard", "index.html"), "utf8")).toBe(first);
  });

  it("a damaged engram file does not stop the page: its row says it is unreadable", async () => {
    const copy = dirs.copy(repo, "engram-dashboard-damaged-");
    const catalog = JSON.parse(readFileSync(copy.path("memory/catalog.json"), "utf8")) as {
      entries: { engram_id: string; path: string }[];
    };
    const victim = catalog.entries[0] as { engram_id: string; path: string };
    writeFileSync(copy.path(victim.path), "{ not json");
    const out = join(dirs.dir("engram-dashboard-damaged-out-"), "page");
    await ok(director(["dashboard", "--out", out], { cwd: copy.dir }));
    const html = readFileSync(join(out, "index.html"), "utf8");
    const data = /<script type="application\/json" id="data">([^<]*)<\/script>/.exec(html);
    const model = JSON.parse(data?.[1] ?? "") as DashboardModel;
    expect(model.engrams.find((e) => e.id === victim.engram_id)?.readable).toBe(false);
    expect(model.engrams.filter((e) => e.readable)).toHaveLength(catalog.entries.length - 1);
  });

  it("refuses --serve on a non-loopback address without --allow-remote, and flags that do not go together", async () => {
    const remote = await director(["dashboard", "--serve", "--listen", "0.0.0.0:0"], {
      cwd: repo.dir,
    });
    expect(remote.code, describeResult(remote)).toBe(2);
    expect(remote.stderr).toContain("--allow-remote");
    const both = await director(["dashboard", "--serve", "--out", "x"], { cwd: repo.dir });
    expect(both.code).toBe(2);
  });

  it("--serve answers the page read-only on loopback, read afresh, until SIGTERM", async () => {
    const child = spawnBin(DIRECTOR_BIN, ["dashboard", "--serve", "--json"], { cwd: repo.dir });
    const url = await firstLine(child.child.stdout as NodeJS.ReadableStream);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain("Pin Node 20 in CI");
    const app = await fetch(`${url}app.js`);
    expect(app.headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(`${url}../config/dev.toml`)).status).toBe(404);
    expect((await fetch(url, { method: "POST" })).status).toBe(405);
    child.child.kill("SIGTERM");
    const r = await child.done;
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain('"requests":4');
  });
});

describe("director serve --dashboard", () => {
  it("serves the page beside the hub, after the hub's own line, and stops with it", async () => {
    const child = spawnBin(DIRECTOR_BIN, ["serve", "--dashboard", "127.0.0.1:0", "--json"], {
      cwd: repo.dir,
    });
    const [hub, page] = await lines(child.child.stdout as NodeJS.ReadableStream, 2);
    expect(hub).toHaveProperty("listening");
    const url = (page as { dashboard: string }).dashboard;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const answer = await fetch(url);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Pin Node 20 in CI");
    child.child.kill("SIGTERM");
    const r = await child.done;
    expect(r.code, describeResult(r)).toBe(0);
  });

  it("refuses a dashboard beyond loopback", async () => {
    const r = await director(["serve", "--dashboard", "0.0.0.0:0"], { cwd: repo.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--dashboard 0.0.0.0");
  });
});

/** The first `count` JSON lines of a stream. */
function lines(stream: NodeJS.ReadableStream, count: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const got = text.split("\n").slice(0, -1);
      if (got.length >= count) resolve(got.slice(0, count).map((l) => JSON.parse(l) as unknown));
    });
    stream.on("end", () => reject(new Error(`fewer than ${count} lines: ${text}`)));
  });
}

function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const end = text.indexOf("\n");
      if (end >= 0) resolve((JSON.parse(text.slice(0, end)) as { listening: string }).listening);
    });
    stream.on("end", () => reject(new Error(`no listening line: ${text}`)));
  });
}
