import type { ReviewFlag } from "../checks/review-flags.js";
import type { TierUsage } from "../compaction/budget.js";
import { CATALOG_PATH } from "../model/paths.js";
import type { FocusLineDiff } from "../proposal/focus-diff.js";
import type { KnowledgeItem } from "../proposal/knowledge.js";
import type { WithheldItem } from "../proposal/withhold.js";
import {
  type FocusUsage,
  renderBudgetTable,
  renderTierChart,
  type TierBudgets,
} from "./budget-table.js";
import { code, formatCount, inlineText, linkTarget, plural } from "./markdown.js";
import {
  contributorsSection,
  decisionsBlock,
  flagsBlock,
  handsOffLine,
  knowledgeHeadline,
  knowledgeLists,
  memoryLinesSection,
  mergeCloseLine,
  withheldBlock,
} from "./pr-knowledge.js";

/** One engram as a reviewer sees it in the PR body. */
export interface ProposalRow {
  engram_id: string;
  scope: "st" | "lt";
  path: string;
  topics: string[];
  first_fact: string;
  event_count?: number;
}

export type TierUsageRow = TierUsage;

/** What an engram pull request proposes: the Director's cycle, as plain data. */
export interface Proposal {
  base: { branch: string; sha: string; catalog_version: number; catalog_hash: string };
  head: { branch: string; catalog_version: number; catalog_hash: string };
  compacted_events: number;
  source_window: { start_ts: string; end_ts: string } | null;
  /** New engrams, ST and LT. */
  written: ProposalRow[];
  /** ST → LT, with why ("repeated in 3 engrams", "recalled 5 times", "explicit decision"). */
  promoted: (ProposalRow & { reason: string })[];
  evicted: { engram_id: string; scope: "st" | "lt"; path: string }[];
  tiers_before: { st: TierUsageRow; lt: TierUsageRow };
  tiers_after: { st: TierUsageRow; lt: TierUsageRow };
  budgets: TierBudgets;
  focus: FocusUsage | null;
  /** Engrams not proposed again because an earlier PR with them was closed unmerged. */
  rejected_skipped?: number;
  /** The knowledge the new engrams add, each claim once (`src/core/proposal/knowledge.ts`). */
  knowledge?: KnowledgeItem[];
  /** What a reviewer should look at first in it (`src/core/checks/review-flags.ts`). */
  flags?: ReviewFlag[];
  /** Items left off the branch: held until released, or rejected (`withholdItems`). */
  withheld?: WithheldItem[];
  /** The MEMORY.md item lines the head adds and removes: what agents will read. */
  memory_md?: FocusLineDiff;
}

export interface PrBodyOptions {
  /** Longest body in UTF-16 code units (GitHub counts characters; 65,536 at most). */
  maxChars?: number;
  /** A link for a repository path on the head branch; without it paths are shown as code. */
  fileUrl?: (path: string) => string;
  /** Core keys sessions changed since their parent version: held, not applied. */
  held?: readonly HeldForReview[];
  /** Where this run's dashboard of memory can be opened (`director dashboard`, uploaded). */
  dashboardUrl?: string;
}

/** A session's core change held for review (a conflict with a version after its parent). */
export interface HeldForReview {
  session_id: string;
  key: string;
  parent_version: number;
  changed_in_version: number;
  proposed: unknown;
}

/** GitHub refuses a pull-request body longer than this. */
export const GITHUB_BODY_MAX_CHARS = 65_536;

export const CATALOG_FILE = CATALOG_PATH;

/** What the hidden marker carries: enough for the Director to tell which base it built on. */
export interface PrMarker {
  base_branch: string;
  base_sha: string;
  base_catalog_version: number;
  base_catalog_hash: string;
  head_branch: string;
  head_catalog_version: number;
  head_catalog_hash: string;
}

const MARKER_PREFIX = "<!-- engram-pr ";
const MARKER_RE = /<!-- engram-pr (\{[^\n]*?\}) -->/;

const FACT_CHARS = 160;
const TOPIC_CHARS = 40;
const TOPICS_SHOWN = 5;
const REASON_CHARS = 100;
const ID_CHARS = 48;
const PATH_CHARS = 160;
const BRANCH_CHARS = 100;

/** A short title counting knowledge, not files: `memory: +2 decisions, +3 lessons (⚠ 1)`. */
export function renderPrTitle(p: Proposal): string {
  return knowledgeHeadline(p);
}

/**
 * The hidden marker: JSON inside an HTML comment. `<`, `>` and `&` only occur inside JSON
 * strings and are written as `\u` escapes, so no value can close the comment.
 */
