/**
 * The config read without zod must be the config zod reads: whatever the quick check accepts,
 * `Config.safeParse` accepts with the same value and key order; whatever zod refuses, the
 * quick check refuses too (and zod then names the problem). It may doubt more than zod
 * refuses, never less, but never the config `director init` writes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { configShape } from "../../scripts/gen-schema.js";
import { quickConfig } from "../../src/config/load.js";
import { renderDefaultConfig } from "../../src/config/render.js";
import { Config, defaultConfig } from "../../src/schema/config.js";
import { CONFIG_SHAPE } from "../../src/schema/config-shape.js";
import { type ShapeNode, shapedValue } from "../../src/schema/shape.js";

/** Values on the edges of every check, of every type. */
const ODD: unknown[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  3600,
  3601,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  100,
  101,
  "",
  "x",
  "ENGRAM",
  "a.b",
  "a..b",
  "main",
  "-main",
  "bad name",
  "owner/name",
  "https://a.example",
  "http://localhost:8000/mcp/",
  "ftp://a.example",
  "https://a.example/x?y=1",
  " https://a.example",
  "https://user:pw@a.example",
  "NOTION_TOKEN",
  "1bad",
  "on_merge",
  "neo4j",
  "falkordb",
  "private",
  "x".repeat(65),
  "x".repeat(129),
  true,
  false,
  null,
  [],
  [1],
  ["a"],
  ["a", "b"],
  [60, 300, 1800],
  ["nats://h:4222"],
  ["git:origin"],
  ["memory"],
  {},
  { a: 1 },
  new Date(0),
];

/** Every key of the shape, tables included, as paths. */
function keyPaths(node: ShapeNode, at: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    out.push([...at, key]);
    out.push(...keyPaths(child, [...at, key]));
  }
  return out;
}

const PATHS = keyPaths(CONFIG_SHAPE);

/** The defaults with a few keys changed: set to an edge value, removed, or joined by a stranger. */
const mutated = fc
  .array(
    fc.tuple(
      fc.constantFrom(...PATHS),
      fc.constantFrom(...ODD),
      fc.constantFrom("set", "set", "set", "delete", "unknown"),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((changes) => {
    const raw = JSON.parse(JSON.stringify(defaultConfig())) as Record<string, unknown>;
    for (const [path, value, mode] of changes) {
      let table: Record<string, unknown> = raw;
      for (const step of path.slice(0, -1)) {
        const next = table[step];
        if (typeof next !== "object" || next === null || Array.isArray(next)) break;
        table = next as Record<string, unknown>;
      }
      const last = path[path.length - 1] as string;
      if (mode === "set") table[last] = structuredClone(value);
      else if (mode === "delete") delete table[last];
      else table[`${last}_x`] = 1;
    }
    return raw;
  });

function agree(raw: unknown): void {
  const quick = shapedValue(CONFIG_SHAPE, raw);
  const slow = Config.safeParse(raw);
  if (quick === undefined) return;
  expect(slow.success, JSON.stringify(raw)).toBe(true);
  if (!slow.success) return;
  expect(quick).toEqual(slow.data);
  expect(JSON.stringify(quick)).toBe(JSON.stringify(slow.data));
}

describe("the config without zod", () => {
  it("reads the zod schema's own JSON Schema (run `npm run schema` after changing it)", () => {
    expect(CONFIG_SHAPE).toEqual(configShape());
  });

  it("gives the defaults, and the config director init writes, exactly as zod does", () => {
    expect(quickConfig("")).toEqual(defaultConfig());
    expect(JSON.stringify(quickConfig(""))).toBe(JSON.stringify(defaultConfig()));
    expect(quickConfig(renderDefaultConfig())).toEqual(defaultConfig());
    agree({});
  });

  it("never accepts what zod refuses, and agrees on what both accept", () => {
    let accepted = 0;
    fc.assert(
      fc.property(mutated, (raw) => {
        agree(raw);
        if (shapedValue(CONFIG_SHAPE, raw) !== undefined) accepted++;
      }),
      { numRuns: 3000 },
    );
    // The check is exercised: many changed configs are valid and read without zod.
    expect(accepted).toBeGreaterThan(300);
  });

  it("accepts valid changed values, not only the defaults", () => {
    const config = quickConfig(
      '[memory]\nbuffer_max_events = 5000\nbuffer_high_water_ratio = 0.9\n[github]\nlabels = ["a", "b"]\napi_url = "https://ghe.example/api/v3"\n',
    );
    expect(config?.memory.buffer_max_events).toBe(5000);
    expect(config?.github.api_url).toBe("https://ghe.example/api/v3");
  });

  it("leaves to zod what breaks a rule across keys or is not TOML", () => {
    expect(quickConfig("[memory]\nbuffer_keep_recent_events = 100000\n")).toBeUndefined();
    expect(quickConfig("[memory\n")).toBeUndefined();
    expect(quickConfig('[memory]\nbuffer_max_events = "many"\n')).toBeUndefined();
  });

  it("reads a union by its first accepting option, and leaves a filled record to zod", () => {
    const tana = (body: string) => quickConfig(`[sync.tana]\n${body}\n`)?.sync.tana;
    expect(tana('target_node_id = "LIBRARY"')?.target_node_id).toBe("LIBRARY");
    expect(tana('target_node_id = "Ab3_x-9Q"')?.target_node_id).toBe("Ab3_x-9Q");
    expect(tana('target_node_id = "no"')).toBeUndefined();
    expect(tana("")?.entities).toEqual({});
    // Its key rules are not in the JSON Schema: zod reads it, whatever the keys.
    expect(tana('entities = { "person:ada" = "Ab3_x-9Q" }')).toBeUndefined();
    expect(Config.safeParse({ sync: { tana: { entities: { "": "Ab3_x-9Q" } } } }).success).toBe(
      false,
    );
  });
});
