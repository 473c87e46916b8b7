/**
 * The dashboard in a real browser (chromium through playwright-core, headless, the page
 * opened as a file): no console error and no policy violation, the decision, catalog
 * version, tiers and charts drawn, search filtering as one types, and hostile notes inert.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeResult, director } from "../support/bins.js";
import { CHROMIUM_INSTALL, chromiumBinary, chromiumRequired } from "../support/chromium.js";
import { dashboardRepo, HOSTILE_IMG, HOSTILE_SCRIPT } from "../support/dashboard-repo.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
const binary = chromiumBinary();
let browser: Browser | undefined;
let pageUrl = "";

afterAll(async () => {
  await browser?.close();
  dirs.cleanup();
});

/** A page expression (the test's own types know no DOM): the list shows `n` engrams. */
function showsRows(n: number): string {
  return `document.querySelectorAll("#engram-list > li").length === ${n}`;
}

describe.skipIf(binary === undefined && !chromiumRequired())("the dashboard in chromium", () => {
  beforeAll(async () => {
    if (binary === undefined) {
      throw new Error(`chromium is not installed and CI is set: ${CHROMIUM_INSTALL}`);
    }
    const repo = await dashboardRepo(dirs);
    const out = join(dirs.dir("engram-dashboard-page-"), "page");
    const r = await director(["dashboard", "--out", out], { cwd: repo.dir });
    expect(r.code, describeResult(r)).toBe(0);
    pageUrl = pathToFileURL(join(out, "index.html")).href;
    browser = await chromium.launch({ executablePath: binary, headless: true });
  });

  it("loads without error, shows memory, draws its charts, filters as one types, runs nothing from memory", async () => {
    const page = await (browser as Browser).newPage();
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    // Recorded from the first script on: the page's policy reports what it blocks.
    await page.addInitScript(
      "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    );
    await page.goto(pageUrl, { waitUntil: "load" });
    await page.waitForSelector("#engram-list > li");

    expect(errors).toEqual([]);
    expect(await page.evaluate("window.__violations")).toEqual([]);
    // Hostile notes are on the page as text, and ran nothing.
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(await page.title()).toMatch(/^engram memory: /);
    const listed = (await page.textContent("#engram-list")) ?? "";
    expect(listed).toContain(HOSTILE_IMG);
    expect(listed).toContain(HOSTILE_SCRIPT);
    expect(await page.locator("#engram-list img, #engram-list script").count()).toBe(0);

    expect(await page.textContent("#decisions")).toContain("Pin Node 20 in CI");
    expect(await page.textContent("#catalog-version")).toMatch(/^version \d+$/);
    const tiers = (await page.textContent("#tiers")) ?? "";
    expect(tiers).toMatch(/st files\s*\d+ \/ [\d,]+ files/);
    expect(tiers).toMatch(/lt files\s*\d+ \/ [\d,]+ files/);
    expect(await page.locator("#tiers svg rect.bar").count()).toBeGreaterThanOrEqual(8);
    expect(await page.locator("#versions svg circle.point").count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator("#versions svg polyline").count()).toBe(1);
    expect(await page.textContent("#workers")).toContain("worker-web");

    // Each keystroke filters: "pin" keeps the engrams of the decision, a miss keeps none.
    const all = await page.locator("#engram-list > li").count();
    expect(all).toBe(3);
    await page.locator("#search").pressSequentially("pin");
    await page.waitForFunction(showsRows(2));
    for (const text of await page.locator("#engram-list > li").allTextContents()) {
      expect(text.toLowerCase()).toContain("pin");
    }
    expect(await page.textContent("#engram-count")).toBe("2 of 3 engram(s)");
    await page.locator("#search").pressSequentially("x");
    await page.waitForFunction(showsRows(0));
    await page.locator("#search").fill("");
    await page.waitForFunction(showsRows(3));
    await page.selectOption("#tier", "lt");
    await page.waitForFunction(showsRows(1));
    expect(errors).toEqual([]);
    await page.close();
  });
});
