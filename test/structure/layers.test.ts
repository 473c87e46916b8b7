/**
 * The shape of the source tree, checked from its text: layers import only downwards, the
 * core stays pure, and no file grows past 500 lines. docs/architecture.md draws the same
 * layers; a change here is a change there.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { code, importsOf, posix, ROOT, SRC, walk } from "./source-tree.js";

/**
 * The layers of src/, bottom first. A module may import its own folder and any folder of a
 * lower layer; never a higher layer, never another folder of its own layer.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["schema"],
  ["core"],
  // The error model is the core's (core/errors.ts); errors.ts adds the file system's mapping.
  // fs-async.ts reads files for every adapter without node:fs/promises.
  ["errors.ts", "fs-async.ts"],
  ["clock.ts", "config", "state", "git", "github"],
  ["repo", "sources"],
  ["context"],
  ["ingest", "graph", "sync"],
  ["bus"],
  ["worker"],
  ["sessions"],
  ["director", "mcp"],
  ["cli"],
];

/**
 * The only node: imports the core may make, and why: hashing, sealing and key derivation
 * (HKDF of the sync key from the seal key) are deterministic functions of their input (the
 * seal's IV is an HMAC of the text), with no I/O, no clock and no randomness. `randomBytes`
 * and `randomUUID` stay banned below.
 */
const CORE_NODE_IMPORTS: Record<string, readonly string[]> = {
  "node:crypto": [
    "createHash",
    "createHmac",
    "createCipheriv",
    "createDecipheriv",
    "hkdfSync",
    "hash",
  ],
};

