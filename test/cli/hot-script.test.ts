/**
 * The bundle's hot script (src/cli/hot-load.ts, scripts/bundle-hot.ts): the build leaves a
 * code cache that this Node takes, and a bundle whose cache is missing or damaged runs the
 * same commands, compiling instead.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, BUNDLE_DIR, childEnv } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

/** Whether V8 took the cache of the hot script in `binDir`, and what `worker --help` printed. */
function probe(binDir: string): { cacheUsed: string; help: string } {
  const loader = pathToFileURL(join(binDir, "hot-load.js")).href;
  const used = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(loader)}); process.stdout.write(String(m.hotCacheUsed()));`,
    ],
    { encoding: "utf8", env: childEnv() },
  );
  expect(used.status, used.stderr).toBe(0);
  const help = spawnSync(process.execPath, [join(binDir, "worker.js"), "--help"], {
    encoding: "utf8",
    env: childEnv(),
  });
  expect(help.status, help.stderr).toBe(0);
  return { cacheUsed: used.stdout, help: help.stdout };
}

describe("the hot script's code cache", () => {
  it("is written by the build and taken by the Node that built it", () => {
    expect(existsSync(join(BUNDLE_DIR, "hot.cjs.cache"))).toBe(true);
    expect(probe(BUNDLE_DIR).cacheUsed).toBe("true");
  });

  it("missing or damaged, costs only the compile: the commands run the same", () => {
    const expected = probe(BUNDLE_DIR).help;
    const copy = join(dirs.dir("engram-hot-"), "bin");
    cpSync(BUNDLE_DIR, copy, { recursive: true });
    rmSync(join(copy, "hot.cjs.cache"));
    expect(probe(copy)).toEqual({ cacheUsed: "false", help: expected });
    writeFileSync(join(copy, "hot.cjs.cache"), Buffer.alloc(4096, 7));
    expect(probe(copy)).toEqual({ cacheUsed: "false", help: expected });
  });
});
