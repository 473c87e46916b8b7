import type { MemoryConfig } from "../../schema/config.js";
import { Catalog, CatalogEntry, Engram, type Scope } from "../../schema/engram.js";
import {
  catalogHashOf,
  ENGRAM_PATH_PATTERN,
  engramHashOf,
  engramPath,
  isGitkeepPath,
  serializeCatalog,
  serializeEngram,
} from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, tierDir } from "../model/paths.js";
import { countFocusItems, parseFocusMarker } from "../rendering/focus-header.js";
import { compareFindings, type Finding, type FindingCode, oneLine } from "./findings.js";
import { checkLoneSurrogates } from "./unicode.js";
import { type Add, checkHashedDocument, isRecord, type Raw, show } from "./verify-document.js";

/** A file under `memory/st` or `memory/lt`: repo-relative POSIX path and its UTF-8 text. */
export interface MemoryFile {
  path: string;
  text: string;
}

/** Everything `verifyMemory` looks at; the caller reads the files. */
export interface VerifyInput {
  /** `memory/catalog.json`, undefined when missing. */
  catalogText: string | undefined;
  /** Every file under `memory/st` and `memory/lt`. */
  files: readonly MemoryFile[];
  /** `MEMORY.md`, undefined when missing. */
  memoryMd: string | undefined;
  memory: MemoryConfig;
}

// Hostile files can carry thousands of schema issues: keep the report readable.

interface CatalogView {
  version: number | undefined;
  hash: string | undefined;
  entryCount: number;
  // Paths named by any entry, valid or not: a broken entry does not make its file "unlisted".
  listed: Set<string>;
  entries: { index: number; entry: CatalogEntry }[];
}

interface FileView {
  bytes: number;
  raw: Raw | undefined;
}

/**
 * Checks the durable memory of a repository: catalog, engram files, budgets and MEMORY.md.
 * Pure and total: hostile input yields findings, never an exception. Findings are sorted by
 * path, then code, then message; an empty array means the tree is intact.
 */
export function verifyMemory(input: VerifyInput): Finding[] {
  const findings: Finding[] = [];
  const add: Add = (path, code, message) =>
    findings.push({ path, code, message: oneLine(message) });

  const catalog = checkCatalog(input.catalogText, add);

  const files = new Map<string, string>();
  for (const file of input.files) files.set(file.path, file.text);
  if (input.catalogText !== undefined) checkLoneSurrogates(CATALOG_PATH, input.catalogText, add);
  for (const [path, text] of files) checkLoneSurrogates(path, text, add);
  if (input.memoryMd !== undefined) checkLoneSurrogates(FOCUS_PATH, input.memoryMd, add);

  const views = new Map<string, FileView>();
  for (const [path, text] of files) {
    if (isGitkeepPath(path)) {
      if (text.length > 0)
        add(path, "bad-layout", `.gitkeep must be empty, found ${text.length} characters`);
      continue;
    }
    const match = ENGRAM_PATH_PATTERN.exec(path);
    const listed = catalog?.listed.has(path) ?? false;
    if (!match) {
      add(path, "bad-layout", "is not at memory/<st|lt>/<YYYYMMDD-HHMMSSZ>/engram_e_<32 hex>.json");
      // An unlisted stray file is only a layout problem; a listed one is checked as an engram.
      if (!listed) continue;
    } else if (catalog && !listed) {
      add(path, "unlisted-file", "is not listed in memory/catalog.json");
    }
    views.set(path, checkEngramFile(path, text, match, input.memory, add));
  }

  if (catalog) {
    checkEntriesAgainstFiles(catalog, views, add);
    checkTiers(catalog, views, input.memory, add);
  }
  checkFocus(input.memoryMd, catalog, input.memory, add);

  return findings.sort(compareFindings);
}

