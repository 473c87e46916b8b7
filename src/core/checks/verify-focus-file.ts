import { Catalog, Engram } from "../../schema/engram.js";
import type { Finding } from "./findings.js";
import { attempt, parseJson } from "./verify-document.js";
import type { FocusSettings } from "./verify-focus.js";
import { checkFocusFile, type EngramReader } from "./verify-focus-sources.js";

/** Schema-checked engrams, for `director verify` and the guard: the Director reads no other. */
const validEngram: EngramReader = (text) => {
  const json = parseJson(text);
  if (!json.ok) return undefined;
  const parsed = attempt(() => Engram.safeParse(json.value));
  return parsed.ok && parsed.value.success ? parsed.value.data : undefined;
};

/** `memory/catalog.json` as the focus check reads it; undefined when not a valid catalog. */
function validCatalog(text: string | undefined): Catalog | undefined {
  if (text === undefined) return undefined;
  const json = parseJson(text);
  if (!json.ok) return undefined;
  const parsed = attempt(() => Catalog.safeParse(json.value));
  return parsed.ok && parsed.value.success ? parsed.value.data : undefined;
}

/**
 * `director verify` and the PR guard: MEMORY.md as the Director would generate it from these
 * files. An invalid catalog or a missing MEMORY.md are `verifyMemory`'s findings, not these.
 */
export function verifyFocusFile(input: {
  catalogText: string | undefined;
  memoryMd: string | undefined;
  text: (path: string) => string | undefined;
  documents: ReadonlyMap<string, string>;
  memory: FocusSettings;
}): Finding[] {
  const catalog = validCatalog(input.catalogText);
  if (catalog === undefined || input.memoryMd === undefined) return [];
  const finding = checkFocusFile(input.memoryMd, { ...input, catalog, readEngram: validEngram });
  return finding ? [finding] : [];
}
