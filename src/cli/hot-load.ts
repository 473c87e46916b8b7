/**
 * The loader of the bundle's hot modules (dist/bin/hot.cjs, scripts/bundle-hot.ts): what the
 * frequent commands run, as one script compiled with V8's code cache (dist/bin/hot.cjs.cache,
 * written by the build after running those commands once), so that a command starts from
 * the bytecode of the functions it runs instead of parsing and compiling them (start-up,
 * issue 39). Node 20 keeps no code cache for ES modules; a script it compiles can. Without a
 * cache, or with one V8 refuses (another Node), the script is compiled as any other: slower,
 * the same behaviour. Only meaningful in dist/bin, beside hot.cjs. The build makes it
 * CommonJS (dist/bin/hot-load.cjs, required by the bins, so a frequent command starts no
 * loader of ES modules); dist/bin/hot-load.js hands that one instance to ES modules.
 *
 * The hot files of the bundle (hot-*.js) are ES modules that take their bindings from here,
 * so each module has one instance whether a command reaches it from the script or from a
 * chunk. The script's own `import()` calls (packages, `lazy-*.js` files) are made here, on
 * the loader of ES modules, as a hot file's would have been.
 */
import { enableCompileCache } from "./compile-cache.js";

// Node's modules as they are, not imported: an ES module import of one builds its namespace,
// reading every export (fs's streams among them) at a cost the command may never need.
const { readFileSync, renameSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { createRequire } = process.getBuiltinModule("node:module");
const { dirname, join } = process.getBuiltinModule("node:path");
const { fileURLToPath } = process.getBuiltinModule("node:url");
const { Script } = process.getBuiltinModule("node:vm");

// First (Node 22 and later): the chunks a command loads besides the script are cached too.
enableCompileCache();

const url = new URL("./hot.cjs", import.meta.url);
const file = fileURLToPath(url);
const cacheFile = `${file}.cache`;
/** The project's folder: esbuild names each module of the script relative to it. */
const root = join(dirname(file), "..", "..");

/** The modules the script initialised, for the import trace of the tests (`globalThis`). */
const TRACE = Symbol.for("engram.hot-trace");

type HotExports = { hotModule(index: number): Record<string, unknown> };

function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

// The build keeps the script ASCII and wrapped in its function: read as bytes, one byte wide.
const script = new Script(readFileSync(file, "latin1"), {
  filename: file,
  cachedData: readCache(),
});
const hot: { exports: Partial<HotExports> } = { exports: {} };
script.runInThisContext()(
  hot.exports,
  createRequire(file),
  hot,
  file,
  dirname(file),
  (specifier: string) =>
    import(specifier.startsWith(".") ? new URL(specifier, url).href : specifier),
  (key: string) => {
    const trace = (globalThis as Record<symbol, unknown>)[TRACE];
    if (Array.isArray(trace)) trace.push(join(root, key));
  },
  url.href,
);
const hotExports = hot.exports as HotExports;
const modules = new Map<number, Record<string, unknown>>();

/** The exports of hot module `index` (its number in the bundle), initialised on first use. */
export function hotModule(index: number): Record<string, unknown> {
  let exports = modules.get(index);
  if (exports === undefined) {
    exports = hotExports.hotModule(index);
    modules.set(index, exports);
  }
  return exports;
}

/** Whether V8 took the code cache (false when there is none). */
export function hotCacheUsed(): boolean {
  return script.cachedDataRejected === false;
}

/**
 * Writes the code cache of every function compiled so far in this process (the build runs
 * the frequent commands first): temp file, then rename.
 */
export function writeHotCache(): number {
  const data = script.createCachedData();
  const temp = `${cacheFile}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, cacheFile);
  return data.length;
}
