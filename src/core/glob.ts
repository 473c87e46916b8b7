/**
 * Path globs from the repository (`config/registry.toml` areas, markdown source folders),
 * matched in time linear in the path: the glob becomes a small NFA that is simulated over
 * the path one character at a time, keeping a set of states (never backtracking). A
 * regular expression built from a glob (`*a*a*a...c`) can take exponential time on a long
 * path; this takes at most (path length + 1) x (states + edges) steps.
 *
 * Two dialects:
 * - `registry`: `**` followed by `/` is zero or more folders (`(?:.*\/)?`), any other `**`
 *   is anything (`.*`), `*` and `?` stay within a folder; everything else is literal.
 * - `files` (markdown source folders, fast-glob's common syntax): `*`, `?`, `[...]`
 *   (ranges, `!` or `^` negation), `{a,b}` alternatives, `\` escapes, and `**` as a whole
 *   folder name (zero or more folders). A wildcard does not match a name's leading `.`
 *   unless the glob's own name starts with one (dotfiles are opted into). Extglobs and
 *   negated globs are refused.
 */

export type GlobDialect = "registry" | "files";

export interface GlobMatcher {
  readonly glob: string;
  /** `meter.steps` counts the state visits made (for tests: it is bounded, never timed). */
  test(path: string, meter?: { steps: number }): boolean;
}

/** A glob the `files` dialect cannot read, with why. */
export class GlobSyntaxError extends Error {
  constructor(
    readonly glob: string,
    reason: string,
  ) {
    super(`${JSON.stringify(glob)}: ${reason}`);
    this.name = "GlobSyntaxError";
  }
}

/** Most alternatives a glob's `{a,b}` may expand to. */
export const MAX_BRACE_EXPANSIONS = 64;

const SLASH = 47;
const DOT = 46;

type Pred = (c: number) => boolean;
interface Edge {
  pred: Pred;
  to: number;
}
interface Eps {
  to: number;
  /** Taken only when the next character is not a `.` (a name's first character). */
  notDot: boolean;
}

/** An NFA under construction: state 0 starts; `end` is where the next piece attaches. */
class Nfa {
  readonly edges: Edge[][] = [[]];
  readonly eps: Eps[][] = [[]];
  end = 0;

  state(): number {
    this.edges.push([]);
    this.eps.push([]);
    return this.edges.length - 1;
  }

  edge(from: number, pred: Pred, to: number): void {
    (this.edges[from] as Edge[]).push({ pred, to });
  }

  epsilon(from: number, to: number, notDot = false): void {
    (this.eps[from] as Eps[]).push({ to, notDot });
  }

  /** One character matching `pred`. */
  one(pred: Pred): void {
    const next = this.state();
    this.edge(this.end, pred, next);
    this.end = next;
  }

  /** Zero or more characters matching `pred`. */
  many(pred: Pred): void {
    const loop = this.state();
    this.epsilon(this.end, loop);
    this.edge(loop, pred, loop);
    this.end = loop;
  }
}

const notSlash: Pred = (c) => c !== SLASH;
// JavaScript's `.`: anything but a line terminator (the registry's old regular expressions).
const notLineEnd: Pred = (c) => c !== 10 && c !== 13 && c !== 0x2028 && c !== 0x2029;
const isSlash: Pred = (c) => c === SLASH;

function matcherOf(glob: string, nfas: Nfa[]): GlobMatcher {
  return {
    glob,
    test(path, meter) {
      return nfas.some((nfa) => run(nfa, path, meter));
    },
  };
}

