import { checkedCatalog } from "../../schema/catalog-check.js";
import type { MemoryConfig, SessionsConfig } from "../../schema/config.js";
import { Catalog } from "../../schema/engram.js";
import { CATALOG_PATH, engramPath, FOCUS_PATH, MEMORY_DIR } from "../model/paths.js";
import { countLoneSurrogates } from "../model/text.js";
import { DOCUMENT_DIRS } from "../versions/documents.js";
import { VERSION_LOG_PATH } from "../versions/log.js";
import { compareFindings, type Finding, type FindingCode } from "./findings.js";
import { checkLoneSurrogates } from "./unicode.js";
import { verifyMemory } from "./verify.js";
import { verifyDocuments } from "./verify-sessions.js";
import { verifyVersionLog } from "./version-log.js";

/**
 * What `director verify` says about a file's own content, and so what a reader refuses:
 * schema, canonical form, hash, id, path, layout, text that no UTF-8 file can hold. Findings
 * that relate a file to files not written with it (missing, unlisted, budgets, a stale
 * MEMORY.md) are the tree's, not the write's: a write may leave them for the next step.
 */
const CONTENT_CODES: ReadonlySet<FindingCode> = new Set<FindingCode>([
  "catalog-invalid",
  "catalog-not-canonical-form",
  "catalog-hash",
  "catalog-unsorted",
  "duplicate-id",
  "duplicate-path",
  "entry-path",
  "bad-layout",
  "engram-invalid",
  "engram-not-canonical-form",
  "engram-hash",
  "engram-id",
  "engram-path",
  "engram-window",
  "entry-mismatch",
  "lone-surrogate",
  "document-path",
  "document-invalid",
  "version-log-invalid",
  "version-log-mismatch",
]);

export interface MemoryWrite {
  /** Repository-relative POSIX path. */
  path: string;
  text: string;
}

/**
 * Checks the memory files a step is about to write with the checks `director verify` and the
 * readers apply, before anything lands on disk: the catalog and every engram against their
 * zod schemas, canonical form and hashes, each document and the version log as their readers
 * parse them. Files the step does not write are not read; findings that need them are left
 * to `director verify`. Empty when every file would be read back.
 */
export function checkMemoryWrites(
  writes: readonly MemoryWrite[],
  config: {
    memory: MemoryConfig;
    sessions: Pick<SessionsConfig, "documents_max_bytes" | "episodes_max">;
  },
): Finding[] {
  const written = new Map(writes.map((w) => [w.path, w.text]));
  const catalogText = written.get(CATALOG_PATH);
  const tierFiles: { path: string; text: string }[] = [];
  const documents = new Map<string, string>();
  const findings: Finding[] = [];
  const add = (path: string, code: FindingCode, message: string) =>
    findings.push({ path, code, message });
  for (const [path, text] of written) {
    if (path === CATALOG_PATH || path === VERSION_LOG_PATH) continue;
    if (path === FOCUS_PATH) checkLoneSurrogates(path, text, add);
    else if (/^memory\/(st|lt)\//.test(path)) tierFiles.push({ path, text });
    else if (DOCUMENT_DIRS.some((dir) => path.startsWith(`${dir}/`))) {
      documents.set(path, text);
      checkLoneSurrogates(path, text, add);
      if (!isJson(text)) add(path, "document-invalid", "not valid JSON");
    } else if (path.startsWith(`${MEMORY_DIR}/`)) {
      add(path, "bad-layout", "is no file a Director writes under memory/");
    }
  }
  // The catalog as its readers parse it (the hand check, then zod): at 10,000 engrams the
  // full verification costs a cycle more than the cycle itself, so it runs only to word
  // the findings of a catalog the readers would refuse.
  const catalogReads = catalogText !== undefined && readsAsCatalog(catalogText);
  if ((catalogText !== undefined && !catalogReads) || tierFiles.length > 0) {
    const tree = verifyMemory({
      catalogText: catalogReads ? undefined : catalogText,
      files: tierFiles,
      memoryMd: undefined,
      memory: config.memory,
    });
    for (const f of tree) {
      if (!CONTENT_CODES.has(f.code) || !written.has(f.path)) continue;
      findings.push(f);
    }
  }
  if (documents.size > 0 && catalogText !== undefined) {
    for (const f of verifyDocuments({ catalogText, files: documents, budgets: config.sessions })) {
      if (CONTENT_CODES.has(f.code) && written.has(f.path)) findings.push(f);
    }
  }
  const log = written.get(VERSION_LOG_PATH);
  if (log !== undefined) {
    for (const f of verifyVersionLog(log, catalogText)) {
      if (CONTENT_CODES.has(f.code)) findings.push(f);
    }
  }
  return findings.sort(compareFindings);
}

function readsAsCatalog(text: string): boolean {
  // Most catalogs hold no surrogate at all: one regex scan, then the count only if they do.
  if (/[\uD800-\uDFFF]/.test(text) && countLoneSurrogates(text) > 0) return false;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return false;
  }
  const catalog = checkedCatalog(json) ?? Catalog.safeParse(json).data;
  if (catalog === undefined) return false;
  return catalog.entries.every((e) => e.path === engramPath(e.scope, e.version, e.engram_id));
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