function checkCatalog(text: string | undefined, add: Add): CatalogView | undefined {
  if (text === undefined) {
    add(CATALOG_PATH, "catalog-missing", "is missing");
    return undefined;
  }
  const doc = checkHashedDocument(
    text,
    {
      path: CATALOG_PATH,
      schema: Catalog,
      serialize: (raw) => serializeCatalog(raw as Catalog),
      hashOf: catalogHashOf,
      invalid: "catalog-invalid",
      notCanonical: "catalog-not-canonical-form",
      hash: "catalog-hash",
    },
    add,
  );
  if (!doc) return undefined;
  const { raw, result } = doc;

  const rawEntries: unknown[] = Array.isArray(raw.entries) ? raw.entries : [];
  const listed = new Set<string>();
  for (const e of rawEntries) if (isRecord(e) && typeof e.path === "string") listed.add(e.path);

  // Salvage the valid entries of an invalid catalog, so their files are still checked.
  const entries: CatalogView["entries"] = [];
  if (result.success) {
    result.data.entries.forEach((entry, index) => {
      entries.push({ index, entry });
    });
  } else {
    rawEntries.forEach((e, index) => {
      const r = CatalogEntry.safeParse(e);
      if (r.success) entries.push({ index, entry: r.data });
    });
  }

  checkSorted(rawEntries, add);
  reportDuplicates(entries, (e) => e.engram_id, "duplicate-id", "engram_id", add);
  reportDuplicates(entries, (e) => e.path, "duplicate-path", "path", add);
  for (const { index, entry } of entries) {
    const expected = engramPath(entry.scope, entry.version, entry.engram_id);
    if (entry.path !== expected) {
      add(
        CATALOG_PATH,
        "entry-path",
        `entries[${index}].path ${show(entry.path)} should be ${expected} (from its scope, version and engram_id)`,
      );
    }
  }

  return {
    version: typeof raw.catalog_version === "number" ? raw.catalog_version : undefined,
    hash: typeof raw.hash === "string" ? raw.hash : undefined,
    entryCount: rawEntries.length,
    listed,
    entries,
  };
}

function checkSorted(rawEntries: readonly unknown[], add: Add): void {
  let outOfOrder = 0;
  let first: string | undefined;
  let previous: string | undefined;
  let previousIndex = -1;
  rawEntries.forEach((e, index) => {
    if (!isRecord(e) || typeof e.path !== "string") return;
    if (previous !== undefined && e.path < previous) {
      outOfOrder++;
      first ??= `entries[${index}] ${show(e.path)} sorts before entries[${previousIndex}] ${show(previous)}`;
    }
    previous = e.path;
    previousIndex = index;
  });
  if (first !== undefined) {
    add(
      CATALOG_PATH,
      "catalog-unsorted",
      `entries are not sorted by path (${outOfOrder} out of order): ${first}`,
    );
  }
}

function reportDuplicates(
  entries: CatalogView["entries"],
  key: (e: CatalogEntry) => string,
  code: FindingCode,
  field: string,
  add: Add,
): void {
  const seen = new Map<string, number[]>();
  for (const { index, entry } of entries) {
    const k = key(entry);
    const list = seen.get(k);
    if (list) list.push(index);
    else seen.set(k, [index]);
  }
  for (const [k, indexes] of seen) {
    if (indexes.length < 2) continue;
    const where = indexes.map((i) => `entries[${i}]`).join(", ");
    add(CATALOG_PATH, code, `${field} ${show(k)} is listed ${indexes.length} times (${where})`);
  }
}

function checkEngramFile(
  path: string,
  text: string,
  match: RegExpExecArray | null,
  memory: MemoryConfig,
  add: Add,
): FileView {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > memory.engram_max_bytes) {
    add(
      path,
      "engram-too-large",
      `is ${bytes} bytes, over engram_max_bytes ${memory.engram_max_bytes}`,
    );
  }
  const doc = checkHashedDocument(
    text,
    {
      path,
      schema: Engram,
      serialize: (raw) => serializeEngram(raw as Engram),
      hashOf: engramHashOf,
      invalid: "engram-invalid",
      notCanonical: "engram-not-canonical-form",
      hash: "engram-hash",
    },
    add,
  );
  if (!doc) return { bytes, raw: undefined };
  const { raw, result, recomputed } = doc;
  if (recomputed !== undefined) {
    const expectedId = `e_${recomputed.slice("sha256:".length, "sha256:".length + 32)}`;
    if (typeof raw.engram_id === "string" && raw.engram_id !== expectedId) {
      add(
        path,
        "engram-id",
        `engram_id ${show(raw.engram_id)} does not derive from its content (expected ${expectedId})`,
      );
    }
  }

  if (match) {
    const [, scope, version, id] = match;
    if (raw.scope !== scope)
      add(
        path,
        "engram-path",
        `scope ${show(raw.scope)} does not match its folder ${tierDir(scope as Scope)}`,
      );
    if (raw.version !== version) {
      add(
        path,
        "engram-path",
        `version ${show(raw.version)} does not match its batch folder ${version}`,
      );
    }
    if (raw.engram_id !== id) {
      add(
        path,
        "engram-path",
        `engram_id ${show(raw.engram_id)} does not match its file name engram_${id}.json`,
      );
    }
  }

  if (result.success) {
    const { start_ts, end_ts } = result.data.source_window;
    if (Date.parse(start_ts) > Date.parse(end_ts)) {
      add(
        path,
        "engram-window",
        `source_window.start_ts ${start_ts} is after source_window.end_ts ${end_ts}`,
      );
    }
  }
  return { bytes, raw };
}

