/**
 * `npm run build`, second step: bundles the bins that tsc wrote (dist/src/cli) into dist/bin,
 * so that a command loads a few files instead of a hundred modules (start-up, issue 39).
 * First the hot modules (scripts/bundle-hot.ts): what the frequent commands load, in one
 * script that the bins compile with V8's code cache, written last (scripts/hot-train.ts).
 * Then the rest, with code splitting: each lazy `import()` of a subcommand a chunk of
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
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildHot, fromHot, HOT_SCRIPT, type HotLayout, lazyEntryName } from "./bundle-hot.js";

/**
 * The training's environment: none of the builder's engram, GitHub or git settings (no bus, no
 * remote, no token reaches the scratch repository), a home of its own, and an identity for
 * its commits.
 */
function trainingEnv(home: string): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) => !/^(ENGRAM_|GITHUB_|GIT_|NATS_|NOTION_|TANA_|GRAPHITI_)/.test(name),
  );
  return {
    ...Object.fromEntries(kept),
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "engram-build",
    GIT_AUTHOR_EMAIL: "build@engram.invalid",
    GIT_COMMITTER_NAME: "engram-build",
    GIT_COMMITTER_EMAIL: "build@engram.invalid",
  };
}

const DIST = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(DIST, "src");
export const BUNDLE_DIR = join(DIST, "bin");
const HOT_LOADER_CJS = "hot-load.cjs";

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
  plugins: [fromHot(hot.layout)],
  absWorkingDir: join(DIST, ".."),
  logLevel: "warning",
});
const loader = await buildLoader(shape);
const bins = writeBins(hot.layout);
trainHotCache(hot.layout);
const outputs = { ...result.metafile.outputs, ...hot.outputs, ...loader, ...bins };
// Last: its time is the bundle's (test/support/dist-fresh.ts).
writeFileSync(join(DIST, "bundle-meta.json"), JSON.stringify({ ...result.metafile, outputs }));

/**
 * The loader of the hot script (src/cli/hot-load.ts) as CommonJS, hot-load.cjs: the bins
 * require it, so a frequent command starts no loader of ES modules at all (a few ms of each
 * start). hot-load.js, which the hot files import, hands out the same instance.
 */
async function buildLoader(shape: { external: string[]; target: string }) {
  const module = join(SRC, "cli", "hot-load.js");
  const result = await build({
    entryPoints: [module],
    outfile: join(BUNDLE_DIR, HOT_LOADER_CJS),
    bundle: true,
    format: "cjs",
    platform: "node",
    ...shape,
    define: { "import.meta.url": "__engramLoaderUrl" },
    banner: {
      js: '"use strict";\nconst __engramLoaderUrl = require("node:url").pathToFileURL(__filename).href;',
    },
    metafile: true,
    absWorkingDir: join(DIST, ".."),
    logLevel: "warning",
  });
  writeFileSync(
    join(BUNDLE_DIR, "hot-load.js"),
    [
      "// The hot script's loader for ES modules: the CommonJS one (src/cli/hot-load.ts), one instance.",
      'import { createRequire } from "node:module";',
      `const loader = createRequire(import.meta.url)("./${HOT_LOADER_CJS}");`,
      "export const { hotModule, hotCacheUsed, writeHotCache } = loader;",
      "",
    ].join("\n"),
  );
  return { ...result.metafile.outputs, ...metaOf("hot-load.js", [module]) };
}

/**
 * The worker's and the Director's bins, as src/cli/worker.ts and director.ts, taking their
 * command table and `runMain` straight from the hot script: CommonJS (worker.cjs,
 * director.cjs, what package.json's `bin` names), two files to load before the command runs.
 * worker.js and director.js start the same bins for those who run them by that name.
 */
function writeBins(layout: HotLayout) {
  const index = (module: string) => layout.places.get(join(SRC, module))?.index;
  const outputs = {};
  for (const [bin, table] of [
    ["worker", "WORKER_COMMANDS"],
    ["director", "DIRECTOR_COMMANDS"],
  ] as const) {
    const main = index("cli/main.js");
    const commands = index(`cli/${bin}-commands.js`);
    if (main === undefined || commands === undefined)
      throw new Error(`${bin}: its table is not hot`);
    const text = [
      "#!/usr/bin/env node",
      `// The ${bin} bin (src/cli/${bin}.ts), its table and runMain taken from the hot script.`,
      '"use strict";',
      `const { hotModule } = require("./${HOT_LOADER_CJS}");`,
      `const { runMain } = hotModule(${main});`,
      `const { ${table} } = hotModule(${commands});`,
      `runMain(${JSON.stringify(bin)}, ${table}, process.argv.slice(2)).then(() => {`,
      "  // Nothing left to run: exit without tearing the heap down, a few ms of every command.",
      '  process.once("beforeExit", (code) => process.exit(code));',
      "});",
      "",
    ].join("\n");
    writeFileSync(join(BUNDLE_DIR, `${bin}.cjs`), text, { mode: 0o755 });
    const shim = [
      "#!/usr/bin/env node",
      `// The ${bin} bin by its older name: ${bin}.cjs is the bin.`,
      'import { createRequire } from "node:module";',
      `createRequire(import.meta.url)("./${bin}.cjs");`,
      "",
    ].join("\n");
    writeFileSync(join(BUNDLE_DIR, `${bin}.js`), shim, { mode: 0o755 });
    Object.assign(outputs, metaOf(`${bin}.cjs`, [join(SRC, "cli", `${bin}.js`)]));
  }
  return outputs;
}

/** The bundle map's entry of a file written here: the modules it stands for. */
function metaOf(file: string, modules: string[]) {
  const root = join(DIST, "..");
  const inputs = Object.fromEntries(modules.map((m) => [relative(root, m), { bytesInOutput: 0 }]));
  return {
    [relative(root, join(BUNDLE_DIR, file))]: { bytes: 0, inputs, imports: [], exports: [] },
  };
}

/**
 * The hot script's code cache (scripts/hot-train.ts), in a process of its own. A build
 * without it works, only slower to start: it says so instead of failing.
 */
function trainHotCache(layout: HotLayout): void {
  const index = (module: string) => String(layout.places.get(join(SRC, module))?.index);
  const home = mkdtempSync(join(tmpdir(), "engram-hot-home-"));
  const run = spawnSync(
    process.execPath,
    [
      join(DIST, "scripts", "hot-train.js"),
      BUNDLE_DIR,
      index("cli/main.js"),
      index("cli/worker-commands.js"),
      index("cli/director-commands.js"),
    ],
    { encoding: "utf8", env: trainingEnv(home), timeout: 120_000 },
  );
  rmSync(home, { recursive: true, force: true });
  const last = run.stdout?.trim().split("\n").at(-1) ?? "";
  if (run.status !== 0 || !last.startsWith("{")) {
    process.stderr.write(
      `bundle: no code cache for ${HOT_SCRIPT} (commands will compile at start-up): ${run.error?.message ?? run.stderr?.slice(-2000)}\n`,
    );
    return;
  }
  const { cache_bytes: bytes } = JSON.parse(last) as { cache_bytes: number };
  process.stdout.write(`bundle: code cache of ${HOT_SCRIPT}, ${bytes} bytes\n`);
}
