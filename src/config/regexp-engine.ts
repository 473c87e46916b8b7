import { createRequire } from "node:module";

// node:v8 is loaded only when a config names its own patterns: every command checks the
// config, few configs have patterns, and loading it costs start-up.
const require = createRequire(import.meta.url);
const setFlagsFromString = (flags: string): void =>
  (require("node:v8") as typeof import("node:v8")).setFlagsFromString(flags);

/**
 * Turns on V8's linear-time regular expression engine for this process, once, before a
 * repository's `[redaction] patterns` are compiled (`src/core/ingest/custom-patterns.ts`
 * only checks that it is on: a process-wide flag is no business of the pure core). The `l`
 * flag then compiles a pattern for a breadth-first simulation, time linear in the input; and
 * a pattern compiled afterwards runs on the fast backtracking engine until one search
 * backtracks 50,000 times, then on the linear one: a budget per search, the same matches.
 * Returns whether the engine is there (a Node.js without it refuses custom patterns).
 */
export function enableLinearRegExp(): boolean {
  if (enabled !== undefined) return enabled;
  if (!linearFlagWorks()) setFlagsFromString("--enable-experimental-regexp-engine");
  enabled = linearFlagWorks();
  if (enabled) setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
  return enabled;
}

let enabled: boolean | undefined;

function linearFlagWorks(): boolean {
  try {
    // A variable flag: a literal `/a/l` would not parse where the engine is off.
    const linear = "l";
    return new RegExp("a", linear).flags.includes(linear);
  } catch {
    return false;
  }
}