function checkEntriesAgainstFiles(
  catalog: CatalogView,
  views: Map<string, FileView>,
  add: Add,
): void {
  for (const { index, entry } of catalog.entries) {
    const view = views.get(entry.path);
    if (!view) {
      // A malformed entry path is already an entry-path finding; only a well-formed one names a file.
      if (entry.path === engramPath(entry.scope, entry.version, entry.engram_id)) {
        add(
          entry.path,
          "missing-file",
          `is listed in memory/catalog.json (entries[${index}]) but does not exist`,
        );
      }
      continue;
    }
    const p = entry.path;
    if (entry.bytes !== view.bytes) {
      add(
        p,
        "entry-mismatch",
        `catalog entry bytes ${entry.bytes} differs from the file's ${view.bytes} UTF-8 bytes`,
      );
    }
    const raw = view.raw;
    if (!raw) continue;
    for (const field of ["engram_id", "scope", "version", "hash"] as const) {
      if (raw[field] !== entry[field]) {
        add(
          p,
          "entry-mismatch",
          `catalog entry ${field} ${show(entry[field])} differs from the engram's ${show(raw[field])}`,
        );
      }
    }
    if (!sameStrings(entry.topics, raw.topics)) {
      add(
        p,
        "entry-mismatch",
        `catalog entry topics ${show(entry.topics)} differ from the engram's ${show(raw.topics)}`,
      );
    }
  }
}

function checkTiers(
  catalog: CatalogView,
  views: Map<string, FileView>,
  memory: MemoryConfig,
  add: Add,
): void {
  const tiers = {
    st: {
      files: new Map<string, number>(),
      maxBytes: memory.st_max_total_bytes,
      maxFiles: memory.st_max_files,
    },
    lt: {
      files: new Map<string, number>(),
      maxBytes: memory.lt_max_total_bytes,
      maxFiles: memory.lt_max_files,
    },
  };
  for (const { entry } of catalog.entries) {
    // The file's real size when present: a lying entry must not hide an overrun.
    tiers[entry.scope].files.set(entry.path, views.get(entry.path)?.bytes ?? entry.bytes);
  }
  for (const scope of ["st", "lt"] as const) {
    const tier = tiers[scope];
    let total = 0;
    for (const bytes of tier.files.values()) total += bytes;
    if (tier.files.size > tier.maxFiles) {
      add(
        tierDir(scope),
        "tier-files",
        `lists ${tier.files.size} files, over ${scope}_max_files ${tier.maxFiles}`,
      );
    }
    if (total > tier.maxBytes) {
      add(
        tierDir(scope),
        "tier-bytes",
        `lists ${total} bytes, over ${scope}_max_total_bytes ${tier.maxBytes}`,
      );
    }
  }
}

function checkFocus(
  text: string | undefined,
  catalog: CatalogView | undefined,
  memory: MemoryConfig,
  add: Add,
): void {
  if (text === undefined) {
    if (catalog && catalog.entryCount > 0) {
      add(
        FOCUS_PATH,
        "focus-missing",
        `is missing while memory/catalog.json lists ${catalog.entryCount} engrams`,
      );
    }
    return;
  }
  const marker = parseFocusMarker(text);
  if (!marker) {
    add(
      FOCUS_PATH,
      "focus-marker",
      "has no marker line naming the catalog version and hash it was generated from",
    );
  } else if (
    catalog?.version !== undefined &&
    catalog.hash !== undefined &&
    (marker.catalog_version !== catalog.version || marker.catalog_hash !== catalog.hash)
  ) {
    add(
      FOCUS_PATH,
      "focus-stale",
      `was generated from catalog version ${marker.catalog_version} hash ${marker.catalog_hash}, ` +
        `but memory/catalog.json is version ${catalog.version} hash ${show(catalog.hash)}`,
    );
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > memory.memory_md_max_bytes) {
    add(
      FOCUS_PATH,
      "focus-bytes",
      `is ${bytes} bytes, over memory_md_max_bytes ${memory.memory_md_max_bytes}`,
    );
  }
  const items = countFocusItems(text);
  if (items > memory.memory_md_max_items) {
    add(
      FOCUS_PATH,
      "focus-items",
      `has ${items} items, over memory_md_max_items ${memory.memory_md_max_items}`,
    );
  }
}

function sameStrings(expected: readonly string[], found: unknown): boolean {
  if (!Array.isArray(found) || found.length !== expected.length) return false;
  return expected.every((item, i) => found[i] === item);
}