/** Simulates the NFA over `path`: a set of states per character, each state visited once. */
function run(nfa: Nfa, path: string, meter?: { steps: number }): boolean {
  const size = nfa.edges.length;
  let current = new Uint8Array(size);
  let next = new Uint8Array(size);
  let list: number[] = [];
  let steps = 0;
  const close = (from: number[], set: Uint8Array, peek: number): number[] => {
    const out: number[] = [];
    const stack = [...from];
    for (const s of from) set[s] = 1;
    while (stack.length > 0) {
      const s = stack.pop() as number;
      out.push(s);
      steps++;
      for (const e of nfa.eps[s] as Eps[]) {
        if (set[e.to] === 1 || (e.notDot && peek === DOT)) continue;
        set[e.to] = 1;
        stack.push(e.to);
      }
    }
    return out;
  };
  list = close([0], current, path.length > 0 ? path.charCodeAt(0) : -1);
  for (let i = 0; i < path.length && list.length > 0; i++) {
    const c = path.charCodeAt(i);
    next.fill(0);
    const reached: number[] = [];
    for (const s of list) {
      for (const e of nfa.edges[s] as Edge[]) {
        steps++;
        if (next[e.to] === 0 && e.pred(c)) {
          next[e.to] = 1;
          reached.push(e.to);
        }
      }
    }
    next.fill(0);
    list = close(reached, next, i + 1 < path.length ? path.charCodeAt(i + 1) : -1);
    [current, next] = [next, current];
  }
  if (meter) meter.steps += steps;
  return list.includes(nfa.end);
}

/**
 * Compiles a glob of the given dialect; `files` globs that use syntax it does not read throw
 * `GlobSyntaxError`.
 */
export function compileGlob(glob: string, dialect: GlobDialect = "registry"): GlobMatcher {
  if (dialect === "registry") return matcherOf(glob, [registryNfa(glob)]);
  return matcherOf(glob, filesNfas(glob));
}

/** The registry's globs, as the regular expressions of its first version read them. */
function registryNfa(glob: string): Nfa {
  const nfa = new Nfa();
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charCodeAt(i);
    if (c === 42 && glob.charCodeAt(i + 1) === 42) {
      if (glob.charCodeAt(i + 2) === SLASH) {
        // (?:.*/)? : nothing, or anything that ends with a slash.
        const start = nfa.end;
        const inner = nfa.state();
        const after = nfa.state();
        nfa.epsilon(start, after);
        nfa.edge(start, notLineEnd, inner);
        nfa.edge(start, isSlash, after);
        nfa.edge(inner, notLineEnd, inner);
        nfa.edge(inner, isSlash, after);
        nfa.end = after;
        i += 2;
      } else {
        nfa.many(notLineEnd);
        i += 1;
      }
    } else if (c === 42) nfa.many(notSlash);
    else if (c === 63) nfa.one(notSlash);
    else nfa.one((x) => x === c);
  }
  return nfa;
}

function filesNfas(glob: string): Nfa[] {
  if (glob.startsWith("!")) throw new GlobSyntaxError(glob, "negated globs are not supported");
  if (/(^|[^\\])[@!+*?]\(/.test(glob)) {
    throw new GlobSyntaxError(glob, "extglobs such as @(a|b) are not supported");
  }
  const bare = glob.startsWith("./") ? glob.slice(2) : glob;
  return expandBraces(bare, glob).map((alternative) => filesNfa(alternative, glob));
}

/** `{a,b}` alternatives, nested or not, expanded (at most `MAX_BRACE_EXPANSIONS`). */
export function expandBraces(glob: string, shown = glob): string[] {
  let open = -1;
  let depth = 0;
  const commas: number[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "\\") {
      i++;
    } else if (ch === "[") {
      const close = classEnd(glob, i);
      if (close !== -1) i = close;
    } else if (ch === "{") {
      if (depth === 0) {
        open = i;
        commas.length = 0;
      }
      depth++;
    } else if (ch === "," && depth === 1) {
      commas.push(i);
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0 && commas.length > 0) {
        const head = glob.slice(0, open);
        const tail = glob.slice(i + 1);
        const cuts = [open, ...commas, i];
        const out: string[] = [];
        for (let k = 0; k + 1 < cuts.length; k++) {
          const part = glob.slice((cuts[k] as number) + 1, cuts[k + 1]);
          for (const expanded of expandBraces(head + part + tail, shown)) {
            out.push(expanded);
            if (out.length > MAX_BRACE_EXPANSIONS) {
              throw new GlobSyntaxError(
                shown,
                `expands to more than ${MAX_BRACE_EXPANSIONS} alternatives`,
              );
            }
          }
        }
        return out;
      }
    }
  }
  return [glob];
}

