/*
 * What agents will read: the item lines of MEMORY.md a proposal adds and removes. An item is
 * compared by its text alone, without its trailing engram link or its section, so a note that
 * only moved (promoted from short- to long-term) is neither added nor removed. The text is
 * given back as plain text (MEMORY.md's own escapes undone): its reader escapes it again.
 */

/** One item line of MEMORY.md: the section it sits under and its text without the link. */
export interface FocusLine {
  /** The `## ` heading above it ("Decisions", "Recent"); "" above the first heading. */
  section: string;
  text: string;
}

/** The item lines the head's MEMORY.md adds to the base's and the ones it drops, in order. */
export interface FocusLineDiff {
  added: FocusLine[];
  removed: FocusLine[];
}

// The link MEMORY.md puts after an item: ` ([e_1234abcd](memory/…/engram_e_….json))`.
const ENGRAM_LINK = / \(\[e_[0-9a-f]+\]\([^()\s]*\)\)$/;

/** The item (`- `) lines of a MEMORY.md, with their section. */
export function focusLines(text: string): FocusLine[] {
  const out: FocusLine[] = [];
  let section = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) section = line.slice(3).trim();
    else if (line.startsWith("- ")) {
      const text = line
        .slice(2)
        .replace(ENGRAM_LINK, "")
        .trim()
        // A decision's title is bold; `clean` (focus-text.ts) escaped `<` and `](`.
        .replace(/^\*\*(.+?)\*\*/, "$1")
        .replace(/\\</g, "<")
        .replace(/\]\\\(/g, "](");
      out.push({ section, text });
    }
  }
  return out;
}

/**
 * The lines of `head` that `base` lacks and those of `base` that `head` lacks, each counted
 * (a line twice in the head and once in the base is added once); head order, then base order.
 */
export function focusLineDiff(base: string, head: string): FocusLineDiff {
  const key = (l: FocusLine) => l.text;
  const minus = (from: FocusLine[], other: FocusLine[]): FocusLine[] => {
    const left = new Map<string, number>();
    for (const l of other) left.set(key(l), (left.get(key(l)) ?? 0) + 1);
    return from.filter((l) => {
      const n = left.get(key(l)) ?? 0;
      if (n === 0) return true;
      left.set(key(l), n - 1);
      return false;
    });
  };
  const b = focusLines(base);
  const h = focusLines(head);
  return { added: minus(h, b), removed: minus(b, h) };
}