/** What the core must not touch: the environment, the clock, randomness. */
const CORE_BANNED: readonly [RegExp, string][] = [
  [/\bprocess\.env\b/, "reads process.env"],
  [/\bDate\.now\s*\(/, "reads the clock (Date.now)"],
  [/\bnew Date\s*\(\s*\)/, "reads the clock (new Date())"],
  [/\bMath\.random\s*\(/, "draws randomness (Math.random)"],
  [/\brandomUUID\b/, "draws randomness (randomUUID)"],
  [/\brandomBytes\b/, "draws randomness (randomBytes)"],
  [/\bperformance\.now\s*\(/, "reads the clock (performance.now)"],
];

const MAX_LINES = 500;

/** The layer unit of a file under src/: its top folder, or its own name at the top. */
function unitOf(path: string): string {
  const [first] = posix(relative(SRC, path)).split("/");
  // An import names the built file (`../clock.js`); the unit is the source (`clock.ts`).
  return (first as string).replace(/\.js$/, ".ts");
}

function layerOf(unit: string): number {
  const layer = LAYERS.findIndex((units) => units.includes(unit));
  if (layer === -1) throw new Error(`src/${unit} is in no layer: add it to LAYERS and the docs`);
  return layer;
}

const sources = walk(SRC);

describe("layers", () => {
  it("every folder of src/ has a layer", () => {
    for (const path of sources) expect(() => layerOf(unitOf(path))).not.toThrow();
  });

  it("every import points to the module's own folder or a lower layer", () => {
    const wrong = sources.flatMap((path) => upwardImports(path, readFileSync(path, "utf8")));
    expect(wrong).toEqual([]);
  });

  it("finds an upward import when there is one, and not in a comment", () => {
    const hub = join(SRC, "bus", "tcp-hub.ts");
    expect(upwardImports(hub, 'import { runCycleOn } from "../director/run.js";\n')).toEqual([
      "src/bus/tcp-hub.ts (bus, layer 7) imports director (layer 10)",
    ]);
    expect(upwardImports(hub, 'const m = await import("../worker/emit.js");\n')).toHaveLength(1);
    expect(upwardImports(hub, '// import { x } from "../cli/main.js";\n')).toEqual([]);
    expect(upwardImports(join(SRC, "config", "load.ts"), 'import "../state/lock.js";\n')).toEqual([
      "src/config/load.ts (config, layer 3) imports state (layer 3)",
    ]);
  });
});

/** The imports of one module that point up, or across its own layer, in words. */
function upwardImports(path: string, text: string): string[] {
  const wrong: string[] = [];
  const from = unitOf(path);
  for (const { spec } of importsOf(text)) {
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(path), spec);
    if (!target.startsWith(SRC + sep)) {
      wrong.push(`${posix(relative(ROOT, path))} imports ${spec}, outside src/`);
      continue;
    }
    const to = unitOf(target);
    if (to === from || layerOf(to) < layerOf(from)) continue;
    wrong.push(
      `${posix(relative(ROOT, path))} (${from}, layer ${layerOf(from)}) imports ${to} (layer ${layerOf(to)})`,
    );
  }
  return wrong;
}

describe("the core is pure", () => {
  const core = sources.filter((path) => unitOf(path) === "core");

  it("imports no node: module but the named deterministic crypto functions", () => {
    const wrong: string[] = [];
    for (const path of core) {
      for (const { spec, names } of importsOf(readFileSync(path, "utf8"))) {
        if (spec.startsWith(".") || spec === "zod") continue;
        const allowed = CORE_NODE_IMPORTS[spec];
        const used = names
          .replace(/^type\s+/, "")
          .replace(/[{}]/g, "")
          .split(",")
          .map((n) => n.trim().replace(/^type\s+/, ""))
          .filter((n) => n !== "");
        const extra = allowed ? used.filter((n) => !allowed.includes(n)) : used;
        if (!allowed || extra.length > 0 || names === "*") {
          wrong.push(
            `${posix(relative(ROOT, path))} imports ${spec} (${extra.join(", ") || names})`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("takes no node: module when first used either, but crypto", () => {
    const wrong = core.flatMap((path) =>
      [...readFileSync(path, "utf8").matchAll(/getBuiltinModule\(\s*"([^"]*)"/g)]
        .filter((m) => m[1] !== "node:crypto")
        .map((m) => `${posix(relative(ROOT, path))} takes ${m[1]}`),
    );
    expect(wrong).toEqual([]);
  });

  it("imports only src/core and src/schema", () => {
    const wrong = core.flatMap((path) => outsideCore(path, readFileSync(path, "utf8")));
    expect(wrong).toEqual([]);
  });

  it("would see an import of src/errors.ts", () => {
    const log = join(SRC, "core", "versions", "log.ts");
    expect(outsideCore(log, 'import { StateError } from "../../errors.js";\n')).toEqual([
      "src/core/versions/log.ts imports ../../errors.js",
    ]);
    expect(outsideCore(log, 'import { StateError } from "../errors.js";\n')).toEqual([]);
  });

  it("reads no environment, no clock and no randomness", () => {
    const wrong: string[] = [];
    for (const path of core) {
      const text = code(readFileSync(path, "utf8"));
      for (const [pattern, what] of CORE_BANNED) {
        if (pattern.test(text)) wrong.push(`${posix(relative(ROOT, path))} ${what}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("would see a clock read", () => {
    expect(CORE_BANNED.some(([p]) => p.test(code("const t = Date.now();")))).toBe(true);
    expect(CORE_BANNED.some(([p]) => p.test(code("// Date.now() is not called here")))).toBe(false);
  });
});

/** The relative imports of a core module that leave src/core and src/schema, in words. */
function outsideCore(path: string, text: string): string[] {
  return importsOf(text)
    .filter(({ spec }) => spec.startsWith("."))
    .filter(({ spec }) => !["core", "schema"].includes(unitOf(resolve(dirname(path), spec))))
    .map(({ spec }) => `${posix(relative(ROOT, path))} imports ${spec}`);
}

describe("file length", () => {
  const files = ["src", "test", "bench", "scripts"].flatMap((folder) => walk(join(ROOT, folder)));
  const lines = (path: string) => readFileSync(path, "utf8").split("\n").length - 1;

  it(`no file passes ${MAX_LINES} lines`, () => {
    const long = files
      .filter((path) => lines(path) > MAX_LINES)
      .map((path) => posix(relative(ROOT, path)));
    expect(long).toEqual([]);
  });
});
