import { MIN_ENGRAM_BYTES_BOUND, minEngramBytes } from "../core/compaction/min-engram.js";
import { compileCustom, RedactionPatternError } from "../core/ingest/custom-patterns.js";
import { stateDirProblem } from "../core/model/paths.js";
import { headBranchProblem } from "../core/trust/engram-branch.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import type { Config } from "../schema/config.js";
import type { KeyLocator, Segment } from "./locate.js";
import { enableLinearRegExp } from "./regexp-engine.js";

/**
 * What every config check shares, with or without the zod schema: the rules across keys,
 * the names of keys in messages, and the error that lists every problem.
 */

export function fail(file: string, problems: ConfigProblem[]): never {
  // Stable sort: file order first, problems without a line last.
  const order = (p: ConfigProblem): number => p.line ?? Number.MAX_SAFE_INTEGER;
  const sorted = [...problems].sort((a, b) => order(a) - order(b));
  const lines = sorted.map((p) => {
    const where = p.line === undefined ? file : `${file}:${p.line}`;
    return p.key === "" ? `${where}: ${p.message}` : `${where}: ${p.key}: ${p.message}`;
  });
  throw new ConfigError(lines.join("\n"), file, sorted);
}

interface RuleProblem {
  /** The keys involved, most relevant first; the first one set in the file is reported. */
  keys: string[];
  message: string;
}

