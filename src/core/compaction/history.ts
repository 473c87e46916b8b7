import type { Engram } from "../../schema/engram.js";
import type { MemoryEvent } from "../../schema/memory-event.js";
import { hasContent } from "../history/content.js";
import { EARLIER_TOPIC, isHistoryCommit } from "../history/kinds.js";
import { compareText, truncateChars } from "../model/text.js";
import type { CompactionPolicy } from "./policy.js";

/** Builds the engrams of one group (compact.ts's), with summary facts of its own. */
export type GroupBuilder = (
  label: string,
  events: readonly MemoryEvent[],
  version: string,
  policy: CompactionPolicy,
  summaryFacts: readonly string[],
) => Engram[];

const LATEST_SUBJECTS = 3;
const SUBJECT_CHARS = 80;
const NOISE_LABELS: Record<string, [string, string]> = {
  merge: ["merge commit", "merge commits"],
  release: ["release or version commit", "release and version commits"],
  dependency: ["dependency bump", "dependency bumps"],
  trivial: ["commit with a content-free subject", "commits with content-free subjects"],
};
const TYPE_LABELS: Record<string, [string, string]> = {
  feat: ["feature", "features"],
  fix: ["fix", "fixes"],
  docs: ["docs change", "docs changes"],
  refactor: ["refactor", "refactors"],
  perf: ["performance change", "performance changes"],
  test: ["test change", "test changes"],
};

/**
 * The history-derived events of a slice (commits read from git and their notes) as engrams
 * of knowledge rather than a commit log: what the history moved past (first topic `earlier`:
 * a decision superseded or reverted, an old lesson) in one `earlier` group, every other
 * decision in one `decisions` group and every
 * other note in one `lessons` group, each newest commit first; commits are not listed but
 * summarised in a `history` group, one fact per area of the tree (how many commits of which
 * type, over which years, the latest subjects) and one per kind of noise ("48 dependency
 * bumps, 2019-2026"). Pure.
 */
export function compactHistory(
  events: readonly MemoryEvent[],
  version: string,
  policy: CompactionPolicy,
  build: GroupBuilder,
): Engram[] {
  const newestFirst = (a: MemoryEvent, b: MemoryEvent) =>
    compareText(b.sent_at, a.sent_at) || b.seq - a.seq;
  const decisions: MemoryEvent[] = [];
  const earlier: MemoryEvent[] = [];
  const notes: MemoryEvent[] = [];
  const commits: MemoryEvent[] = [];
  for (const event of events) {
    if (isHistoryCommit(event)) {
      // One commit link (and its PR) is enough: the files are in git.
      commits.push({ ...event, links: event.links.filter((l) => l.type !== "file") });
    } else if (event.topics[0] === EARLIER_TOPIC) earlier.push(event);
    else if (event.kind === "decision") decisions.push(event);
    else notes.push(event);
  }
  const out: Engram[] = [];
  if (decisions.length > 0) {
    out.push(...build("decisions", decisions.sort(newestFirst), version, policy, []));
  }
  if (earlier.length > 0) {
    out.push(...build(EARLIER_TOPIC, earlier.sort(newestFirst), version, policy, []));
  }
  if (notes.length > 0) out.push(...build("lessons", notes.sort(newestFirst), version, policy, []));
  if (commits.length > 0) {
    commits.sort(newestFirst);
    out.push(...build("history", commits, version, policy, summarizeCommits(commits)));
  }
  return out;
}

interface Tally {
  count: number;
  first: string;
  last: string;
  types: Map<string, number>;
  latest: string[];
}

/** Summary facts of commit events given newest first: areas by their latest commit, then noise. */
export function summarizeCommits(commits: readonly MemoryEvent[]): string[] {
  const areas = new Map<string, Tally>();
  const noise = new Map<string, Tally>();
  for (const event of commits) {
    const isNoise = event.kind.startsWith("noise:");
    const key = isNoise ? event.kind.slice("noise:".length) : (event.topics[0] ?? "(root)");
    const map = isNoise ? noise : areas;
    let tally = map.get(key);
    if (!tally) {
      tally = { count: 0, first: event.sent_at, last: event.sent_at, types: new Map(), latest: [] };
      map.set(key, tally);
    }
    tally.count++;
    if (event.sent_at < tally.first) tally.first = event.sent_at;
    if (event.sent_at > tally.last) tally.last = event.sent_at;
    const type = event.kind.startsWith("commit:") ? event.kind.slice("commit:".length) : "other";
    tally.types.set(type, (tally.types.get(type) ?? 0) + 1);
    const subject = event.text?.split(" — ")[0];
    // A merge's subject names a branch, not a change: the latest that say something.
    if (!isNoise && tally.latest.length < LATEST_SUBJECTS && subject && hasContent(subject)) {
      tally.latest.push(truncateChars(subject, SUBJECT_CHARS));
    }
  }
  const facts: string[] = [];
  const byRecent = [...areas].sort(
    (a, b) => compareText(b[1].last, a[1].last) || compareText(a[0], b[0]),
  );
  for (const [area, t] of byRecent) {
    const types = [...t.types]
      .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
      .map(([type, n]) => plural(n, TYPE_LABELS[type] ?? [`${type} change`, `${type} changes`]));
    // Subjects that say nothing (a merge's, an empty one) are not listed: no bare "latest:".
    const latest = t.latest.map((s) => `"${s}"`).join("; ");
    facts.push(
      `Area ${area}: ${plural(t.count, ["commit", "commits"])}, ${years(t)} (${types.join(", ")})${latest === "" ? "" : `; latest: ${latest}`}`,
    );
  }
  for (const kind of Object.keys(NOISE_LABELS)) {
    const t = noise.get(kind);
    if (t) facts.push(`${plural(t.count, NOISE_LABELS[kind] as [string, string])}, ${years(t)}`);
  }
  return facts;
}

function years(t: Tally): string {
  const a = t.first.slice(0, 4);
  const b = t.last.slice(0, 4);
  return a === b ? a : `${a}-${b}`;
}

function plural(n: number, [one, many]: [string, string]): string {
  return `${n} ${n === 1 ? one : many}`;
}
