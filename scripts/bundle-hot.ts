/**
 * The hot modules of the bundle: what the commands agents start most often load (start-up,
 * issue 39). All of them go into one script, dist/bin/hot.cjs, which src/cli/hot-load.ts
 * compiles with V8's code cache; each module is initialised on first use. Beside it, a hot
 * file for each set of commands that load the same modules (hot-emit-recall.js...): a small
 * ES module whose bindings are its modules' exports, taken from the script, through which the
 * chunk build's files import a hot module, so a class or a cache is never duplicated. A hot
 * module's lazy import of anything else goes through a `lazy-*.js` file of the chunk build.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { build, type Plugin } from "esbuild";

const WORKER_TABLE = ["cli/main.js", "cli/worker-commands.js"];
const DIRECTOR_TABLE = ["cli/main.js", "cli/director-commands.js"];
/** Every frequent command finds its repository and checks its state folder. */
const REPO = ["state/state-folder.js", "context/repo-context.js"];

/**
 * What the frequent commands import lazily, from the command tables down: each list's static
 * closure is what that command loads. A module goes into the hot file of the commands whose
 * closures hold it (hot-emit-recall.js...), so a command loads only hot files it needs
 * (the tables alone, for `--help`) and a handful of them. A lazy import that is not hot stays
 * a chunk, loaded when that path runs.
 */
export const HOT_SEEDS: Record<string, string[]> = {
  /** `worker --help`: the command table alone. */
  wtable: WORKER_TABLE,
  dtable: DIRECTOR_TABLE,
  emit: [...WORKER_TABLE, ...REPO, "worker/emit.js", "bus/worker-bus.js"],
  recall: [...WORKER_TABLE, ...REPO, "worker/recall.js"],
  check: [...WORKER_TABLE, ...REPO, "worker/check.js"],
  context: [...WORKER_TABLE, ...REPO, "graph/queries.js"],
  /** director status and the run with nothing to do. */
  director: [...DIRECTOR_TABLE, ...REPO, "director/status.js", "director/run.js", "bus/sources.js"],
};

interface BuildShape {
  external: string[];
  target: string;
}

/** The project's folder (dist/src is two below it): esbuild's metafile paths are relative to it. */
const rootOf = (src: string) => resolve(src, "..", "..");

/** What every build here shares: one ESM bundle for Node, with its metafile, from the root. */
function common(src: string, shape: BuildShape) {
  return {
    bundle: true,
    format: "esm",
    platform: "node",
    target: shape.target,
    external: shape.external,
    metafile: true,
    absWorkingDir: rootOf(src),
    logLevel: "warning",
  } as const;
}

/** A relative import's absolute path (tsc wrote every import with its `.js`). */
function absolute(path: string, resolveDir: string): string | undefined {
  return path.startsWith(".") ? resolve(resolveDir, path) : undefined;
}

/** The static closure of some seeds (lazy imports not followed): absolute paths. */
async function closureOf(src: string, seeds: string[], shape: BuildShape): Promise<string[]> {
  const lazyOut: Plugin = {
    name: "lazy-out",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (a) =>
        a.kind === "dynamic-import" ? { path: a.path, external: true } : undefined,
      );
    },
  };
  const result = await build({
    entryPoints: seeds.map((seed) => join(src, seed)),
    outdir: join(src, "..", "hot-closure"),
    write: false,
    ...common(src, shape),
    plugins: [lazyOut],
  });
  const packages = Object.values(result.metafile.outputs).flatMap((out) =>
    out.imports.filter(
      (i) => i.external && i.kind === "import-statement" && !i.path.startsWith("node:"),
    ),
  );
  if (packages.length > 0) {
    const names = [...new Set(packages.map((i) => i.path))].join(", ");
    throw new Error(`a hot module imports a package as it loads: ${names} (import it lazily)`);
  }
  const inputs = Object.keys(result.metafile.inputs).map((input) => resolve(rootOf(src), input));
  return inputs.filter((input) => input.startsWith(src));
}

/** Each module's export names, as esbuild reads them. */
async function exportsOf(src: string, modules: string[], target: string) {
  const result = await build({
    entryPoints: modules,
    outdir: join(src, "..", "exports-of"),
    write: false,
    bundle: false,
    format: "esm",
    platform: "node",
    target,
    metafile: true,
    absWorkingDir: rootOf(src),
    logLevel: "warning",
  });
  const names = new Map<string, string[]>();
  for (const out of Object.values(result.metafile.outputs)) {
    if (out.entryPoint !== undefined) names.set(resolve(rootOf(src), out.entryPoint), out.exports);
  }
  return names;
}

