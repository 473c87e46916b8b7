import { cutText } from "../model/text.js";
import {
  type FocusUsage,
  renderBudgetTable,
  type TierBudgets,
  type TierSnapshot,
} from "./budget-table.js";
import { code, formatCount, linkTarget, plural } from "./markdown.js";
import type { Proposal } from "./pr-body.js";

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
  };
}

/** A short Markdown report for `$GITHUB_STEP_SUMMARY`: the catalog, the PR, the budget table. */
export function renderStepSummary(input: StepSummaryInput): string {
  const lines = [
    `### engram Director: catalog v${formatCount(input.catalog_version)} ${code(input.catalog_hash, 80)}`,
    "",
  ];
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
