/**
 * The repository's own `[redaction] patterns`: compiled once, refused when they could match
 * the empty string or backtrack catastrophically (ingest is synchronous).
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

/**
 * Rejects a group that repeats without bound while its body also repeats without bound, as in
 * `(a+)+` or `(\w*x)*`: the classic shape of catastrophic backtracking. Ingest is synchronous,
 * so one such pattern could stall the Director; a heuristic rejection is the affordable guard.
 */
function nestedUnboundedQuantifier(source: string): boolean {
  const unboundedAt = (at: number): boolean => {
    const ch = source[at];
    if (ch === "*" || ch === "+") return true;
    return ch === "{" && /^\{\d+,\}/.test(source.slice(at, at + 24));
  };
  // One entry per open group: does its body repeat without bound?
  const stack: boolean[] = [];
  const markParent = (): void => {
    if (stack.length > 0) stack[stack.length - 1] = true;
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "\\") {
      i += 2;
    } else if (ch === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      i++;
    } else if (ch === "(") {
      stack.push(false);
      i++;
    } else if (ch === ")") {
      const inner = stack.pop() ?? false;
      i++;
      if (inner && unboundedAt(i)) return true;
      if (inner) markParent();
    } else {
      // Quantifiers land here, after the atom they repeat.
      if (unboundedAt(i)) markParent();
      i++;
    }
  }
  return false;
}

export function compileCustom(pattern: string, index: number): RegExp {
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
  regex.lastIndex = 0;
  if (nestedUnboundedQuantifier(pattern)) {
    throw new RedactionPatternError(
      index,
      pattern,
      "nests unbounded repetition (for example `(a+)+`), which can backtrack catastrophically",
    );
  }
  return regex;
}