interface HotPlace {
  /** The hot file that holds the module: hot-emit.js, hot-check-emit-recall.js... */
  file: string;
  /** Its number, which prefixes the names that file exports for it. */
  index: number;
  exports: string[];
}

export interface HotLayout {
  places: Map<string, HotPlace>;
  /** The modules (absolute paths) that a hot file imports lazily from outside itself. */
  lazyTargets: Set<string>;
}

/** The name under which a hot file exports `name` of the hot module numbered `index`. */
const hotName = (index: number, name: string) => `h${index}_${name}`;

/** The file (without `.js`) through which code outside a module's file imports it lazily. */
export function lazyEntryName(src: string, module: string): string {
  return `lazy-${module
    .slice(src.length + 1)
    .replace(/\.js$/, "")
    .replace(/\//g, "-")}`;
}

/** A module that re-exports a hot module's bindings from its hot file (live bindings). */
function reexport(place: HotPlace): string {
  if (place.exports.length === 0) return `import "./${place.file}";`;
  const list = place.exports.map((n) => `${hotName(place.index, n)} as ${n}`);
  return `export { ${list.join(", ")} } from "./${place.file}";`;
}

/** For the chunk build: an import of a hot module re-exports its bindings from its hot file. */
export function fromHot(layout: HotLayout): Plugin {
  return {
    name: "hot-places",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (a) => {
        if (a.namespace === "hot") return { path: a.path, external: true };
        const path = a.kind === "entry-point" ? a.path : absolute(a.path, a.resolveDir);
        if (path === undefined || !layout.places.has(path)) return undefined;
        return { path, namespace: "hot" };
      });
      b.onLoad({ filter: /.*/, namespace: "hot" }, (a) => ({
        contents: reexport(layout.places.get(a.path) as HotPlace),
        loader: "js",
      }));
    },
  };
}

/** What src/cli/hot-load.ts hands the script, in this order. */
const HOT_PARAMS = [
  "exports",
  "require",
  "module",
  "__filename",
  "__dirname",
  "__engramImport",
  "__engramTrace",
  "__engramHotUrl",
];

/** The script of the hot modules (src/cli/hot-load.ts loads it) and the loader's name. */
export const HOT_SCRIPT = "hot.cjs";
const HOT_LOADER = "hot-load.js";

/**
 * For the script: a lazy import of a module that is not hot goes to its `lazy-*.js` file (an
 * ES module of the chunk build); every hot module is in the script.
 */
function lazyOthers(layout: HotLayout, src: string): Plugin {
  return {
    name: "lazy-others",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (a) => {
        if (a.kind !== "dynamic-import") return undefined;
        const path = absolute(a.path, a.resolveDir);
        if (path === undefined || layout.places.has(path)) return undefined;
        layout.lazyTargets.add(path);
        return { path: `./${lazyEntryName(src, path)}.js`, external: true };
      });
    },
  };
}

/** esbuild's initialiser of a module, as it writes it (the version is pinned). */
const ESM_INIT = "var __esm = (fn, res, err) => function __init() {\n";

/**
 * The script's text, made to run in src/cli/hot-load.ts's wrapper: its `import()` calls go
 * through the loader (a script compiled by `vm` has no loader of its own), and each module's
 * initialiser reports its name (the tests' import trace).
 */
