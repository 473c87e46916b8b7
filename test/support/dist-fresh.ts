/**
 * Vitest global setup of the integration tests: they run the built bins in `dist/`, so a
 * source newer than its build would be tested as it was before the edit. Stale or missing
 * output is rebuilt here (`tsc -p tsconfig.build.json`, then the bundle of the bins that the
 * tests run: scripts/bundle.ts), once, before any test starts; with
 * `ENGRAM_TEST_NO_BUILD=1` the run fails instead, naming the first stale file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** The bundle's map, written last by `npm run build`: its time is the bundle's. */
const BUNDLE_META = join("dist", "bundle-meta.json");

/** The first built file older than its source (or missing), or undefined when all are fresh. */
export function staleBuild(root = ROOT): string | undefined {
  const bundle = join(root, BUNDLE_META);
  const bundled = existsSync(bundle) ? statSync(bundle).mtimeMs : -1;
  for (const folder of ["src", "bench", "scripts"]) {
    for (const source of tsFiles(join(root, folder))) {
      const built = join(root, "dist", relative(root, source)).replace(/\.ts$/, ".js");
      const changed = statSync(source).mtimeMs;
      if (!existsSync(built) || statSync(built).mtimeMs < changed) return relative(root, source);
      if (folder === "src" && bundled < changed) return `${relative(root, source)} (the bundle)`;
    }
  }
  return undefined;
}

function* tsFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

export default function setup(): void {
  const stale = staleBuild();
  if (stale === undefined) return;
  if (process.env.ENGRAM_TEST_NO_BUILD === "1") {
    throw new Error(
      `dist/ is older than ${stale}: the integration tests would run old code; run npm run build`,
    );
  }
  process.stderr.write(`dist/ is older than ${stale}: building before the tests\n`);
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], {
    cwd: ROOT,
    stdio: "inherit",
  });
  execFileSync(process.execPath, [join(ROOT, "dist", "scripts", "bundle.js")], {
    cwd: ROOT,
    stdio: "inherit",
  });
  const still = staleBuild();
  if (still !== undefined) throw new Error(`dist/ is still older than ${still} after a build`);
}
