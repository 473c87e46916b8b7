import type { MemoryConfig } from "../../schema/config.js";
import type { Catalog, Engram } from "../../schema/engram.js";
import { createRedactor, type Redactor } from "../ingest/redact.js";
import { CATALOG_PATH, FOCUS_PATH } from "../model/paths.js";
import { type FocusDocuments, renderFocusFor } from "../rendering/focus.js";
import { NOW_MAX_WORKERS } from "../swarm/swarm.js";
import type { Finding } from "./findings.js";
import { show } from "./verify-document.js";

/**
 * MEMORY.md is derived: agents read it first in every session, so a line added by hand (an
 * instruction to run something) must not pass as memory. These checks regenerate it with the
 * very renderer the Director writes it with, from the same inputs, and compare the bytes.
 */

/** The config a focus view depends on. */
export type FocusSettings = Pick<
  MemoryConfig,
  "memory_md_max_bytes" | "memory_md_max_items" | "memory_md_update_cadence"
>;

/** What the Director renders MEMORY.md from. */
export interface FocusSources {
  catalog: Catalog;
  /** engram_id -> engram: at least the catalog's focus candidates (others are ignored). */
  engrams: ReadonlyMap<string, Engram>;
  /** The core and state documents the catalog lists, undefined when it lists none. */
  documents: FocusDocuments | undefined;
  memory: FocusSettings;
}

/** The MEMORY.md the Director writes for `sources` and the "Now" lines it last rendered. */
export function generatedFocus(sources: FocusSources, now?: readonly string[]): string {
  const live = sources.memory.memory_md_update_cadence === "on_merge" ? undefined : now;
  return renderFocusFor(sources.catalog, sources.engrams, sources.memory, live, sources.documents)
    .text;
}

/** Where two texts first differ, by line (1-based), with both lines; undefined when equal. */
export function firstDifferentLine(
  found: string,
  expected: string,
): { line: number; found: string | undefined; expected: string | undefined } | undefined {
  if (found === expected) return undefined;
  const a = found.split("\n");
  const b = expected.split("\n");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  // The empty string after the last newline is the end of the file, not a line.
  const at = (lines: string[]) =>
    i === lines.length - 1 && lines[i] === "" ? undefined : lines[i];
  return { line: i + 1, found: at(a), expected: at(b) };
}

/** `line N is "…", expected "…"` for the first line that differs; undefined when equal. */
export function focusDifference(found: string, expected: string): string | undefined {
  const d = firstDifferentLine(found, expected);
  if (d === undefined) return undefined;
  const what = (line: string | undefined) => (line === undefined ? "end of file" : show(line));
  return `line ${d.line} is ${what(d.found)}, expected ${what(d.expected)}`;
}

/** The finding for a MEMORY.md that is not what the Director generates. */
export function focusContentFinding(found: string, expected: string): Finding | undefined {
  const difference = focusDifference(found, expected);
  if (difference === undefined) return undefined;
  return {
    path: FOCUS_PATH,
    code: "focus-content",
    message:
      `is not what the Director generates from ${CATALOG_PATH} (${difference}); ` +
      "it is never edited by hand: the next director run rewrites it",
  };
}

const NOW_HEADING = "## Now";
const FOOTER = /^_(\d+) more items? in the engram files; see memory\/catalog\.json\._$/m;
// A "Now" line is `<worker id>: <stage>[, issue …][, N%]` (see `nowLines`).
const NOW_LINE = /^[A-Za-z0-9_-]{1,128}: \S/;

/**
 * Checks a MEMORY.md against what the Director generates from `sources`. The "Now" section
 * (periodic and hybrid cadence) is live telemetry that only the Director's state folder
 * holds: its lines are taken from the file itself, must have a worker line's shape, and
 * cannot hide anything else (every other byte, and where the section sits, is regenerated).
 */
export function verifyFocusContent(text: string, sources: FocusSources): Finding | undefined {
  if (sources.memory.memory_md_update_cadence === "on_merge") {
    return focusContentFinding(text, generatedFocus(sources));
  }
  const now = nowLinesOf(text);
  const bad = now.find((line) => !NOW_LINE.test(line));
  if (bad !== undefined) {
    return {
      path: FOCUS_PATH,
      code: "focus-content",
      message: `its "Now" section holds ${show(bad)}, which is not a worker's status line; the next director run rewrites it`,
    };
  }
  // The Director writes a worker's id and stage as ingest left them: redacted. A line the
  // redactor still finds something in was not written by it.
  const secret = now.find((line) => builtInRedactor().redact(line).count > 0);
  if (secret !== undefined) {
    return {
      path: FOCUS_PATH,
      code: "focus-content",
      message: `its "Now" section holds a line with a secret in it (${show(builtInRedactor().redact(secret).text)}), which the Director never writes; the next director run rewrites it`,
    };
  }
  const expected = generatedFocus(sources, now);
  if (expected === text) return undefined;
  // Now lines the Director left out for the budgets are only counted in the footer: render
  // again with as many stand-ins (they come last, so they are left out the same way).
  const shown = footerCount(text);
  const counted = footerCount(expected);
  const extra = shown - counted;
  if (extra > 0 && extra <= NOW_MAX_WORKERS) {
    const padded = [...now, ...Array.from({ length: extra }, (_, i) => `omitted-${i}: working`)];
    const again = generatedFocus(sources, padded);
    if (again === text) return undefined;
  }
  return focusContentFinding(text, expected);
}

/** The "Now" lines of a MEMORY.md, as the renderer was given them (unescaped). */
export function nowLinesOf(text: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf(NOW_HEADING);
  if (start < 0) return [];
  const out: string[] = [];
  // The heading, a blank line, then one bullet per worker.
  for (let i = start + 2; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.startsWith("- ")) break;
    out.push(line.slice(2).replace(/\\<(?=[A-Za-z/!?])/g, "<"));
  }
  return out;
}

let redactor: Redactor | undefined;
/** The built-in rules, built once: a "Now" line is checked against what ingest redacts. */
function builtInRedactor(): Redactor {
  redactor ??= createRedactor();
  return redactor;
}

function footerCount(text: string): number {
  const m = FOOTER.exec(text);
  return m ? Number(m[1]) : 0;
}
