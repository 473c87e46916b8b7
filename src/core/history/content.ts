/**
 * Whether a line read from history tells a newcomer anything: the one predicate the import,
 * the focus view and recall share, so that "Never mind.", a badge swap, a contributor's
 * e-mail or "Merge branch 'x'" is kept out of all three alike.
 */

// A note's own prefix (`Commit: `, `Decision: `, a conventional `type(scope): `) says nothing.
const PREFIX = /^(?:(?:commit|decision|lesson|convention|fact|incident|question)\s*:\s*)+/i;
const CONVENTIONAL = /^[a-z]+(?:\([^()]{1,64}\))?!?:\s+/i;

/** Subjects whose words, whatever they are, carry nothing a newcomer needs. */
const CONTENT_FREE: readonly RegExp[] = [
  // An aside about the previous commit.
  /^(?:never\s*mind|nvm|oops|whoops|ok(?:ay)?|done|undo|revert that|again|wip|tmp|typos?)\b[\s.!]*$/i,
  /^(?:fixup|squash|amend)!/i,
  // A merge says which branch, not what changed.
  /^merge (?:branch|pull request|remote-tracking branch|tag|commit|(?:[0-9a-f]{7,40})|'[^']*'|"[^"]*")\b/i,
  // README decoration: badges, shields, logos, sponsors.
  /\b(?:badges?|shields?\.io|badgen|sponsors?|backers|funding)\b/i,
  // People and their addresses: a contributor's e-mail, the mailmap, the authors list.
  /[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b/i,
  /\b(?:my|their|his|her|contributors?'?s?|authors?'?s?|maintainers?'?s?)\s+e-?mail\b|\bmailmap\b/i,
  /\b(?:contributors?|authors?|maintainers?)\b.*\b(?:list|info|file|section|names?)\b/i,
];

/** Fewer words than this (of two letters or more) is no statement. */
const MIN_WORDS = 2;

/**
 * Whether `text` (a decision's title, a fact, a commit's subject) says something worth
 * a newcomer's attention: not an aside ("Never mind."), not a merge or a README decoration,
 * not about who wrote what, and at least two words once its prefix is set aside. Pure.
 */
export function hasContent(text: string): boolean {
  const plain = text.replace(PREFIX, "").replace(CONVENTIONAL, "").trim();
  if (CONTENT_FREE.some((re) => re.test(plain))) return false;
  const words = plain.match(/\p{L}[\p{L}\p{N}_-]*/gu) ?? [];
  return words.filter((w) => w.length >= 2).length >= MIN_WORDS;
}

/**
 * A reason with its bare references dropped: "closes #3236", "fixes #12", a `PR-URL:` line or
 * a lone link give no reason (the commit and pull request are linked anyway), and neither
 * does one that only restates `title`. Undefined when nothing is left. Pure.
 */
export function reasonOf(rationale: string | undefined, title = ""): string | undefined {
  if (rationale === undefined) return undefined;
  const left = rationale
    .replace(
      /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|ref(?:s)?|see)\s+(?:[\w.-]+\/[\w.-]+)?#\d+\b,?/gi,
      " ",
    )
    .replace(/\bPR-URL:\s*\S+/gi, " ")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/\b[a-z]+(?:\([^()]{1,64}\))?!?:\s/g, " ")
    .replace(/(?:^|\s)[-*](?=\s)/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!/\p{L}{2,}/u.test(left)) return undefined;
  // A reason that only restates the title (a squash's bullet list: `* docs: <title>`) adds nothing.
  const known = new Set(words(title));
  return words(left).some((w) => !known.has(w)) ? left : undefined;
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/\p{L}[\p{L}\p{N}]*/gu) ?? []).filter((w) => w.length >= 3);
}

/**
 * A subject's words for comparing two commits: without its conventional prefix and pull
 * request suffix, lower-cased, punctuation as spaces.
 */
export function plainWords(text: string): string {
  return text
    .replace(/^[a-z]+(\([^()]*\))?!?:\s*/i, "")
    .replace(/\s*\(#\d+\)\s*$/, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}
