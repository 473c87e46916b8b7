import { sayWhichHolds } from "../checks/contradictions.js";
import type { ReviewFlag } from "../checks/review-flags.js";
import { FOCUS_PATH, MEMORY_DIR } from "../model/paths.js";
import type { FocusLine, FocusLineDiff } from "../proposal/focus-diff.js";
import type { KnowledgeItem, KnowledgeKind } from "../proposal/knowledge.js";
import type { WithheldItem } from "../proposal/withhold.js";
import { code, formatCount, inlineText, plural } from "./markdown.js";

/** What the pull request asks the team to believe, and what to look at first in it. */
export interface ProposalKnowledge {
  /** The knowledge the head adds, each claim once, in engram order. */
  knowledge?: KnowledgeItem[];
  /** The items a reviewer should look at first (`src/core/checks/review-flags.ts`). */
  flags?: ReviewFlag[];
  promoted: readonly unknown[];
  evicted: readonly unknown[];
}

/** A list of items that may be cut from the end (lessons, conventions, facts). */
export interface KnowledgeList {
  heading: string;
  rows: string[];
  noun: string;
}

// Decisions are never cut, not even their text (a note's text holds at most 8,000 characters,
// an imported commit message may hold more); other items are cut in lists.
const SENDERS_SHOWN = 5;
const COMMITS_SHOWN = 3;
const SENDER_CHARS = 40;
const ITEM_CHARS = 300;
const FLAG_TEXT_CHARS = 200;
const ENGRAM_ID_CHARS = 48;
const ITEM_ID_CHARS = 24;
const REJECTED_SHOWN = 20;

const NOUNS: Record<KnowledgeKind, [string, string]> = {
  decision: ["decision", "decisions"],
  lesson: ["lesson", "lessons"],
  convention: ["convention", "conventions"],
  incident: ["incident", "incidents"],
  question: ["question", "questions"],
  fact: ["fact", "facts"],
  tentative: ["tentative fact", "tentative facts"],
  episode: ["episode note", "episode notes"],
};
const LIST_KINDS: readonly KnowledgeKind[] = [
  "lesson",
  "convention",
  "incident",
  "fact",
  "question",
  "tentative",
  "episode",
];
const HEADINGS: Record<KnowledgeKind, string> = {
  decision: "Decisions",
  lesson: "Lessons",
  convention: "Conventions",
  incident: "Incidents",
  question: "Open questions",
  fact: "Other facts",
  tentative: "Tentative (never promoted)",
  episode: "Episode notes",
};

/**
 * What the memory gains, counted in knowledge rather than files:
 * `memory: +9 decisions, +10 lessons, 2 superseded, 2 promoted (⚠ 3)`. The title and the body's
 * first line.
 */
