import type { Catalog, Engram } from "../../schema/engram.js";
import { engramHashOf } from "../model/engram.js";
import { CATALOG_PATH, FOCUS_PATH } from "../model/paths.js";
import { focusCandidates } from "../rendering/focus.js";
import { parseFocusMarker } from "../rendering/focus-header.js";
import { focusDocumentsOf } from "../versions/step.js";
import type { Finding } from "./findings.js";
import { attempt, parseJson } from "./verify-document.js";
import { type FocusSettings, type FocusSources, verifyFocusContent } from "./verify-focus.js";

/** An engram file's text as the focus check reads it; undefined when it cannot be one. */
export type EngramReader = (text: string) => Engram | undefined;

/**
 * JSON only, for `worker check`, which loads no schema library: an engram of a hostile shape
 * that makes the renderer throw is caught by the caller and reported, never passed.
 */
export const engramJson: EngramReader = (text) => {
  const json = parseJson(text);
  if (!json.ok || typeof json.value !== "object" || json.value === null) return undefined;
  return Array.isArray(json.value) ? undefined : (json.value as Engram);
};

/** The memory files a focus check reads, as the caller found them. */
export interface FocusFiles {
  catalog: Catalog;
  /** The text of a repository file (an engram), undefined when absent. */
  text: (path: string) => string | undefined;
  /** Texts of the session documents by path (the catalog's core, state and knowledge). */
  documents: ReadonlyMap<string, string>;
  memory: FocusSettings;
  readEngram: EngramReader;
}

/**
 * The sources the Director would render MEMORY.md from. Undefined when a focus candidate is
 * missing, invalid or not the engram its entry hashes: the Director refuses to render from
 * it, and its own finding (or `worker check`'s) already fails the check. Documents that
 * cannot be loaded make the view impossible to regenerate: that is a finding, never a pass.
 */
export function focusSourcesOf(files: FocusFiles): FocusSources | Finding | undefined {
  const engrams = new Map<string, Engram>();
  for (const entry of focusCandidates(files.catalog, files.memory.memory_md_max_items * 4)) {
    const text = files.text(entry.path);
    const engram = text === undefined ? undefined : files.readEngram(text);
    if (engram === undefined) return undefined;
    const hash = attempt(() => engramHashOf(engram as unknown as Record<string, unknown>));
    if (!hash.ok || hash.value !== entry.hash) return undefined;
    engrams.set(entry.engram_id, engram);
  }
  const documents = attempt(() => focusDocumentsOf(files.catalog, files.documents));
  if (!documents.ok) {
    return {
      path: FOCUS_PATH,
      code: "focus-content",
      message: `cannot be regenerated: the core, state and knowledge documents do not load (${documents.error})`,
    };
  }
  return { catalog: files.catalog, engrams, documents: documents.value, memory: files.memory };
}

/**
 * MEMORY.md must be what the Director generates from the catalog it names. Nothing to say
 * when the file is missing or names another catalog: `verifyMemory` reports those, and
 * `worker check` says so itself. Anything that makes the regeneration throw is a finding.
 */
export function checkFocusFile(memoryMd: string, files: FocusFiles): Finding | undefined {
  if (parseFocusMarker(memoryMd)?.catalog_hash !== files.catalog.hash) return undefined;
  const result = attempt(() => {
    const sources = focusSourcesOf(files);
    if (sources === undefined) return undefined;
    return "code" in sources ? sources : verifyFocusContent(memoryMd, sources);
  });
  if (result.ok) return result.value;
  return {
    path: FOCUS_PATH,
    code: "focus-content",
    message: `cannot be regenerated from ${CATALOG_PATH}: ${result.error}`,
  };
}
