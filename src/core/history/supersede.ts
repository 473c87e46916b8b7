/**
 * A later decision that reverses or restates an earlier one supersedes it: both are kept, the
 * later names the earlier. Two decisions are about the same thing when they name the same
 * option-like term (`include-component-in-tag`, `lockSsfi`, `--fast`, a backticked name); the
 * later supersedes when both set a default, or when it restores, reverts or re-enables. Pure.
 */

export interface DatedDecision {
  sha: string;
  title: string;
  /** A merge and its branch commits state one choice, not two in turn. */
  pr?: number;
}

/** A term that names one thing: kebab, snake or camel case, a flag, or backticked. */
const TERM =
  /`([^`\s]{3,64})`|(?<![\w-])(--?[a-z][\w-]{2,}|[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)(?![\w-])/g;
const DEFAULT = /\bdefaults?\b/i;
const REVERSAL =
  /\b(restore[sd]?|revert(s|ed)?|undo(es)?|un-?deprecate[sd]?|re-?enable[sd]?|reinstate[sd]?|bring back|back to|again)\b/i;

export function optionTerms(title: string): string[] {
  const out = new Set<string>();
  for (const m of title.matchAll(TERM)) {
    const term = (m[1] ?? m[2] ?? "").toLowerCase().replace(/^-+/, "");
    if (term.length >= 4) out.add(term);
  }
  return [...out];
}

/**
 * For decisions given oldest first: index -> the index of the earlier decision it supersedes
 * (the newest such), for those that supersede one.
 */
export function supersessions(decisions: readonly DatedDecision[]): Map<number, number> {
  const out = new Map<number, number>();
  const byTerm = new Map<string, number[]>();
  decisions.forEach((d, i) => {
    const terms = optionTerms(d.title);
    let earlier: number | undefined;
    for (const term of terms) {
      for (const j of byTerm.get(term) ?? []) {
        const before = decisions[j] as DatedDecision;
        if (d.pr !== undefined && d.pr === before.pr) continue;
        const sameFacet = DEFAULT.test(d.title) && DEFAULT.test(before.title);
        if ((sameFacet || REVERSAL.test(d.title)) && (earlier === undefined || j > earlier)) {
          earlier = j;
        }
      }
    }
    if (earlier !== undefined) out.set(i, earlier);
    for (const term of terms) byTerm.set(term, [...(byTerm.get(term) ?? []), i]);
  });
  return out;
}
