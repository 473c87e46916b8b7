/**
 * Scenario 17, dashboard: `director dashboard` on the 10,000-engram repository, timed as a
 * process (median of 3), and the page opened as a file in headless chromium until the engram
 * list shows (median of 3; left out when chromium is not installed).
 */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import type { RepoContext } from "../src/context/repo-context.js";
import { writeDashboard } from "../src/director/dashboard.js";
import { DIRECTOR_CLI, gc, log, mb, median, round, runCli } from "./util.js";

export const DASHBOARD_WRITE_TARGET_MS = 2000;
export const DASHBOARD_OPEN_TARGET_MS = 1000;
const CHROMIUM = process.env.ENGRAM_CHROMIUM || "/usr/bin/chromium";

export interface DashboardScenarioResult {
  engrams: number;
  write: { runs_ms: number[]; median_ms: number; page_mb: number; target: string; pass: boolean };
  /**
   * `writeDashboard` in this process: wall and CPU time (user + system), median of 3. On a
   * machine shared with other work the CPU time says what the page costs, the wall what the
   * machine gave it.
   */
  in_process: { runs_ms: number[]; cpu_ms: number[]; median_ms: number; median_cpu_ms: number };
  open:
    | { runs_ms: number[]; median_ms: number; shown_rows: number; target: string; pass: boolean }
    | { skipped: string };
  pass: boolean;
}

export async function runDashboardScenario(
  ctx: RepoContext,
  engrams: number,
  work: string,
): Promise<DashboardScenarioResult> {
  const out = join(work, "dashboard");
  const writes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await runCli<{ engrams: number }>(DIRECTOR_CLI, [
      "dashboard",
      "--repo",
      ctx.repoDir,
      "--out",
      out,
      "--json",
    ]);
    if (r.json.engrams !== engrams) throw new Error(`the page lists ${r.json.engrams} engrams`);
    writes.push(round(r.ms, 1));
  }
  const writeMedian = round(median(writes), 1);
  const pageMb = mb(statSync(join(out, "index.html")).size);
  log(
    `dashboard: director dashboard on ${engrams} engrams, runs ${writes.join(", ")} ms, page ${pageMb} MB`,
  );
  const write = {
    runs_ms: writes,
    median_ms: writeMedian,
    page_mb: pageMb,
    target: `< ${DASHBOARD_WRITE_TARGET_MS} ms process wall (median of 3)`,
    pass: writeMedian < DASHBOARD_WRITE_TARGET_MS,
  };
  const runs: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 3; i++) {
    gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await writeDashboard(ctx, out);
    runs.push(round(performance.now() - t0, 1));
    const c = process.cpuUsage(c0);
    cpu.push(round((c.user + c.system) / 1000, 1));
  }
  const inProcess = {
    runs_ms: runs,
    cpu_ms: cpu,
    median_ms: round(median(runs), 1),
    median_cpu_ms: round(median(cpu), 1),
  };
  log(`dashboard: writeDashboard in process, runs ${runs.join(", ")} ms, cpu ${cpu.join(", ")} ms`);
  const open = await timeOpen(join(out, "index.html"));
  return {
    engrams,
    write,
    in_process: inProcess,
    open,
    pass: write.pass && ("skipped" in open || open.pass),
  };
}

async function timeOpen(page: string): Promise<DashboardScenarioResult["open"]> {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    return { skipped: `no chromium at ${CHROMIUM}` };
  }
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  try {
    const runs: number[] = [];
    let shown = 0;
    for (let i = 0; i < 3; i++) {
      const tab = await browser.newPage();
      const t0 = performance.now();
      await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });
      await tab.waitForSelector("#engram-list > li");
      runs.push(round(performance.now() - t0, 1));
      shown = await tab.locator("#engram-list > li").count();
      await tab.close();
    }
    const med = round(median(runs), 1);
    log(`dashboard: opened in chromium until the list shows, runs ${runs.join(", ")} ms`);
    return {
      runs_ms: runs,
      median_ms: med,
      shown_rows: shown,
      target: `< ${DASHBOARD_OPEN_TARGET_MS} ms from navigation to the engram list shown (median of 3)`,
      pass: med < DASHBOARD_OPEN_TARGET_MS,
    };
  } finally {
    await browser.close();
  }
}
