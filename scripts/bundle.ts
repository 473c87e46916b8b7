/**
 * `npm run build`, second step: bundles the bins that tsc wrote (dist/src/cli) into dist/bin,
 * so that a command loads a few files instead of a hundred modules (start-up, issue 39).
 * First the hot files (scripts/bundle-hot.ts): what the frequent commands load, grouped by
 * which of them load it, so that `worker emit` reads a score of files instead of sixty
 * chunks. Then the rest, with code splitting: each lazy `import()` of a subcommand a chunk of
 * its own, loaded only when that subcommand runs, importing hot modules from their hot file
 * (one instance of each module). Packages stay external: they are loaded from node_modules as
 * before (several read their own files at run time), and the commands that start often load
 * almost none of them. dist/src stays as tsc wrote it, for the action and the tests.
 *
 * The bins and the worker-thread scripts the code names beside itself
 * (`new URL("./ingest-worker.js", import.meta.url)`) are all entry points in one folder,
 * chunks included, so that such a URL resolves from any chunk. The map of which module went
 * into which file is written to dist/bundle-meta.json (test/cli/lazy-imports.test.ts reads it).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildHot, fromHot, lazyEntryName } from "./bundle-hot.js";

const DIST = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(DIST, "src");
export const BUNDLE_DIR = join(DIST, "bin");

const ENTRIES: Record<string, string> = {
  worker: join(SRC, "cli", "worker.js"),
  director: join(SRC, "cli", "director.js"),
  engram: join(SRC, "cli", "engram.js"),
  "ingest-worker": join(SRC, "ingest", "ingest-worker.js"),
  "recall-validate": join(SRC, "sync", "recall-validate.js"),
};

/** Packages bundled: plain code that the frequent commands load, reading no file of its own. */
const BUNDLED = new Set(["smol-toml", "zod"]);
const manifest = JSON.parse(readFileSync(join(DIST, "..", "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};
const external = Object.keys(manifest.dependencies).filter((name) => !BUNDLED.has(name));

rmSync(BUNDLE_DIR, { recursive: true, force: true });
const shape = { external, target: "node20" };
const hot = await buildHot(SRC, BUNDLE_DIR, shape);
const lazyEntries = Object.fromEntries(
  [...hot.layout.lazyTargets].map((module) => [lazyEntryName(SRC, module), module]),
);
const result = await build({
  entryPoints: { ...ENTRIES, ...lazyEntries },
  outdir: BUNDLE_DIR,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: shape.target,
  external,
  chunkNames: "chunk-[hash]",
  metafile: true,
  plugins: [fromHot(hot.layout, SRC)],
  absWorkingDir: join(DIST, ".."),
  logLevel: "warning",
});
const outputs = { ...result.metafile.outputs, ...hot.outputs };
writeFileSync(join(DIST, "bundle-meta.json"), JSON.stringify({ ...result.metafile, outputs }));
