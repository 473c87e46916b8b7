/**
 * No import circles among the modules of src/: every module can be read, tested and moved
 * with only what it imports below it. Type-only imports count too: a circle of types still
 * ties two modules' meanings together (neither can be understood or moved alone), and the
 * fix, the shared type moved to a lower module, is cheap. Dynamic `import()` counts as well:
 * loading late saves start-up, it does not make the dependency go away.
 */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, posix, ROOT, SRC, walk } from "./source-tree.js";

type Graph = ReadonlyMap<string, readonly string[]>;

/** Each module's relative imports, as the source files they name (`x.js` is `x.ts`). */
function graphOf(texts: ReadonlyMap<string, string>): Graph {
  const graph = new Map<string, string[]>();
  for (const [path, text] of texts) {
    const targets = importsOf(text)
      .filter(({ spec }) => spec.startsWith("."))
      .map(({ spec }) => resolve(dirname(path), spec).replace(/\.js$/, ".ts"))
      .filter((target) => texts.has(target));
    graph.set(path, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The circles of a graph: its strongly connected components of more than one module, or of
 * one that imports itself (Tarjan's algorithm), each sorted, in words.
 */
function circlesOf(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) {
      out.push(component.map((path) => posix(relative(ROOT, path))).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("import circles", () => {
  it("src/ has none", () => {
    const texts = new Map(walk(SRC).map((path) => [path, readFileSync(path, "utf8")] as const));
    expect(circlesOf(graphOf(texts))).toEqual([]);
  });

  it("finds one through a type-only import or a dynamic import, not through a comment", () => {
    const a = resolve(SRC, "x", "a.ts");
    const b = resolve(SRC, "x", "b.ts");
    const c = resolve(SRC, "x", "c.ts");
    const found = (texts: [string, string][]) => circlesOf(graphOf(new Map(texts)));
    expect(
      found([
        [a, 'import { b } from "./b.js";\n'],
        [b, 'import type { C } from "./c.js";\n'],
        [c, 'export async function c() {\n  return (await import("./a.js")).a;\n}\n'],
      ]),
    ).toEqual([["src/x/a.ts", "src/x/b.ts", "src/x/c.ts"]]);
    expect(
      found([
        [a, 'import { b } from "./b.js";\n'],
        [b, '// import { a } from "./a.js";\n'],
      ]),
    ).toEqual([]);
  });
});
