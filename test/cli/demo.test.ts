/**
 * `npm run demo` as the README's first command runs it (the built script), and the "Try next"
 * lines it prints, run as printed in one shell: each exits 0, and the lesson they emit
 * reaches memory.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assertBuilt, childEnv, ROOT } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";
import { describeStep, runShellSession } from "../support/shell-block.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** The lines under "Try next", without their two-space indent. */
function tryNextLines(output: string): string[] {
  const at = output.indexOf("Try next");
  if (at === -1) return [];
  return output
    .slice(output.indexOf("\n", at) + 1)
    .split("\n")
    .filter((line) => line.startsWith("  "))
    .map((line) => line.slice(2));
}

describe("the demo", () => {
  it("runs, and every 'Try next' line it prints works as printed", () => {
    assertBuilt();
    const root = dirs.dir("engram-demo-");
    const demo = spawnSync(
      process.execPath,
      [join(ROOT, "dist", "scripts", "demo.js"), "--dir", root, "--quiet"],
      { cwd: root, env: childEnv(), encoding: "utf8", timeout: 240_000 },
    );
    expect(demo.status, `${demo.stdout}\n${demo.stderr}`).toBe(0);
    const lines = tryNextLines(demo.stdout);
    expect(lines[0]).toMatch(/^cd /);
    expect(lines.length).toBeGreaterThan(4);

    const session = runShellSession(lines, { cwd: dirs.dir(), home: dirs.dir("engram-home-") });
    expect(session.status, describeStep(session)).toBe(0);
    expect(session.stdout).toContain("Rate-limit /login with a token bucket per client IP");
    // The lesson emitted by hand was compacted (--flush) and is found again.
    expect(session.stdout).toMatch(/compaction: flushed/);
    expect(session.stdout).toContain("What you learned");
  }, 300_000);
});
