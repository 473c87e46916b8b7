import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assertBuilt, type BinResult, ROOT, spawnBin } from "./bins.js";

/**
 * Acquires the Director lock at `lock` in a child process of its own (so that a spin or a
 * wait fails the test through the child's safety net instead of freezing the runner). It
 * prints `acquired <tookOver>` (and releases the lock) or `refused: <code>: <message>`.
 */
export async function acquireInChild(
  dir: string,
  lock: string,
  timeoutMs: number,
): Promise<BinResult> {
  assertBuilt();
  const lockModule = pathToFileURL(join(ROOT, "dist", "src", "state", "lock.js")).href;
  const script = join(dir, "acquire.mjs");
  writeFileSync(
    script,
    [
      `import { acquireLock } from ${JSON.stringify(lockModule)};`,
      "try {",
      `  const lock = await acquireLock(${JSON.stringify(lock)}, { timeoutMs: ${timeoutMs} });`,
      '  console.log("acquired " + lock.tookOver);',
      "  lock.release();",
      "} catch (error) {",
      '  console.log("refused: " + error.code + ": " + error.message);',
      "}",
      "",
    ].join("\n"),
  );
  return spawnBin(script, [], { cwd: dir, timeoutMs: 0 }).done;
}
