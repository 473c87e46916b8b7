/** One step of a path into the config: a key or an array index. */
export type Segment = string | number;

/** Where a key is in the TOML text, for error messages that name the line. */
export type KeyLocator = (segments: readonly Segment[]) => { line?: number; exact: boolean };

const KEY_PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
const DOTTED_KEY = String.raw`${KEY_PART}(?:\s*\.\s*${KEY_PART})*`;
const HEADER = new RegExp(String.raw`^\s*\[\[?\s*(${DOTTED_KEY})\s*\]\]?\s*(?:#.*)?$`);
const ASSIGNMENT = new RegExp(String.raw`^\s*(${DOTTED_KEY})\s*=\s*(.*)$`);
const INLINE_KEY = new RegExp(String.raw`(?:^\{|,)\s*(${DOTTED_KEY})\s*=`, "g");

/**
 * Finds the line of a key by scanning the text: tracks the current `[table]` header and
 * matches `key =` lines, including dotted keys and the keys of a one-line inline table.
 * Good enough for config files; the limits: array elements resolve to the line of the
 * array's key, keys inside nested inline tables or multi-line inline tables resolve to the
 * nearest enclosing key found, and lines inside a multi-line string are skipped by counting
 * triple quotes (a literal string that contains three double quotes can fool it).
 */
export function keyLocator(text: string): KeyLocator {
  const entries: { path: string[]; line: number }[] = [];
  const lines = text.split(/\r?\n/);
  let table: string[] = [];
  let inString: string | undefined;
  lines.forEach((line, i) => {
    const n = i + 1;
    if (inString !== undefined) {
      if (count(line, inString) % 2 === 1) inString = undefined;
      return;
    }
    const header = HEADER.exec(line);
    if (header) {
      table = splitDotted(header[1]!);
      entries.push({ path: table, line: n });
      return;
    }
    const assignment = ASSIGNMENT.exec(line);
    if (!assignment) return;
    const keyPath = [...table, ...splitDotted(assignment[1]!)];
    entries.push({ path: keyPath, line: n });
    const rest = assignment[2]!;
    for (const quote of ['"""', "'''"]) {
      if (count(rest, quote) % 2 === 1) inString = quote;
    }
    if (rest.startsWith("{")) {
      for (const inner of rest.matchAll(INLINE_KEY)) {
        entries.push({ path: [...keyPath, ...splitDotted(inner[1]!)], line: n });
      }
    }
  });

  return (segments) => {
    const want = segments.filter((s): s is string => typeof s === "string");
    const same = (p: readonly string[], len: number): boolean =>
      want.slice(0, len).every((s, j) => p[j] === s);
    const exact = entries.find((e) => e.path.length === want.length && same(e.path, want.length));
    if (exact) return { line: exact.line, exact: true };
    // A section given only through sub-tables: `[policy.x]` locates `policy`.
    const below = entries.find((e) => e.path.length > want.length && same(e.path, want.length));
    if (below) return { line: below.line, exact: false };
    let above: { path: string[]; line: number } | undefined;
    for (const e of entries) {
      if (e.path.length < want.length && same(e.path, e.path.length)) {
        if (above === undefined || e.path.length > above.path.length) above = e;
      }
    }
    return above === undefined || above.path.length === 0
      ? { exact: false }
      : { line: above.line, exact: false };
  };
}

function count(s: string, sub: string): number {
  return s.split(sub).length - 1;
}

function splitDotted(key: string): string[] {
  const parts: string[] = [];
  const re = new RegExp(String.raw`\s*(${KEY_PART})\s*(?:\.|$)`, "y");
  let m = re.exec(key);
  while (m !== null && m[0] !== "") {
    parts.push(unquote(m[1]!));
    m = re.exec(key);
  }
  return parts;
}

function unquote(part: string): string {
  if (part.startsWith("'")) return part.slice(1, -1);
  if (!part.startsWith('"')) return part;
  try {
    return JSON.parse(part) as string;
  } catch {
    return part.slice(1, -1);
  }
}
