/**
 * What `npm pack` would publish: the built commands, the documentation a user is pointed to
 * (by the README and by the config that `director init` writes), the licence and the
 * changelog; no tests, benchmarks, scripts, fixtures, TypeScript sources or source maps.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderDefaultConfig } from "../../src/config/render.js";
import { assertBuilt, ROOT } from "../support/bins.js";

interface PackJson {
  files: { path: string }[];
}

function packedFiles(): string[] {
  assertBuilt();
  // --ignore-scripts: list what is there, without the build `prepack` would run.
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [pack] = JSON.parse(out) as PackJson[];
  return (pack?.files ?? []).map((f) => f.path).sort();
}

/** Every `docs/...` path a text mentions (links and plain mentions alike). */
function docsNamedIn(text: string): string[] {
  return [...text.matchAll(/docs\/[\w./-]+\.(?:md|json)/g)].map((m) => m[0]);
}

describe("the npm package", () => {
  const files = packedFiles();

  it("ships the commands, the licence, the changelog and the README", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
      license: string;
    };
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(ROOT, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
    for (const bin of Object.values(pkg.bin)) expect(files).toContain(bin);
    // The ingest worker threads load this script by path at run time, beside the bundle.
    expect(files).toContain("dist/bin/ingest-worker.js");
    expect(files).toContain("dist/src/ingest/ingest-worker.js");
    for (const file of ["LICENSE", "README.md", "CHANGELOG.md", "package.json"]) {
      expect(files).toContain(file);
    }
  });

  it("ships every document the README and the default config point to", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const named = new Set([...docsNamedIn(readme), ...docsNamedIn(renderDefaultConfig())]);
    expect(named).toContain("docs/configuration.md");
    expect(named).toContain("docs/schema/config.schema.json");
    for (const doc of named) expect(files, doc).toContain(doc);
  });

  it("ships nothing else: no test, benchmark, script, fixture, TypeScript source or map", () => {
    const top = ["LICENSE", "README.md", "CHANGELOG.md", "package.json"];
    const other = files.filter(
      (f) =>
        !top.includes(f) &&
        !f.startsWith("dist/src/") &&
        !f.startsWith("dist/bin/") &&
        !f.startsWith("docs/"),
    );
    expect(other).toEqual([]);
    // The CommonJS bins, the hot script and its loader, and its code cache are the only other files.
    const code = (f: string) =>
      f.endsWith(".js") || /^dist\/bin\/[a-z-]+\.cjs$/.test(f) || f === "dist/bin/hot.cjs.cache";
    expect(files.filter((f) => /^dist\/(src|bin)\//.test(f) && !code(f))).toEqual([]);
    expect(files).toContain("dist/bin/hot.cjs.cache");
    expect(files.filter((f) => /(^|\/)(test|bench|fixtures?)(\/|$)/.test(f))).toEqual([]);
  });
});
