/**
 * `npm run test:fast` covers the pure core: every module of src/core is loaded (not only
 * named in a type) by some test of the fast project, directly or through other modules. A
 * core module tested only through the bins waits for the slow suite to say it broke.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { FAST } from "../../vitest.config.js";
import { importsOf, posix, ROOT, SRC, walk } from "./source-tree.js";

/**
 * Core modules whose only tests run the bins or servers, with the test that covers them.
 * No module joins this list; one leaves it with a pure test in test/core, or a pure test
 * file added to FAST (vitest.config.ts).
 */
const KNOWN_GAPS: Record<string, string> = {
  "src/core/checks/guard.ts": "test/director/guard.test.ts",
  "src/core/checks/verify-focus-file.ts": "test/director/focus-integrity.test.ts",
  "src/core/checks/verify-focus-sources.ts": "test/director/focus-integrity.test.ts",
  "src/core/checks/verify-links.ts": "test/director/poisoned-memory.test.ts",
  "src/core/graph/lifecycle.ts": "test/graph/learnings.test.ts",
  "src/core/ingest/seed-envelopes.ts": "test/director/from-seed.test.ts",
  "src/core/proposal/plan.ts": "test/director/propose-plan.test.ts",
  "src/core/proposal/proposal.ts": "test/github/pr-flow.test.ts",
  "src/core/rendering/proposal-plan.ts": "test/director/propose-plan.test.ts",
  "src/core/swarm/drift.ts": "test/worker/drift.test.ts",
  "src/core/swarm/liveness.ts": "test/director/liveness.test.ts",
  "src/core/sync/graphiti-episode.ts": "test/sync/graphiti.test.ts",
  "src/core/sync/markdown.ts": "test/sources/markdown.test.ts",
  "src/core/versions/knowledge-view.ts": "test/sessions/session-claims-cache.test.ts",
};

/** The modules a test loads at run time, following relative imports (type-only ones not). */
function loadedBy(roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const { spec, names } of importsOf(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".") || /^type\s/.test(names)) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      if (existsSync(target)) stack.push(target);
    }
  }
  return seen;
}

describe("the fast tests", () => {
  it("load every module of the pure core, but for the known gaps", () => {
    const roots = fg.sync([...FAST], { cwd: ROOT, absolute: true });
    expect(roots.length).toBeGreaterThan(50);
    const loaded = loadedBy(roots);
    const core = walk(join(SRC, "core")).filter((f) => f.endsWith(".ts"));
    const unloaded = core
      .filter((f) => !loaded.has(f))
      .map((f) => posix(relative(ROOT, f)))
      // A module of types only has nothing to run.
      .filter((f) =>
        /^\s*export\s+(?!type\b|interface\b)/m.test(readFileSync(join(ROOT, f), "utf8")),
      )
      .filter((f) => KNOWN_GAPS[f] === undefined);
    expect(unloaded, "core modules no fast test loads").toEqual([]);
  });
});
