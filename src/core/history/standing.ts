/**
 * Where each decision a history import found goes: memory (in force), a proposal (the
 * classifier is not sure enough: someone confirms it), an earlier decision (kept in memory,
 * left out of the briefing: a later one superseded or reverted it, or it is old and a later
 * commit touched the same subject, or it is twice as old), or nowhere (it says nothing: "Never mind.").
 */
import { hasContent, plainWords } from "./content.js";

export type DecisionRoute = "memory" | "proposal" | "earlier" | "none";

/**
 * Decisions older than this, before the newest commit read, stand only when nothing later
 * touched their subject; older than twice this, they are earlier decisions whatever.
 */
export const EARLIER_AFTER_YEARS = 3;

/** The default of `memory.history_min_confidence`. */
export const HISTORY_MIN_CONFIDENCE = 0.6;

/** A year of seconds, leap days averaged. */
export const YEAR_SECONDS = 365.25 * 24 * 3600;

/** What the routing reads of each commit, oldest first. */
export interface RoutedCommit {
  sha: string;
  /** Committer time, seconds since 1970. */
  committedAt: number;
  subject: string;
  decision?: { title: string; rationale?: string; confidence?: number };
  /** The classifier's lesson (`Reverted "<what>": <why>` for a revert). */
  lesson?: string;
  /** The sha of the earlier decision this commit's decision supersedes. */
  supersedes?: string;
}

/** Where one decision candidate goes, given its confidence and the line (`confidence ?? 1`). */
export function routeOfConfidence(
  confidence: number | undefined,
  minConfidence: number,
): DecisionRoute {
  return (confidence ?? 1) < minConfidence ? "proposal" : "memory";
}

/**
 * The route of each commit's decision (undefined where it has none), read over the whole
 * history given oldest first. Pure; linear in the commits and the terms their subjects name.
 */
export function decisionRoutes(
  commits: readonly RoutedCommit[],
  minConfidence: number,
): (DecisionRoute | undefined)[] {
  const newest = commits.reduce((max, c) => Math.max(max, c.committedAt), 0);
  const cutoff = newest - EARLIER_AFTER_YEARS * YEAR_SECONDS;
  // The last commit whose subject names each term, and what later commits superseded or reverted.
  const lastMention = new Map<string, number>();
  commits.forEach((c, i) => {
    for (const term of subjectTerms(c.subject)) lastMention.set(term, i);
  });
  const superseded = new Set(commits.flatMap((c) => (c.supersedes ? [c.supersedes] : [])));
  const reverted = new Map<string, number>();
  commits.forEach((c, i) => {
    const what = c.lesson === undefined ? undefined : /^Reverted "(.+?)"/.exec(c.lesson)?.[1];
    if (what !== undefined) reverted.set(plainWords(what), i);
  });
  return commits.map((c, i) => {
    if (c.decision === undefined) return undefined;
    if (!hasContent(c.decision.title)) return "none";
    const route = routeOfConfidence(c.decision.confidence, minConfidence);
    if (route === "proposal") return route;
    if (superseded.has(c.sha)) return "earlier";
    const revertedAt =
      reverted.get(plainWords(c.subject)) ?? reverted.get(plainWords(c.decision.title));
    if (revertedAt !== undefined && revertedAt > i) return "earlier";
    // Twice as old, and not restated since, it is history rather than a briefing's matter.
    if (c.committedAt < cutoff - EARLIER_AFTER_YEARS * YEAR_SECONDS) return "earlier";
    if (c.committedAt < cutoff) {
      // An old decision stands when nothing later touched its subject.
      const touched = subjectTerms(c.decision.title).some((t) => (lastMention.get(t) ?? -1) > i);
      if (touched) return "earlier";
    }
    return "memory";
  });
}

/**
 * The names a subject is about: a backticked name, a dotted identifier (`res.sendfile`,
 * `app.param()`), a camelCase or snake_case name, an option (`--fast`), a package's name, a
 * quoted setting, the Node versions supported (`runtime:node`).
 */
export function subjectTerms(subject: string): string[] {
  const terms = new Set<string>();
  const add = (t: string) => {
    const term = t
      .toLowerCase()
      .replace(/\(\)$/, "")
      .replace(/^['"`]|['"`]$/g, "");
    if (term.length >= 3) terms.add(term);
  };
  for (const m of subject.matchAll(/`([^`]{2,64})`/g)) add(m[1] as string);
  for (const m of subject.matchAll(/\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+/g)) {
    // A file name (`index.js`, `package.json`) is not an interface; `res.json(` is.
    const file =
      /\.(?:js|ts|mjs|cjs|md|yml|yaml|html|css|txt|lock)$/i.test(m[0]) ||
      /^(?:package|tsconfig|jsconfig|bower|component|composer)\.json$/i.test(m[0]);
    if (!file) add(m[0]);
  }
  // A library named as such: `with the depd module`.
  for (const m of subject.matchAll(/\b([a-z][\w.-]*)\s+(?:module|package|library)\b/gi)) {
    add(m[1] as string);
  }
  for (const m of subject.matchAll(/\b[a-z]+[A-Z][\w$]*\b|\b[a-z]+_[a-z_]+\b/g)) add(m[0]);
  for (const m of subject.matchAll(/(?:^|\s)(--?[a-z][\w-]+)/g)) add(m[1] as string);
  // A package's name (`buffer-crc32`, `less-middleware`), quoted setting value (`'simple'`).
  for (const m of subject.matchAll(/\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b/g)) add(m[0]);
  for (const m of subject.matchAll(/'([\w .-]{3,32})'/g)) add(m[1] as string);
  // The runtime supported: every later word on node versions touches an earlier one.
  if (
    /\bnode(?:\.?js)?(?:@|\s+v?)\d|\bnode(?:\.?js)?\s+(?:versions?|below|above|support)/i.test(
      subject,
    )
  ) {
    terms.add("runtime:node");
  }
  return [...terms];
}