/** Index of the `]` closing a class opened at `at`, or -1 when it is not a class. */
function classEnd(glob: string, at: number): number {
  let i = at + 1;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++;
  for (; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "/") return -1;
    else if (glob[i] === "]") return i;
  }
  return -1;
}

function classPred(body: string): Pred {
  let i = 0;
  const negated = body[0] === "!" || body[0] === "^";
  if (negated) i++;
  const ranges: [number, number][] = [];
  while (i < body.length) {
    let lo = body.charCodeAt(i);
    if (body[i] === "\\" && i + 1 < body.length) lo = body.charCodeAt(++i);
    i++;
    if (body[i] === "-" && i + 1 < body.length) {
      let hi = body.charCodeAt(i + 1);
      i += 2;
      if (body[i - 1] === "\\" && i < body.length) hi = body.charCodeAt(i++);
      ranges.push([lo, hi]);
    } else {
      ranges.push([lo, lo]);
    }
  }
  return (c) => c !== SLASH && ranges.some(([lo, hi]) => c >= lo && c <= hi) !== negated;
}

/** One brace-free `files` glob: folder names joined by slashes, `**` names as globstars. */
function filesNfa(glob: string, shown: string): Nfa {
  // `**/**` is one `**`.
  const names = glob.split("/").filter((name, n, all) => name !== "**" || all[n - 1] !== "**");
  const nfa = new Nfa();
  names.forEach((name, n) => {
    const last = n === names.length - 1;
    if (name === "**") {
      if (names.length === 1) globstar(nfa, "all");
      // fast-glob's reading: `a/**` also matches `a` itself, `*/**` only what is below.
      else if (last) globstar(nfa, "tail", !/(^|[^\\])\*/.test(names[n - 1] as string));
      else {
        if (n > 0) nfa.one(isSlash);
        globstar(nfa, "folders");
      }
      return;
    }
    if (n > 0 && names[n - 1] !== "**") nfa.one(isSlash);
    fileName(nfa, name, shown);
  });
  return nfa;
}

/**
 * `**` as a whole name: `folders` is zero or more `name/` (before more names), `tail` is
 * nothing or `/` and names (at the end, after a name), `all` any path; no name it covers
 * starts with a `.`.
 */
function globstar(nfa: Nfa, form: "folders" | "tail" | "all", emptyTail = true): void {
  const entry = nfa.end;
  const nameStart = nfa.state();
  const inName = nfa.state();
  const after = nfa.state();
  if (form === "tail") {
    if (emptyTail) nfa.epsilon(entry, after);
    nfa.edge(entry, isSlash, nameStart);
  } else {
    nfa.epsilon(entry, nameStart);
  }
  if (form === "folders") nfa.epsilon(nameStart, after);
  nfa.edge(nameStart, (c) => c !== DOT && c !== SLASH, inName);
  nfa.edge(inName, notSlash, inName);
  nfa.edge(inName, isSlash, form === "folders" ? after : nameStart);
  if (form === "folders") {
    nfa.edge(inName, isSlash, nameStart);
  } else {
    nfa.epsilon(inName, after);
    nfa.epsilon(nameStart, after);
  }
  nfa.end = after;
}

/** One folder or file name of a `files` glob. */
function fileName(nfa: Nfa, name: string, shown: string): void {
  // A name that does not start with a literal dot matches no name that does.
  if (!name.startsWith(".") && !name.startsWith("\\.")) {
    const guard = nfa.state();
    nfa.epsilon(nfa.end, guard, true);
    nfa.end = guard;
  }
  for (let i = 0; i < name.length; i++) {
    const ch = name[i] as string;
    if (ch === "\\") {
      if (i + 1 >= name.length) throw new GlobSyntaxError(shown, "ends with a lone backslash");
      const code = name.charCodeAt(++i);
      nfa.one((c) => c === code);
    } else if (ch === "*") {
      while (name[i + 1] === "*") i++;
      nfa.many(notSlash);
    } else if (ch === "?") {
      nfa.one(notSlash);
    } else if (ch === "[" && classEnd(name, i) !== -1) {
      const close = classEnd(name, i);
      nfa.one(classPred(name.slice(i + 1, close)));
      i = close;
    } else {
      const code = name.charCodeAt(i);
      nfa.one((c) => c === code);
    }
  }
}