export function renderPrMarker(p: Proposal): string {
  const clip = (s: string, n: number) => Array.from(String(s)).slice(0, n).join("");
  const marker: PrMarker = {
    base_branch: clip(p.base.branch, 255),
    base_sha: clip(p.base.sha, 64),
    base_catalog_version: p.base.catalog_version,
    base_catalog_hash: clip(p.base.catalog_hash, 80),
    head_branch: clip(p.head.branch, 255),
    head_catalog_version: p.head.catalog_version,
    head_catalog_hash: clip(p.head.catalog_hash, 80),
  };
  const json = JSON.stringify(marker).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `${MARKER_PREFIX}${json} -->`;
}

/** Reads the marker back from a PR body (the first one: escaped input text cannot hold one). */
export function parsePrMarker(body: string): PrMarker | undefined {
  const m = MARKER_RE.exec(body);
  if (!m) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(m[1] as string);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ["base_branch", "base_sha", "base_catalog_hash", "head_branch"] as const;
  const versions = ["base_catalog_version", "head_catalog_version"] as const;
  if (!strings.every((k) => typeof v[k] === "string")) return undefined;
  if (typeof v.head_catalog_hash !== "string") return undefined;
  if (!versions.every((k) => Number.isSafeInteger(v[k]) && (v[k] as number) >= 0)) {
    return undefined;
  }
  return {
    base_branch: v.base_branch as string,
    base_sha: v.base_sha as string,
    base_catalog_version: v.base_catalog_version as number,
    base_catalog_hash: v.base_catalog_hash as string,
    head_branch: v.head_branch as string,
    head_catalog_version: v.head_catalog_version as number,
    head_catalog_hash: v.head_catalog_hash as string,
  };
}

/** A table of rows that may be cut from the end, with the notice saying what was left out. */
interface RowSection {
  heading: string;
  header: string;
  rows: string[];
  noun: string;
}

/**
 * The pull-request body, knowledge first: a line counting what the memory gains, the items
 * to look at first and why, every decision with its why, the lessons, conventions and other
 * facts, what merge and close do; then, folded, the bookkeeping (what was compacted, the
 * hashes, the budgets, one row per engram, the evictions) and the hidden marker. Pure and
 * deterministic; never longer than `maxChars`: list items and rows are dropped from the end,
 * with a notice of how many.
 */