export function crossFieldProblems(
  c: Config,
  bad: readonly string[],
  locate: KeyLocator,
): ConfigProblem[] {
  const m = c.memory;
  const found: RuleProblem[] = [];
  const rule = (keys: string[], broken: boolean, message: () => string): void => {
    // A rule over a key that already has a problem would only repeat it with a default.
    const tainted = keys.some((k) => bad.some((b) => b === "" || k === b || k.startsWith(`${b}.`)));
    if (broken && !tainted) found.push({ keys, message: message() });
  };

  rule(
    ["memory.buffer_keep_recent_events", "memory.buffer_max_events"],
    m.buffer_keep_recent_events >= m.buffer_max_events,
    () =>
      `memory.buffer_keep_recent_events (${m.buffer_keep_recent_events}) must be less than ` +
      `memory.buffer_max_events (${m.buffer_max_events}): compaction never touches the newest ` +
      "window, so a window that large would leave it nothing to take",
  );
  rule(
    ["memory.buffer_low_water_ratio", "memory.buffer_high_water_ratio"],
    m.buffer_low_water_ratio >= m.buffer_high_water_ratio,
    () =>
      `memory.buffer_low_water_ratio (${m.buffer_low_water_ratio}) must be less than ` +
      `memory.buffer_high_water_ratio (${m.buffer_high_water_ratio}): compaction starts above ` +
      "the high-water mark and stops at the low-water mark",
  );
  const window = m.buffer_keep_recent_events * c.agent_bus.max_message_bytes;
  const room = m.buffer_max_bytes * m.buffer_low_water_ratio;
  rule(
    [
      "memory.buffer_keep_recent_events",
      "agent_bus.max_message_bytes",
      "memory.buffer_max_bytes",
      "memory.buffer_low_water_ratio",
    ],
    window > room,
    () =>
      "memory.buffer_keep_recent_events * agent_bus.max_message_bytes " +
      `(${m.buffer_keep_recent_events} * ${c.agent_bus.max_message_bytes} = ${num(window)}) ` +
      "must be at most memory.buffer_max_bytes * memory.buffer_low_water_ratio " +
      `(${m.buffer_max_bytes} * ${m.buffer_low_water_ratio} = ${num(room)}): otherwise the ` +
      "newest window, which compaction never touches, could alone exceed the buffer's byte " +
      "budget, and compacting only the oldest events (invariant 3) and staying within the " +
      "budget (invariant 4) could not both hold",
  );
  for (const tier of ["st", "lt"] as const) {
    const total = tier === "st" ? m.st_max_total_bytes : m.lt_max_total_bytes;
    rule(
      ["memory.engram_max_bytes", `memory.${tier}_max_total_bytes`],
      m.engram_max_bytes > total,
      () =>
        `memory.engram_max_bytes (${m.engram_max_bytes}) must be at most ` +
        `memory.${tier}_max_total_bytes (${total}): one engram must fit in the ${tier.toUpperCase()} tier`,
    );
  }
  const floor = m.engram_max_bytes < MIN_ENGRAM_BYTES_BOUND ? minEngramBytes() : 0;
  rule(
    ["memory.engram_max_bytes"],
    m.engram_max_bytes < floor,
    () =>
      `memory.engram_max_bytes (${m.engram_max_bytes}) must be at least ${floor}: the smallest ` +
      "engram (one note, its fact cut short, the fields every engram carries) takes that many bytes",
  );
  const stateProblem = stateDirProblem(c.state.dir);
  rule(
    ["state.dir"],
    stateProblem !== undefined,
    () =>
      `${JSON.stringify(c.state.dir)} ${stateProblem}: the state folder holds the journal, the ` +
      'spool and the seal key; it must be a git-ignored folder inside the repository, relative to it (".engram" by default)',
  );
  rule(
    ["memory.memory_md_max_bytes"],
    m.memory_md_max_bytes < 1024,
    () =>
      `memory.memory_md_max_bytes (${m.memory_md_max_bytes}) must be at least 1024: ` +
      "MEMORY.md needs room for its header and a few items",
  );
  const nats = c.agent_bus.nats;
  rule(
    ["agent_bus.nats.duplicate_window_seconds", "agent_bus.nats.max_age_seconds"],
    nats.duplicate_window_seconds > nats.max_age_seconds,
    () =>
      `agent_bus.nats.duplicate_window_seconds (${nats.duplicate_window_seconds}) must be at ` +
      `most agent_bus.nats.max_age_seconds (${nats.max_age_seconds}): JetStream refuses a ` +
      "stream whose duplicate window outlasts its messages",
  );
  const branchProblem = headBranchProblem(c.github.head_branch, c.github.base_branch);
  rule(
    ["github.head_branch", "github.base_branch"],
    branchProblem !== undefined,
    () => `github.head_branch ${branchProblem}`,
  );
  c.redaction.patterns.forEach((pattern, i) => {
    const why = patternProblem(pattern);
    rule(
      [`redaction.patterns[${i}]`],
      why !== undefined,
      () => `${JSON.stringify(pattern)}: ${why}`,
    );
  });

  return found.map(({ keys, message }) => {
    const segments = keys.map(splitKey);
    const exact = segments.find((s) => locate(s).exact);
    const chosen = exact ?? segments[0]!;
    return { key: keyName(chosen), line: locate(chosen).line, message };
  });
}

/**
 * Compiles the pattern as the redactor does (the only step of building it that can fail),
 * so that a config that loads never fails when the redactor is built; without loading the
 * built-in rules, which a command that never redacts does not need.
 */
function patternProblem(pattern: string): string | undefined {
  enableLinearRegExp();
  try {
    compileCustom(pattern, 0);
    return undefined;
  } catch (err) {
    if (!(err instanceof RedactionPatternError)) throw err;
    const prefix = `redaction.patterns[0] ${JSON.stringify(pattern)}: `;
    return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  }
}

function splitKey(key: string): Segment[] {
  const out: Segment[] = [];
  for (const part of key.split(".")) {
    const m = /^(.*)\[(\d+)\]$/.exec(part);
    if (m) out.push(m[1]!, Number(m[2]));
    else out.push(part);
  }
  return out;
}

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(6)));
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** `memory.buffer_max_bytes`, `redaction.patterns[2]`; odd keys are quoted as in TOML. */
export function keyName(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else out += (out === "" ? "" : ".") + (BARE_KEY.test(s) ? s : JSON.stringify(s));
  }
  return out;
}
