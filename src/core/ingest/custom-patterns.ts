/**
 * The repository's own `[redaction] patterns`: compiled once for V8's linear-time engine, and
 * refused when they could match the empty string or cannot run in linear time. They run on
 * every text a worker sends and ingest takes in, synchronously: a backtracking pattern such as
 * `(.*a){12}Q` stalls every writer on a sentence of 152 characters.
 */

/** A `[redaction] patterns` entry that is not a usable regular expression. */
export class RedactionPatternError extends Error {
  constructor(
    readonly index: number,
    readonly pattern: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`redaction.patterns[${index}] ${JSON.stringify(pattern)}: ${reason}`, options);
    this.name = "RedactionPatternError";
  }
}

// A pattern that matches nothing at all would put a token between every two characters.
const EMPTY_PROBES = ["", "a", "Z", "0", " ", "-", "_", "\n", "[REDACTED:x]"];

/** The flag of V8's linear engine (a variable: a literal `/a/l` would not parse where it is off). */
const LINEAR = "l";

/**
 * Whether V8's linear-time engine (the `l` flag) is on in this process. Turning it on is a
 * process-wide flag, set by the adapter that loads the config (`src/config/regexp-engine.ts`)
 * before any pattern is compiled; the core only looks.
 */
function linearEngineOn(): boolean {
  try {
    return new RegExp("a", LINEAR).flags.includes(LINEAR);
  } catch {
    return false;
  }
}

/** The linear engine replicates a counted repetition's body; it takes at most this many copies. */
const MAX_COPIES = 16;

/** A copy of a repeated group: its captures become plain groups (a name may occur once). */
function uncaptured(atom: string): string {
  return atom.replace(/\\.|\((?!\?)|\(\?<(?![=!])[^>]*>/g, (m) => (m.startsWith("\\") ? m : "(?:"));
}

/**
 * `x{n,m}` with counts over `MAX_COPIES`, spelled as a run of repetitions of 16 at most
 * (`x{40}` as `x{16}x{16}x{8}`): the same strings, the same leftmost match, greedy or lazy,
 * within what the linear engine takes.
 */
function splitCounts(source: string): string {
  let out = "";
  let atomStart = -1;
  const groups: number[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    const count = ch === "{" ? /^\{(\d+)(,(\d*))?\}(\??)/.exec(source.slice(i)) : null;
    if (count !== null && atomStart >= 0) {
      const min = Number(count[1]);
      const max =
        count[2] === undefined
          ? min
          : count[3] === ""
            ? Number.POSITIVE_INFINITY
            : Number(count[3]);
      const lazy = count[4] ?? "";
      // `{16,}` is 16 copies and a star: past the engine's limit as well.
      const unbounded = max === Number.POSITIVE_INFINITY;
      if (min > MAX_COPIES || (unbounded ? min >= MAX_COPIES : max > MAX_COPIES)) {
        const atom = out.slice(atomStart);
        const copy = uncaptured(atom);
        const pieces: string[] = [];
        for (let left = min; left > 0; left -= MAX_COPIES) {
          pieces.push(`${pieces.length === 0 ? atom : copy}{${Math.min(left, MAX_COPIES)}}`);
        }
        if (max === Number.POSITIVE_INFINITY) {
          pieces.push(`${pieces.length === 0 ? atom : copy}*${lazy}`);
        } else {
          for (let left = max - min; left > 0; left -= MAX_COPIES) {
            pieces.push(
              `${pieces.length === 0 ? atom : copy}{0,${Math.min(left, MAX_COPIES)}}${lazy}`,
            );
          }
        }
        out = `${out.slice(0, atomStart)}(?:${pieces.join("")})`;
        i += count[0].length;
        atomStart = -1;
        continue;
      }
    }
    if (ch === "\\") {
      atomStart = out.length;
      const escaped =
        /^\\(?:u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|c[A-Za-z]|k<[^>]*>|[\s\S])/.exec(
          source.slice(i),
        )?.[0] ?? "\\";
      out += escaped;
      i += escaped.length;
    } else if (ch === "[") {
      atomStart = out.length;
      let j = i + 1;
      if (source[j] === "^") j++;
      if (source[j] === "]") j++;
      while (j < source.length && source[j] !== "]") j += source[j] === "\\" ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else if (ch === "(") {
      groups.push(out.length);
      out += ch;
      i++;
      atomStart = -1;
    } else if (ch === ")") {
      atomStart = groups.pop() ?? -1;
      out += ch;
      i++;
    } else if (ch === "|") {
      out += ch;
      i++;
      atomStart = -1;
    } else if (ch === "*" || ch === "+" || ch === "?" || ch === "{") {
      // A quantifier (or a brace that is a literal): what follows is not its atom.
      out += ch;
      i++;
      atomStart = -1;
    } else {
      atomStart = out.length;
      out += ch;
      i++;
    }
  }
  return out;
}

/**
 * Compiles a `[redaction] patterns` entry for the linear engine. Throws `RedactionPatternError`
 * naming its index and source when it does not compile, matches the empty string, or needs a
 * backtracking engine (a look-around, a back-reference).
 */
export function compileCustom(pattern: string, index: number): RegExp {
  const linear = linearEngineOn();
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, "g");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RedactionPatternError(index, pattern, `does not compile: ${reason}`, {
      cause: error,
    });
  }
  for (const probe of EMPTY_PROBES) {
    regex.lastIndex = 0;
    const m = regex.exec(probe);
    if (m !== null && m[0] === "") {
      throw new RedactionPatternError(index, pattern, "matches the empty string");
    }
  }
  if (!linear) {
    throw new RedactionPatternError(
      index,
      pattern,
      "this Node.js has no linear-time regular expression engine to run it with (or it was not turned on: see src/config/regexp-engine.ts)",
    );
  }
  // In a group: a source of its own, never one V8 compiled (and cached) without the budget.
  const source = `(?:${splitCounts(pattern)})`;
  try {
    new RegExp(source, `g${LINEAR}`);
    return new RegExp(source, "g");
  } catch (error) {
    throw new RedactionPatternError(
      index,
      pattern,
      "cannot run in linear time: a look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) or a back-reference (`\\1`, `\\k<name>`) needs a backtracking engine, which one long line can stall; spell the context out as text around the secret",
      { cause: error },
    );
  }
}