export function renderPrBody(p: Proposal, options: PrBodyOptions = {}): string {
  const maxChars = limitOf(options.maxChars);
  const link = (path: string, text: string): string => {
    const url = options.fileUrl ? linkTarget(options.fileUrl(path)) : undefined;
    return url === undefined ? code(text, ID_CHARS) : `[${inlineText(text, ID_CHARS)}](${url})`;
  };
  const marker = renderPrMarker(p);
  const heading = `## Memory update: catalog v${formatCount(p.base.catalog_version)} → v${formatCount(p.head.catalog_version)}`;
  const summary = summaryLine(p);
  const refs = `Base ${code(p.base.branch, BRANCH_CHARS)} at ${code(String(p.base.sha).slice(0, 12), 12)} (catalog ${code(shortHash(p.base.catalog_hash), 24)}) → head ${code(p.head.branch, BRANCH_CHARS)} (catalog ${code(shortHash(p.head.catalog_hash), 24)}).`;
  const budgets = [
    "### Budgets",
    renderBudgetTable(p.tiers_after, p.budgets, p.tiers_before, p.focus),
  ].join("\n\n");
  // Only where a budget nears its limit; otherwise the table says all.
  const chart = renderTierChart(p.tiers_before, p.tiers_after, p.budgets, p.focus);
  const skipped =
    p.rejected_skipped !== undefined && p.rejected_skipped > 0
      ? [
          `_${plural(p.rejected_skipped, "engram")} from earlier pull requests closed without merging ${p.rejected_skipped === 1 ? "was" : "were"} not proposed again._`,
        ]
      : [];
  const engramSections: RowSection[] = [
    {
      heading: `### Promoted to long-term (${formatCount(p.promoted.length)})`,
      header: "| engram | topics | first fact | why |\n| --- | --- | --- | --- |",
      rows: p.promoted.map(
        (r) =>
          `| ${link(r.path, r.engram_id)} | ${topicsCell(r.topics)} | ${factCell(r.first_fact)} | ${inlineText(r.reason, REASON_CHARS) || "—"} |`,
      ),
      noun: "promoted engram",
    },
    {
      heading: `### New engrams (${formatCount(p.written.length)})`,
      header: "| tier | engram | topics | first fact | events |\n| --- | --- | --- | --- | --- |",
      rows: p.written.map(
        (r) =>
          `| ${tierName(r.scope)} | ${link(r.path, r.engram_id)} | ${topicsCell(r.topics)} | ${factCell(r.first_fact)} | ${r.event_count === undefined ? "" : formatCount(r.event_count)} |`,
      ),
      noun: "new engram",
    },
    {
      heading: `### Evicted over budget (${formatCount(p.evicted.length)})`,
      header: "| tier | engram | path |\n| --- | --- | --- |",
      rows: p.evicted.map(
        (r) =>
          `| ${tierName(r.scope)} | ${code(r.engram_id, ID_CHARS)} | ${code(r.path, PATH_CHARS)} |`,
      ),
      noun: "evicted engram",
    },
    {
      heading: `### Held for review (${formatCount(options.held?.length ?? 0)})`,
      header:
        "| session | core key | changed since parent | proposed value |\n| --- | --- | --- | --- |",
      rows: (options.held ?? []).map(
        (h) =>
          `| ${code(h.session_id, ID_CHARS)} | ${code(h.key, ID_CHARS)} | v${formatCount(h.parent_version)} → v${formatCount(h.changed_in_version)} | ${code(JSON.stringify(h.proposed) ?? "null", REASON_CHARS)} |`,
      ),
      noun: "held change",
    },
  ].filter((s) => s.rows.length > 0);
  const block = (text: string): RowSection => ({ heading: text, header: "", rows: [], noun: "" });
  const contributors = contributorsSection(p.knowledge);
  const lists: RowSection[] = [
    ...knowledgeLists(p.knowledge),
    ...(p.memory_md === undefined ? [] : [memoryLinesSection(p.memory_md)]),
    ...(contributors === undefined ? [] : [contributors]),
  ].map((l) => ({ ...l, header: "" }));
  const headline = `**${inlineText(knowledgeHeadline(p), 300)}**`;
  const dashboard = dashboardLine(options.dashboardUrl);
  const top = [
    marker,
    headline,
    mergeCloseLine(),
    dashboard,
    withheldBlock(p.withheld),
    flagsBlock(p.flags),
    decisionsBlock(p.knowledge),
  ].filter((b) => b !== undefined);
  // The bookkeeping folds away; richer folds first, the poorer for a too small `maxChars`.
  const fold = (blocks: readonly string[]): RowSection =>
    block(
      [
        `<details>\n<summary>Bookkeeping: catalog v${formatCount(p.base.catalog_version)} → v${formatCount(p.head.catalog_version)}, engram files, budgets</summary>`,
        ...blocks,
      ].join(SEP),
    );
  const closeFold = "</details>";

  const catalogRef = options.fileUrl
    ? (() => {
        const url = linkTarget(options.fileUrl(CATALOG_FILE));
        return url === undefined ? code(CATALOG_FILE) : `[${CATALOG_FILE}](${url})`;
      })()
    : `${code(CATALOG_FILE)} on ${code(p.head.branch, BRANCH_CHARS)}`;
  const notice = (s: RowSection, omitted: number): string =>
    `_… ${plural(omitted, `more ${s.noun}`, `more ${s.noun}s`)} not shown: a pull-request body holds at most ${formatCount(maxChars)} characters. Every file is in the Files changed tab; the full list is in ${catalogRef}._`;

  const body = (before: string[], sections: RowSection[], after: string[]) =>
    fitRows(before, sections, after, notice, maxChars);
  const decisionCount = (p.knowledge ?? []).filter((k) => k.kind === "decision").length;
  const variants: (() => string | undefined)[] = [
    () =>
      body(
        top,
        [
          ...lists,
          block(handsOffLine()),
          fold([heading, summary, refs, budgets, ...(chart === undefined ? [] : [chart])]),
          ...engramSections,
        ],
        [...skipped, closeFold],
      ),
    () =>
      body(
        top,
        [
          ...lists,
          block(handsOffLine()),
          fold([heading, summary, refs, budgets]),
          ...engramSections,
        ],
        [...skipped, closeFold],
      ),
    () =>
      body(top, [...lists, block(handsOffLine()), fold([summary]), ...engramSections], [closeFold]),
    () => body(top, [...lists, block(handsOffLine())], []),
    () =>
      body(
        [
          marker,
          headline,
          mergeCloseLine(),
          ...(p.flags?.length ? [flagsBlock(p.flags) as string] : []),
          ...(decisionCount > 0 ? [decisionsElsewhere(decisionCount, catalogRef)] : []),
        ],
        [],
        [],
      ),
    () => body([marker, headline, mergeCloseLine()], [], []),
    () => body([marker, headline], [], []),
    () => body([marker], [], []),
  ];
  for (const variant of variants) {
    const text = variant();
    if (text !== undefined) return text;
  }
  return "";
}

/** Said where whole decisions do not fit in a body: never cut, so left out, and said so. */
function decisionsElsewhere(count: number, catalogRef: string): string {
  return `_${plural(count, "decision")}, whole, do not fit in a pull-request body: read them in the Files changed tab or from ${catalogRef}._`;
}

