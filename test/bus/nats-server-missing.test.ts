/**
 * `npm test` on a machine without nats-server: the NATS tests are skipped and the run ends
 * with a banner saying how many and how to install the server; with CI=true the run fails.
 * "Without" is simulated with ENGRAM_NATS_SERVER=/nonexistent, through which the NATS tests
 * find their server. Runs vitest itself, on the NATS test files only.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHILD_SAFETY_MS, ROOT } from "../support/bins.js";

const VITEST = join(ROOT, "node_modules", "vitest", "vitest.mjs");

function vitestWithoutNats(ci: boolean): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, ENGRAM_NATS_SERVER: "/nonexistent" };
  // The run under test is a vitest of its own, not a worker of this one.
  for (const key of Object.keys(env)) if (key.startsWith("VITEST")) delete env[key];
  delete env.CI;
  if (ci) env.CI = "true";
  const files = ["test/bus/nats.test.ts", "test/bus/nats-source.test.ts"];
  const r = spawnSync(process.execPath, [VITEST, "run", ...files], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: CHILD_SAFETY_MS,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("the NATS tests without nats-server", () => {
  it("are skipped, and the run passes with a banner saying how many and how to install it", () => {
    const r = vitestWithoutNats(false);
    expect(r.status, r.output).toBe(0);
    const count = /NATS: (\d+) test\(s\) SKIPPED: nats-server is not installed/.exec(r.output);
    expect(count, r.output).not.toBeNull();
    expect(Number(count?.[1])).toBeGreaterThan(5);
    expect(r.output).toContain("sudo apt-get install nats-server");
  });

  it("fail the run when CI is set", () => {
    const r = vitestWithoutNats(true);
    expect(r.status, r.output).not.toBe(0);
    expect(r.output).toContain("nats-server is not installed: apt-get install nats-server");
    expect(r.output).toContain("CI is set, so a missing nats-server is a failure");
  });
});
