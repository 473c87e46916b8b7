/**
 * The hot files of the bundle (dist/bin/hot-*.js): the modules that the commands agents start
 * most often load, grouped by which of those commands load them, so that such a command
 * reads a score of files instead of sixty chunks (start-up, issue 39). Every module of the
 * bundle lives in exactly one file: other files import a hot module's bindings from its hot
 * file, so a class or a cache is never duplicated. A hot file imports only hot files that
 * every command loading it loads too (no cycle, nothing loaded for nothing); its lazy imports
 * of anything else go through a `lazy-*.js` file of the chunk build.
 */
import { join, resolve } from "node:path";
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

/** The commands whose hot file this is: hot-check-emit.js -> check, emit. */
const holdersOf = (file: string) => file.replace(/^hot-|\.js$/g, "").split("-");

/** Whether every command that loads hot file `own` loads hot file `file` too. */
function loadedWith(file: string | undefined, own: string): boolean {
  if (file === undefined) return false;
  const holders = new Set(holdersOf(file));
  return holdersOf(own).every((command) => holders.has(command));
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

/**
 * Imports of a hot module held by another file become re-exports from that file; with
 * `lazyOut`, lazy imports of any module outside `own` go to its `lazy-*.js` file.
 */
function placed(
  layout: HotLayout,
  src: string,
  own?: { file: string; modules: Set<string> },
): Plugin {
  return {
    name: "hot-places",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (a) => {
        if (a.namespace === "hot") return { path: a.path, external: true };
        const path = a.kind === "entry-point" ? a.path : absolute(a.path, a.resolveDir);
        if (path === undefined || own?.modules.has(path)) return undefined;
        // A hot file that the commands of this one all load is there already: import it.
        const there = own !== undefined && loadedWith(layout.places.get(path)?.file, own.file);
        if (own !== undefined && a.kind === "dynamic-import" && !there) {
          layout.lazyTargets.add(path);
          return { path: `./${lazyEntryName(src, path)}.js`, external: true };
        }
        return layout.places.has(path) ? { path, namespace: "hot" } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: "hot" }, (a) => ({
        contents: reexport(layout.places.get(a.path) as HotPlace),
        loader: "js",
      }));
    },
  };
}

/**
 * Writes the hot files into `outdir`, one for each set of commands that load the same
 * modules (hot-emit-recall.js...). Returns where each hot module is, for the chunk build
 * (`fromHot`), and the hot files' metafile outputs.
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
  const outputs: Record<string, import("esbuild").Metafile["outputs"][string]> = {};
  for (const [file, modules] of groups) {
    const lines = modules.map((m) => {
      const place = layout.places.get(m) as HotPlace;
      if (place.exports.length === 0) return `import ${JSON.stringify(m)};`;
      const list = place.exports.map((n) => `${n} as ${hotName(place.index, n)}`);
      return `export { ${list.join(", ")} } from ${JSON.stringify(m)};`;
    });
    const result = await build({
      stdin: { contents: lines.join("\n"), resolveDir: src, sourcefile: file },
      outfile: join(outdir, file),
      ...common(src, shape),
      plugins: [placed(layout, src, { file, modules: new Set(modules) })],
    });
    Object.assign(outputs, result.metafile.outputs);
  }
  return { layout, outputs };
}

/** For the chunk build: an import of a hot module re-exports its bindings from its hot file. */
export function fromHot(layout: HotLayout, src: string): Plugin {
  return placed(layout, src);
}