/** The link to the dashboard artifact; none when no URL is given or it is not http(s). */
function dashboardLine(url: string | undefined): string | undefined {
  const target = url === undefined ? undefined : linkTarget(url);
  if (target === undefined || !/^https?:\/\//i.test(target)) return undefined;
  return `Dashboard of this memory: [the engram-dashboard artifact](${target}) (budgets, decisions, searchable engrams; open index.html).`;
}

function limitOf(maxChars: number | undefined): number {
  if (maxChars === undefined) return GITHUB_BODY_MAX_CHARS;
  return Number.isFinite(maxChars) && maxChars > 0 ? Math.floor(maxChars) : 0;
}

function summaryLine(p: Proposal): string {
  const st = p.written.filter((r) => r.scope === "st").length;
  const lt = p.written.length - st;
  const window = p.source_window
    ? ` received from ${code(p.source_window.start_ts, 40)} to ${code(p.source_window.end_ts, 40)}`
    : "";
  const compacted =
    p.compacted_events > 0 || p.written.length > 0
      ? `The Director compacted **${plural(p.compacted_events, "event")}**${window} into **${plural(p.written.length, "engram")}** (${formatCount(st)} short-term, ${formatCount(lt)} long-term).`
      : "No new events were compacted.";
  const moved = `${plural(p.promoted.length, "engram")} promoted to long-term, ${formatCount(p.evicted.length)} evicted to stay within the tier budgets.`;
  return `${compacted} ${moved}`;
}

function shortHash(hash: string): string {
  const s = String(hash);
  return s.startsWith("sha256:") ? s.slice(0, 19) : s.slice(0, 24);
}

function tierName(scope: string): string {
  return scope === "lt" ? "LT" : scope === "st" ? "ST" : code(scope, 8);
}

function topicsCell(topics: readonly string[]): string {
  const shown = topics
    .slice(0, TOPICS_SHOWN)
    .map((t) => inlineText(t, TOPIC_CHARS))
    .filter((t) => t !== "");
  const more = topics.length > TOPICS_SHOWN ? ` +${formatCount(topics.length - TOPICS_SHOWN)}` : "";
  return shown.length > 0 ? `${shown.join(", ")}${more}` : "—";
}

function factCell(fact: string): string {
  return inlineText(fact, FACT_CHARS) || "—";
}

const SEP = "\n\n";

/**
 * Joins the blocks with as many rows as fit within `maxChars`, rows taken in section order and
 * dropped from the end; undefined when even no rows do not fit.
 */
function fitRows(
  before: readonly string[],
  sections: readonly RowSection[],
  after: readonly string[],
  notice: (s: RowSection, omitted: number) => string,
  maxChars: number,
): string | undefined {
  const render = (kept: number): string => {
    const blocks = [...before];
    let left = kept;
    for (const s of sections) {
      const k = Math.min(left, s.rows.length);
      left -= k;
      const omitted = s.rows.length - k;
      const parts = [s.heading];
      if (k > 0)
        parts.push(`${s.header === "" ? "" : `${s.header}\n`}${s.rows.slice(0, k).join("\n")}`);
      if (omitted > 0) parts.push(notice(s, omitted));
      blocks.push(parts.join(SEP));
    }
    blocks.push(...after);
    return `${blocks.join(SEP)}\n`;
  };
  // Exact lengths from prefix sums, so finding the largest fit stays linear in the rows.
  const fixed =
    before.reduce((n, b) => n + b.length + SEP.length, 0) +
    after.reduce((n, b) => n + b.length + SEP.length, 0) -
    SEP.length +
    1;
  const total = sections.reduce((n, s) => n + s.rows.length, 0);
  const prefix = sections.map((s) => {
    const sums = [0];
    for (const row of s.rows) sums.push((sums[sums.length - 1] as number) + row.length + 1);
    return sums;
  });
  const lengthOf = (kept: number): number => {
    let n = fixed;
    let left = kept;
    sections.forEach((s, i) => {
      const k = Math.min(left, s.rows.length);
      left -= k;
      const omitted = s.rows.length - k;
      n += SEP.length + s.heading.length;
      // Rows are counted with a newline each: with no header the first one has none.
      if (k > 0)
        n += SEP.length + s.header.length + (prefix[i]?.[k] as number) - (s.header === "" ? 1 : 0);
      if (omitted > 0) n += SEP.length + notice(s, omitted).length;
    });
    return n;
  };
  for (let kept = total; kept >= 0; kept--) {
    if (lengthOf(kept) > maxChars) continue;
    const body = render(kept);
    // The arithmetic mirrors render(); the check keeps the bound even if they ever drift.
    if (body.length <= maxChars) return body;
  }
  return undefined;
}
