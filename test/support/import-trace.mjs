// Loaded with `node --import` by test/cli/lazy-imports.test.ts: records every module the
// process loads into the file named by ENGRAM_TEST_IMPORT_TRACE, one URL or path a line.
// ESM imports are seen by a resolve hook (it runs on the loader's own thread); CommonJS
// modules, including packages an ES module imports, are in the require cache at exit. The
// modules of the bundle's hot script (dist/bin/hot.cjs) are initialised inside one script:
// its loader (src/cli/hot-load.ts) names each in the array this puts on `globalThis`. Node's
// own public modules the process loaded are named last (`node:crypto`).
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const out = process.env.ENGRAM_TEST_IMPORT_TRACE;
if (out) {
  register("./import-trace-hooks.mjs", import.meta.url);
  const require = createRequire(import.meta.url);
  const hot = [];
  globalThis[Symbol.for("engram.hot-trace")] = hot;
  process.on("exit", () => {
    const cjs = Object.keys(require.cache);
    if (cjs.length > 0) appendFileSync(out, `${cjs.join("\n")}\n`);
    if (hot.length > 0) appendFileSync(out, `${hot.join("\n")}\n`);
    // Node's own modules, whether imported or taken with process.getBuiltinModule: node:crypto...
    const builtins = process.moduleLoadList
      .filter((m) => /^NativeModule [a-z_]+$/.test(m))
      .map((m) => `node:${m.slice("NativeModule ".length)}`);
    appendFileSync(out, `${builtins.join("\n")}\n`);
  });
}
