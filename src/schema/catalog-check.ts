import type { Catalog, CatalogEntry } from "./engram.js";
import { isCount, isObject, isSha256Ref, isUtcTime } from "./formats.js";

/**
 * `memory/catalog.json` checked by hand, without zod: a no-op `director run` on 10,000
 * engrams spent most of its time in zod walking the entries, and commands that only read the
 * catalog start faster without loading zod at all. The result is exactly what
 * `Catalog.safeParse` gives for a catalog it accepts (the same values, the same key order:
 * known keys first, unknown ones after, in their order), and `undefined` at the first doubt:
 * the caller then asks the zod schema, which names the field. `test/schema/catalog-check.test.ts`
 * holds the two to agreement.
 */
export function checkedCatalog(json: unknown): Catalog | undefined {
  if (!isObject(json)) return undefined;
  const { catalog_version, created_at, hash, entries } = json;
  if (!isCount(catalog_version) || !isUtcTime(created_at) || !isSha256Ref(hash)) return undefined;
  if (!Array.isArray(entries)) return undefined;
  const checked: CatalogEntry[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const entry = checkedEntry(entries[i]);
    if (entry === undefined) return undefined;
    checked[i] = entry;
  }
  const out: Record<string, unknown> = { catalog_version, created_at, hash, entries: checked };
  return withUnknownKeys(out, json, CATALOG_KEYS) as Catalog | undefined;
}

const CATALOG_KEYS = new Set(["catalog_version", "created_at", "hash", "entries"]);
const ENTRY_KEYS = new Set(["engram_id", "scope", "version", "path", "hash", "topics", "bytes"]);

// The patterns of src/schema/engram.ts and common.ts (EngramId, BatchId).
const ENGRAM_ID = /^e_[0-9a-f]{32}$/;
const BATCH_ID = /^\d{8}-\d{6}Z$/;

function checkedEntry(v: unknown): CatalogEntry | undefined {
  if (!isObject(v)) return undefined;
  const { engram_id, scope, version, path, hash, topics, bytes } = v;
  if (typeof engram_id !== "string" || !ENGRAM_ID.test(engram_id)) return undefined;
  if (scope !== "st" && scope !== "lt") return undefined;
  if (typeof version !== "string" || !BATCH_ID.test(version)) return undefined;
  if (typeof path !== "string" || !isSha256Ref(hash)) return undefined;
  if (!Array.isArray(topics)) return undefined;
  for (const topic of topics) if (typeof topic !== "string") return undefined;
  if (!isCount(bytes) || bytes === 0) return undefined;
  const out: Record<string, unknown> = {
    engram_id,
    scope,
    version,
    path,
    hash,
    topics: topics.slice(),
    bytes,
  };
  return withUnknownKeys(out, v, ENTRY_KEYS) as CatalogEntry | undefined;
}

/** Copies the keys the schema does not know after the known ones, as a loose zod object does. */
function withUnknownKeys(
  out: Record<string, unknown>,
  from: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  for (const key of Object.keys(from)) {
    if (known.has(key)) continue;
    // An own `__proto__` key (JSON.parse makes one) is zod's to handle, not ours.
    if (key === "__proto__") return undefined;
    out[key] = from[key];
  }
  return out;
}

/**
 * Where a `__proto__` key sits in parsed JSON (`entries[0].__proto__`), or undefined. zod
 * drops such a key while copying, so a catalog holding one would be read (and sealed again)
 * without it: readers refuse it instead. Iterative: hostile nesting cannot overflow the stack.
 */
export function protoKeyPath(json: unknown): string | undefined {
  const stack: { value: unknown; at: string }[] = [{ value: json, at: "" }];
  while (stack.length > 0) {
    const { value, at } = stack.pop() as { value: unknown; at: string };
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        stack.push({ value: item, at: `${at}[${i}]` });
      });
      continue;
    }
    for (const key of Object.keys(value)) {
      const path = at === "" ? key : `${at}.${key}`;
      if (key === "__proto__") return path;
      stack.push({ value: (value as Record<string, unknown>)[key], at: path });
    }
  }
  return undefined;
}
