import type { ReviewFlag } from "../checks/review-flags.js";
import { cutText } from "../model/text.js";
import {
  type FocusUsage,
  renderBudgetTable,
  type TierBudgets,
  type TierSnapshot,
} from "./budget-table.js";
import { code, formatCount, inlineText, linkTarget, plural } from "./markdown.js";
import type { Proposal } from "./pr-body.js";
import { knowledgeHeadline } from "./pr-knowledge.js";

/** Flagged or held items listed in the summary; the pull request has them all. */
const LINES_SHOWN = 50;

/** What a Director run reports, as far as the job summary needs it. */
export interface StepSummaryInput {
  catalog_version: number;
  catalog_hash: string;
  tiers: TierSnapshot;
  budgets: TierBudgets;
  tiers_before?: TierSnapshot;
  focus?: FocusUsage | null;
  compacted_events?: number;
  engrams_written?: number;
  engrams_promoted?: number;
  engrams_evicted?: number;
  /** The engram pull request opened or updated by the run, null when none was needed. */
  pr?: { number: number; url: string } | null;
  /** What the pull request asks the team to believe: its title (`knowledgeHeadline`). */
  headline?: string;
  /** One line per item to look at first: id, kind and why (the body's flags). */
  look_first?: string[];
  /** Items held off the branch until someone releases them. */
  held?: string[];
}

/** Far below the 1 MiB GitHub accepts per step: only numbers and a few clipped strings go in. */
export const STEP_SUMMARY_MAX_CHARS = 16_384;

export function stepSummaryFromProposal(
  p: Proposal,
  pr?: { number: number; url: string } | null,
): StepSummaryInput {
  return {
    catalog_version: p.head.catalog_version,
    catalog_hash: p.head.catalog_hash,
    tiers: p.tiers_after,
    tiers_before: p.tiers_before,
    budgets: p.budgets,
    focus: p.focus,
    compacted_events: p.compacted_events,
    engrams_written: p.written.length,
    engrams_promoted: p.promoted.length,
    engrams_evicted: p.evicted.length,
    pr: pr ?? null,
    headline: knowledgeHeadline(p),
    look_first: flagLines(p.flags ?? []),
    held: (p.withheld ?? [])
      .filter((w) => w.reason === "held")
      .map((w) => `${code(w.id, 24)} ${w.kind}: ${inlineText(w.text, 120)}`),
  };
}

/** A flagged item per line, its reasons joined (the body's "Look at these first", short). */
function flagLines(flags: readonly ReviewFlag[]): string[] {
  const byItem = new Map<string, { id: string; kind: string; reasons: string[] }>();
  for (const f of flags) {
    const key = f.item_id ?? f.engram_id;
    const at = byItem.get(key) ?? { id: key, kind: f.item_kind, reasons: [] };
    if (!at.reasons.includes(f.reason)) at.reasons.push(f.reason);
    byItem.set(key, at);
  }
  return [...byItem.values()].map(
    (i) =>
      `${code(i.id, 48)} ${inlineText(i.kind, 20)}: ${i.reasons.map((r) => inlineText(r, 40)).join(", ")}`,
  );
}

/** A short Markdown report for `$GITHUB_STEP_SUMMARY`: the catalog, the PR, the budget table. */
export function renderStepSummary(input: StepSummaryInput): string {
  const lines = [
    `### engram Director: catalog v${formatCount(input.catalog_version)} ${code(input.catalog_hash, 80)}`,
    "",
  ];
  // Knowledge first, as in the pull request: what the team will believe, what to look at.
  if (input.headline !== undefined) lines.push(`**${inlineText(input.headline, 300)}**`, "");
  if (input.look_first !== undefined && input.look_first.length > 0) {
    lines.push(
      `⚠ Look at these first (${formatCount(input.look_first.length)}):`,
      "",
      ...input.look_first.slice(0, LINES_SHOWN).map((l) => `- ${l}`),
      "",
    );
  }
  if (input.held !== undefined && input.held.length > 0) {
    lines.push(
      `🔒 ${plural(input.held.length, "item")} held off the branch (secret-like): \`director release ITEM_ID\` or a comment \`/engram release ITEM_ID\` after checking.`,
      "",
      ...input.held.slice(0, LINES_SHOWN).map((l) => `- ${l}`),
      "",
    );
  }
  if (input.compacted_events !== undefined) {
    lines.push(
      `${plural(input.compacted_events, "event")} compacted into ${plural(input.engrams_written ?? 0, "engram")}; ${formatCount(input.engrams_promoted ?? 0)} promoted, ${formatCount(input.engrams_evicted ?? 0)} evicted.`,
      "",
    );
  }
  if (input.pr !== undefined) {
    const url = input.pr ? linkTarget(input.pr.url) : undefined;
    const number = input.pr ? `#${formatCount(input.pr.number).replace(/,/g, "")}` : "";
    lines.push(
      input.pr === null
        ? "No engram pull request (nothing to propose, or GitHub is not configured)."
        : `Engram pull request: ${url === undefined ? number : `[${number}](${url})`}`,
      "",
    );
  }
  lines.push(renderBudgetTable(input.tiers, input.budgets, input.tiers_before, input.focus), "");
  const text = lines.join("\n");
  return text.length <= STEP_SUMMARY_MAX_CHARS
    ? text
    : `${cutText(text, STEP_SUMMARY_MAX_CHARS - 2)}\n`;
}