function forTheLoader(text: string, dynamicImports: string[]): string {
  if (!text.includes(ESM_INIT)) throw new Error(`${HOT_SCRIPT}: esbuild's __esm helper changed`);
  let traced = text.replace(
    ESM_INIT,
    `${ESM_INIT}  if (fn) __engramTrace(__getOwnPropNames(fn)[0]);\n`,
  );
  for (const path of new Set(dynamicImports)) {
    const call = `import(${JSON.stringify(path)})`;
    if (!traced.includes(call)) throw new Error(`${HOT_SCRIPT}: no ${call} to hand to the loader`);
    traced = traced.split(call).join(`__engramImport(${JSON.stringify(path)})`);
  }
  if (/\bimport\(/.test(traced.replace(/__engramImport\(/g, ""))) {
    throw new Error(`${HOT_SCRIPT}: an import() the loader would not see`);
  }
  // One character past ASCII makes V8 hold (and compile) the whole text two bytes wide.
  // Read as Latin-1 at start-up: a byte past ASCII would be misread (and one character past
  // Latin-1 would make V8 hold and compile the whole text two bytes wide).
  for (let i = 0; i < traced.length; i++) {
    if (traced.charCodeAt(i) > 0x7f) {
      const wide = JSON.stringify(traced[i]);
      throw new Error(`${HOT_SCRIPT}: ${wide} is not ASCII: escape it in the source`);
    }
  }
  return traced;
}

/** A hot file: an ES module whose bindings are its modules' exports, taken from the script. */
function bridge(modules: string[], layout: HotLayout): string {
  const lines = [`import { hotModule } from "./${HOT_LOADER}";`];
  for (const m of modules) {
    const place = layout.places.get(m) as HotPlace;
    if (place.exports.length === 0) {
      lines.push(`hotModule(${place.index});`);
      continue;
    }
    const local = `m${place.index}`;
    lines.push(`const ${local} = hotModule(${place.index});`);
    const list = place.exports.map((n) => `${hotName(place.index, n)} = ${local}.${n}`);
    lines.push(`export const ${list.join(", ")};`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Writes the hot modules into `outdir`: all of them in one script (hot.cjs, see
 * src/cli/hot-load.ts), and a hot file for each set of commands that load the same modules
 * (hot-emit-recall.js...), which takes its modules' bindings from the script. Returns where
 * each hot module is, for the chunk build (`fromHot`), and the metafile outputs.
 */
export async function buildHot(src: string, outdir: string, shape: BuildShape) {
  const closures = new Map<string, string[]>();
  for (const [bin, seeds] of Object.entries(HOT_SEEDS)) {
    closures.set(bin, await closureOf(src, seeds, shape));
  }
  const holders = new Map<string, string[]>();
  for (const [command, modules] of closures) {
    for (const m of modules) holders.set(m, [...(holders.get(m) ?? []), command]);
  }
  const groups = new Map<string, string[]>();
  for (const [m, commands] of holders) {
    const file = `hot-${commands.sort().join("-")}.js`;
    groups.set(file, [...(groups.get(file) ?? []), m]);
  }
  const all = [...groups.values()].flat();
  const names = await exportsOf(src, all, shape.target);
  const layout: HotLayout = { places: new Map(), lazyTargets: new Set() };
  for (const [file, modules] of groups) {
    for (const m of modules.sort()) {
      layout.places.set(m, { file, index: layout.places.size, exports: names.get(m) ?? [] });
    }
  }
  const entry = [...layout.places].map(
    ([m, p]) => `  ${p.index}: () => require(${JSON.stringify(m)}),`,
  );
  const outfile = join(outdir, HOT_SCRIPT);
  const result = await build({
    stdin: {
      contents: `const modules = {\n${entry.join("\n")}\n};\nexports.hotModule = (index) => modules[index]();\n`,
      resolveDir: src,
      sourcefile: "hot-entry.js",
    },
    outfile,
    ...common(src, shape),
    format: "cjs",
    define: { "import.meta.url": "__engramHotUrl" },
    // The wrapper src/cli/hot-load.ts calls: written here, not joined to the text at start-up.
    banner: { js: `(function (${HOT_PARAMS.join(", ")}) {` },
    footer: { js: "})" },
    write: false,
    plugins: [lazyOthers(layout, src)],
  });
  const [output] = result.outputFiles;
  const [meta] = Object.values(result.metafile.outputs);
  if (output === undefined || meta === undefined) throw new Error(`${HOT_SCRIPT}: no output`);
  const dynamicImports = meta.imports.filter((i) => i.kind === "dynamic-import" && i.external);
  mkdirSync(outdir, { recursive: true });
  writeFileSync(
    outfile,
    forTheLoader(
      output.text,
      dynamicImports.map((i) => i.path),
    ),
  );
  const outputs: Record<string, import("esbuild").Metafile["outputs"][string]> = {
    ...result.metafile.outputs,
  };
  for (const [file, modules] of groups) {
    writeFileSync(join(outdir, file), bridge(modules, layout));
    // The map of the bundle: a hot file stands for the modules it initialises.
    const inputs = Object.fromEntries(
      modules.map((m) => [relative(rootOf(src), m), { bytesInOutput: 0 }]),
    );
    outputs[relative(rootOf(src), join(outdir, file))] = {
      bytes: 0,
      inputs,
      imports: [],
      exports: [],
    };
  }
  return { layout, outputs };
}