export function knowledgeHeadline(p: ProposalKnowledge): string {
  const items = p.knowledge ?? [];
  const counts = (["decision", ...LIST_KINDS] as const)
    .map((kind) => [kind, items.filter((i) => i.kind === kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `+${plural(n, ...NOUNS[kind])}`);
  const superseded = items.reduce((n, i) => n + (i.replaces?.length ?? 0), 0);
  const moved = [
    ...(superseded > 0 ? [`${formatCount(superseded)} superseded`] : []),
    ...(p.promoted.length > 0 ? [`${formatCount(p.promoted.length)} promoted`] : []),
    ...(p.evicted.length > 0 ? [`${formatCount(p.evicted.length)} evicted`] : []),
  ];
  const parts = [...counts, ...moved];
  const flags = flaggedItemCount(p.flags);
  const warn = flags > 0 ? ` (⚠ ${formatCount(flags)})` : "";
  return `memory: ${parts.length > 0 ? parts.join(", ") : "no new knowledge"}${warn}`;
}

/** The flags grouped by item: one item may be flagged for several reasons. */
function flaggedItems(flags: readonly ReviewFlag[]): ReviewFlag[][] {
  const groups = new Map<string, ReviewFlag[]>();
  for (const f of flags) {
    const key = `${f.engram_id}\u0000${f.item_kind}\u0000${f.text}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups.values()];
}

/** How many items are flagged (the ⚠ count). */
export function flaggedItemCount(flags: readonly ReviewFlag[] | undefined): number {
  return flaggedItems(flags ?? []).length;
}

/** "Look at these first": every flagged item with why; undefined when nothing is flagged. */
export function flagsBlock(flags: readonly ReviewFlag[] | undefined): string | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  const items = flaggedItems(flags);
  const lines = items.map((group) => {
    const first = group[0] as ReviewFlag;
    const kinds = [...new Set(group.map((f) => f.kind))].join(", ");
    const why = group.map((f) => `${flagWhy(f)} (${code(f.reason, 40)})`).join("; ");
    const id = first.item_id === undefined ? "" : `${itemIdCode(first.item_id)} `;
    return `- ${id}**${kinds}** in ${code(first.engram_id, ENGRAM_ID_CHARS)}, ${first.item_kind}: “${inlineText(first.text, FLAG_TEXT_CHARS)}” — ${why}`;
  });
  return [
    `### ⚠ Look at these first (${formatCount(items.length)})`,
    `Merging makes these part of what every agent reads. Reject one that should not be believed or followed with ${REJECT_COMMENT}; \`director guard\` fails on instructions and secrets.`,
    lines.join("\n"),
  ].join("\n\n");
}

/** A flag's why as Markdown: the ids and the command of a contradiction as code. */
function flagWhy(flag: ReviewFlag): string {
  const was = flag.contradicts;
  if (was === undefined) return inlineText(flag.why, 300);
  const id = code(was.id, ENGRAM_ID_CHARS + 8);
  return `contradicts ${id} on main, “${inlineText(was.text, FLAG_TEXT_CHARS)}”: ${sayWhichHolds(was.id, (c) => code(c, 120))}`;
}

/**
 * Every decision with its why, never cut, as new or changed (was -> now), then what the
 * proposal supersedes in memory; undefined when there is neither.
 */
export function decisionsBlock(items: readonly KnowledgeItem[] | undefined): string | undefined {
  const decisions = (items ?? []).filter((i) => i.kind === "decision");
  const replacing = (items ?? []).filter((i) => (i.replaces?.length ?? 0) > 0);
  if (decisions.length === 0 && replacing.length === 0) return undefined;
  const text = wholeText;
  const changed = decisions.filter((d) => d.replaces !== undefined).length;
  const history = historyImport(decisions);
  if (history !== undefined) decisions.sort(newestFirst);
  // "new:" only beside a changed one: when every decision is new, the heading says it.
  const lines = decisions.map((d) => {
    const why = text(d.rationale ?? "");
    const was = d.replaces?.map((w) => `“${text(w)}”`).join(", ");
    const head = was !== undefined ? `changed: ${was} -> ` : changed > 0 ? "new: " : "";
    const said = whoAndWhen(d);
    return `- ${itemIdCode(d.id)} ${head}**${text(d.text)}**${why === "" ? "" : ` — why: ${why}`}${said === "" ? "" : ` (${said})`}`;
  });
  const counts =
    changed === 0
      ? formatCount(decisions.length)
      : `${formatCount(decisions.length - changed)} new, ${formatCount(changed)} changed`;
  const superseded = replacing.flatMap((i) =>
    (i.replaces ?? []).map((w) => `- “${text(w)}” — superseded by ${i.kind} “${text(i.text)}”`),
  );
  return [
    ...(decisions.length > 0
      ? [`### Decisions (${counts})`, ...(history === undefined ? [] : [history]), lines.join("\n")]
      : []),
    ...(superseded.length > 0
      ? [
          `### Superseded (${formatCount(superseded.length)})`,
          "What memory says now and will no longer show once this is merged (MEMORY.md and recall keep only the new side):",
          superseded.join("\n"),
        ]
      : []),
  ].join("\n\n");
}

/** Inert inline text, whole: `inlineText` clipped at the text's own length cuts nothing. */
function wholeText(t: string): string {
  return inlineText(t, Math.max(1, String(t).length));
}

/**
 * `by `alice`, `bob` on 2025-01-02`: who said an item and when (the day), and for a history
 * import's item the commit it came from; "" when unknown.
 */
export function whoAndWhen(item: Pick<KnowledgeItem, "senders" | "at" | "commits">): string {
  const senders = item.senders ?? [];
  const shown = senders.slice(0, SENDERS_SHOWN).map((s) => code(s, SENDER_CHARS));
  const more =
    senders.length > SENDERS_SHOWN ? ` +${formatCount(senders.length - SENDERS_SHOWN)}` : "";
  const day = /^\d{4}-\d{2}-\d{2}/.exec(item.at ?? "")?.[0];
  const commits = (item.commits ?? []).slice(0, COMMITS_SHOWN).map((c) => code(c.slice(0, 12), 12));
  const moreCommits =
    (item.commits?.length ?? 0) > COMMITS_SHOWN
      ? ` +${formatCount((item.commits?.length ?? 0) - COMMITS_SHOWN)}`
      : "";
  const who = [
    ...(shown.length > 0 ? [`by ${shown.join(", ")}${more}`] : []),
    ...(day === undefined ? [] : [`on ${day}`]),
  ].join(" ");
  return [
    ...(who === "" ? [] : [who]),
    ...(commits.length > 0 ? [`commit ${commits.join(", ")}${moreCommits}`] : []),
  ].join(", ");
}

/**
 * The line that opens a history import's decisions (every one read from commits, each dated
 * by its newest commit): the commits' date range, newest first. Undefined for any other.
 */
function historyImport(decisions: readonly KnowledgeItem[]): string | undefined {
  if (decisions.length === 0) return undefined;
  if (!decisions.every((d) => d.commits !== undefined && d.at !== undefined)) return undefined;
  const days = decisions.map((d) => (d.at as string).slice(0, 10)).sort();
  return `Read from the repository's history: commits of ${days[0]} to ${days.at(-1)}, newest first.`;
}

/** Newest first by `at` (ISO-8601 UTC sorts as text); undated last; ties by id. */
function newestFirst(a: KnowledgeItem, b: KnowledgeItem): number {
  if (a.at !== b.at) return a.at === undefined ? 1 : b.at === undefined ? -1 : a.at < b.at ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Lessons, conventions and the other facts, grouped by kind: rows the body may cut. */
export function knowledgeLists(items: readonly KnowledgeItem[] | undefined): KnowledgeList[] {
  return LIST_KINDS.map((kind) => {
    const of = (items ?? []).filter((i) => i.kind === kind);
    return {
      heading: `### ${HEADINGS[kind]} (${formatCount(of.length)})`,
      rows: of.map((i) => `- ${itemIdCode(i.id)} ${inlineText(i.text, ITEM_CHARS) || "—"}`),
      noun: NOUNS[kind][0],
    };
  }).filter((l) => l.rows.length > 0);
}

/**
 * What agents will read: the MEMORY.md lines the proposal adds (+) and removes (−), under the
 * section they sit in; a list the body may cut, or one line when MEMORY.md keeps its items.
 */
export function memoryLinesSection(diff: FocusLineDiff): KnowledgeList {
  const line = (sign: string, l: FocusLine) =>
    `- **${sign}** ${l.section === "" ? "" : `${inlineText(l.section, 40)}: `}${inlineText(l.text, ITEM_CHARS) || "—"}`;
  const rows = [...diff.added.map((l) => line("+", l)), ...diff.removed.map((l) => line("−", l))];
  const heading = `### What agents will read: ${FOCUS_PATH} (+${formatCount(diff.added.length)}, −${formatCount(diff.removed.length)})`;
  return {
    heading:
      rows.length === 0
        ? `${heading}

Every agent reads ${FOCUS_PATH} when a session starts; this proposal leaves its items as they are.`
        : `${heading}

Every agent reads ${FOCUS_PATH} when a session starts; merging changes these lines of it:`,
    rows,
    noun: `${FOCUS_PATH} line`,
  };
}

/**
 * Who contributed: each sender with how many of the proposal's items they said, by kind, most
 * first (ties by name); a list the body may cut, undefined when no item names a sender.
 */
export function contributorsSection(
  items: readonly KnowledgeItem[] | undefined,
): KnowledgeList | undefined {
  const bySender = new Map<string, Map<KnowledgeKind, number>>();
  for (const item of items ?? []) {
    for (const sender of new Set(item.senders ?? [])) {
      const kinds = bySender.get(sender) ?? new Map<KnowledgeKind, number>();
      kinds.set(item.kind, (kinds.get(item.kind) ?? 0) + 1);
      bySender.set(sender, kinds);
    }
  }
  if (bySender.size === 0) return undefined;
  const total = (kinds: Map<KnowledgeKind, number>) =>
    [...kinds.values()].reduce((a, b) => a + b, 0);
  const rows = [...bySender]
    .map(([sender, kinds]) => ({ sender, kinds, n: total(kinds) }))
    .sort((x, y) => y.n - x.n || (x.sender < y.sender ? -1 : x.sender > y.sender ? 1 : 0))
    .map(({ sender, kinds, n }) => {
      const parts = (["decision", ...LIST_KINDS] as const)
        .filter((k) => kinds.has(k))
        .map((k) => plural(kinds.get(k) as number, ...NOUNS[k]));
      return `- ${code(sender, SENDER_CHARS)}: ${plural(n, "item")} (${parts.join(", ")})`;
    });
  return {
    heading: `### Who contributed (${formatCount(bySender.size)})\n\nThe senders of the notes this proposal's items came from; an item several said counts for each.`,
    rows,
    noun: "contributor",
  };
}

/** An item's id as the body shows it, beside the item: what `/engram reject` takes. */
function itemIdCode(id: string | undefined): string {
  return id === undefined ? "" : code(id, ITEM_ID_CHARS);
}

const REJECT_COMMENT = "a comment `/engram reject ITEM_ID`";

/** What merge, close and reject do, in one line: the body's second line. */
export function mergeCloseLine(): string {
  return (
    "**Merge**: every agent reads this memory from its next session. " +
    "**Close**: all of it is rejected and not proposed again. " +
    `**Reject one item**: ${REJECT_COMMENT} (or \`director reject ITEM_ID\`) regenerates the branch without it and keeps the rest.`
  );
}

/** What the branch must never be edited for, below the lists. */
export function handsOffLine(): string {
  return `_Do not edit \`${MEMORY_DIR}/\` or \`${FOCUS_PATH}\` by hand: the Director regenerates them._`;
}

/** The items left off the branch: held ones with how to release each, rejected ones counted. */
export function withheldBlock(withheld: readonly WithheldItem[] | undefined): string | undefined {
  const held = (withheld ?? []).filter((w) => w.reason === "held");
  const rejected = (withheld ?? []).filter((w) => w.reason === "rejected");
  if (held.length === 0 && rejected.length === 0) return undefined;
  const blocks: string[] = [];
  if (held.length > 0) {
    blocks.push(
      `### 🔒 Held, not on this branch (${formatCount(held.length)})`,
      `${plural(held.length, "item looks", "items look")} like a secret the redaction missed: kept off the branch, this body and \`${FOCUS_PATH}\` until someone checks it. If it is no secret, release it with a comment \`/engram release ITEM_ID\` (or \`director release ITEM_ID\`); otherwise reject it and rotate the secret.`,
      held
        .map(
          (w) =>
            `- ${itemIdCode(w.id)} ${NOUNS[w.kind][0]} in ${code(w.engram_id, ENGRAM_ID_CHARS)}: “${inlineText(w.text, FLAG_TEXT_CHARS)}”`,
        )
        .join("\n"),
    );
  }
  if (rejected.length > 0) {
    const ids = rejected.slice(0, REJECTED_SHOWN).map((w) => itemIdCode(w.id));
    const more =
      rejected.length > REJECTED_SHOWN
        ? ` and ${formatCount(rejected.length - REJECTED_SHOWN)} more`
        : "";
    blocks.push(
      `_${plural(rejected.length, "item")} rejected in review ${rejected.length === 1 ? "is" : "are"} left out: ${ids.join(", ")}${more} (\`/engram release ITEM_ID\` brings one back)._`,
    );
  }
  return blocks.join("\n\n");
}
