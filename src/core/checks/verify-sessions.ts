import { Catalog, EntityRef } from "../../schema/engram.js";
import { MAX_ENGRAM_ENTITIES } from "../../schema/formats.js";
import { sha256Hex } from "../model/canonical.js";
import { CATALOG_PATH } from "../model/paths.js";
import { CORE_DIR, KNOWLEDGE_DIR, SESSIONS_DIR, STATE_DIR } from "../versions/documents.js";
import { KNOWLEDGE_KINDS } from "../versions/items.js";
import { compareFindings, type Finding, oneLine } from "./findings.js";

export interface DocumentsInput {
  /** `memory/catalog.json`, undefined when missing. */
  catalogText: string | undefined;
  /** Every file under memory/state, memory/core, memory/sessions and memory/knowledge. */
  files: ReadonlyMap<string, string>;
  budgets: { documents_max_bytes: number; episodes_max: number };
}

const KEY = "[a-z0-9][a-z0-9_.-]{0,63}";
const PATHS: Record<string, RegExp> = {
  state: new RegExp(`^${STATE_DIR}/${KEY}\\.json$`),
  core: new RegExp(`^${CORE_DIR}/${KEY}\\.json$`),
  session: new RegExp(`^${SESSIONS_DIR}/s_[0-9a-f]{16}\\.json$`),
  knowledge: new RegExp(
    `^${KNOWLEDGE_DIR}/(${[...KNOWLEDGE_KINDS, "evidence"].join("|")})\\.json$`,
  ),
};

/**
 * Checks the session documents the catalog lists: each file present with the hash and size
 * listed, at the path its kind calls for, none unlisted, and the `[sessions]` budgets. Pure;
 * catalog problems themselves are `verifyMemory`'s to report.
 */
export function verifyDocuments(input: DocumentsInput): Finding[] {
  const findings: Finding[] = [];
  const add = (path: string, code: Finding["code"], message: string) =>
    findings.push({ path, code, message: oneLine(message) });
  let documents: NonNullable<Catalog["documents"]> = [];
  if (input.catalogText !== undefined) {
    try {
      const parsed = Catalog.safeParse(JSON.parse(input.catalogText));
      if (parsed.success) documents = parsed.data.documents ?? [];
    } catch {
      // An unreadable catalog is reported by verifyMemory.
    }
  }
  const listed = new Set<string>();
  let bytes = 0;
  let episodes = 0;
  for (const doc of documents) {
    listed.add(doc.path);
    if (!PATHS[doc.kind]?.test(doc.path)) {
      add(doc.path, "document-path", `is not where a ${doc.kind} document goes`);
    }
    const text = input.files.get(doc.path);
    if (text === undefined) {
      add(doc.path, "missing-file", `listed in the catalog's documents (${doc.kind}), missing`);
      continue;
    }
    const hash = `sha256:${sha256Hex(text)}`;
    const size = Buffer.byteLength(text, "utf8");
    bytes += size;
    if (hash !== doc.hash || size !== doc.bytes) {
      add(
        doc.path,
        "document-hash",
        `expected ${doc.hash} (${doc.bytes} bytes) as the catalog lists, found ${hash} (${size} bytes)`,
      );
      continue;
    }
    if (doc.kind === "state" || doc.kind === "core") {
      const problem = entitiesProblem(text);
      if (problem !== undefined) add(doc.path, "document-invalid", problem);
    }
    if (doc.kind === "session") {
      try {
        const value = JSON.parse(text) as { episodes?: unknown };
        if (Array.isArray(value.episodes)) episodes += value.episodes.length;
        else add(doc.path, "document-invalid", "episodes: expected an array");
      } catch {
        add(doc.path, "document-invalid", "not valid JSON");
      }
    }
  }
  for (const path of input.files.keys()) {
    if (!listed.has(path))
      add(path, "unlisted-file", "a session document the catalog does not list");
  }
  if (bytes > input.budgets.documents_max_bytes) {
    add(
      CATALOG_PATH,
      "document-budget",
      `session documents hold ${bytes} bytes, over [sessions] documents_max_bytes = ${input.budgets.documents_max_bytes}`,
    );
  }
  if (episodes > input.budgets.episodes_max) {
    add(
      CATALOG_PATH,
      "document-budget",
      `session documents hold ${episodes} episodes, over [sessions] episodes_max = ${input.budgets.episodes_max}`,
    );
  }
  return findings.sort(compareFindings);
}

/**
 * What is wrong with a state or core document's `entities`, if anything: absent is fine
 * (documents written before the field), else the ids as written: sorted, unique, valid
 * `kind:key`, at most `MAX_ENGRAM_ENTITIES`.
 */
function entitiesProblem(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not valid JSON";
  }
  const entities = (value as { entities?: unknown } | null)?.entities;
  if (entities === undefined) return undefined;
  if (!Array.isArray(entities)) return "entities: expected an array of entity ids";
  if (entities.length > MAX_ENGRAM_ENTITIES) {
    return `entities: ${entities.length} ids, at most ${MAX_ENGRAM_ENTITIES}`;
  }
  for (let i = 0; i < entities.length; i++) {
    const id = entities[i];
    if (!EntityRef.safeParse(id).success) {
      return `entities.${i}: expected kind:key with kind person|project|component|file|issue|pr|commit, found ${JSON.stringify(id)}`;
    }
    if (i > 0 && !((entities[i - 1] as string) < (id as string))) {
      return `entities.${i}: expected sorted, unique ids, found ${JSON.stringify(id)} after ${JSON.stringify(entities[i - 1])}`;
    }
  }
  return undefined;
}
