import type { TierUsage } from "../compaction/budget.js";
import { formatCount, formatPercent } from "./markdown.js";

/** The `[memory]` budgets a reviewer compares tier usage with. */
export interface TierBudgets {
  st_max_files: number;
  st_max_total_bytes: number;
  lt_max_files: number;
  lt_max_total_bytes: number;
}

export interface TierSnapshot {
  st: TierUsage;
  lt: TierUsage;
}

export interface FocusUsage {
  bytes_before: number;
  bytes_after: number;
  max_bytes: number;
  /** Its items (bullet lines) against `memory_md_max_items`, when the texts were read. */
  items_before?: number;
  items_after?: number;
  max_items?: number;
}

/** A budget this full (percent used, after the change) is near its limit: charted. */
export const NEAR_LIMIT_PERCENT = 80;

/** One `before → after of budget (p% → q%)` cell, or `after of budget (q%)` with no before. */
function cell(before: number | undefined, after: number, max: number): string {
  if (before === undefined || before === after) {
    return `${formatCount(after)} of ${formatCount(max)} (${formatPercent(after, max)})`;
  }
  return `${formatCount(before)} → ${formatCount(after)} of ${formatCount(max)} (${formatPercent(before, max)} → ${formatPercent(after, max)})`;
}

/**
 * A Markdown table of tier usage against the budgets: files and bytes per tier, before → after
 * when `before` is given, and MEMORY.md bytes when `focus` is. Only numbers go in: bounded.
 */
export function renderBudgetTable(
  after: TierSnapshot,
  budgets: TierBudgets,
  before?: TierSnapshot,
  focus?: FocusUsage | null,
): string {
  const rows = [
    "| tier | files | bytes |",
    "| --- | --- | --- |",
    `| short-term (ST) | ${cell(before?.st.files, after.st.files, budgets.st_max_files)} | ${cell(before?.st.bytes, after.st.bytes, budgets.st_max_total_bytes)} |`,
    `| long-term (LT) | ${cell(before?.lt.files, after.lt.files, budgets.lt_max_files)} | ${cell(before?.lt.bytes, after.lt.bytes, budgets.lt_max_total_bytes)} |`,
  ];
  if (focus) {
    const items =
      focus.items_after === undefined || focus.max_items === undefined
        ? ""
        : ` ${cell(focus.items_before, focus.items_after, focus.max_items)} items`;
    rows.push(
      `| MEMORY.md |${items} | ${cell(focus.bytes_before, focus.bytes_after, focus.max_bytes)} |`,
    );
  }
  return rows.join("\n");
}

/** Percent of budget for the chart: whole numbers, 0 without a budget, capped for sanity. */
function chartPercent(used: number, max: number): number {
  if (!Number.isFinite(used) || !Number.isFinite(max) || max <= 0) return 0;
  return Math.min(10_000, Math.max(0, Math.round((used * 100) / max)));
}

/**
 * A mermaid `xychart-beta` bar chart (GitHub renders mermaid fences) of the budgets near their
 * limit (at least `NEAR_LIMIT_PERCENT` used after the change), each before and after side by
 * side, as a percentage of the budget: tier files and bytes, MEMORY.md bytes and items.
 * Undefined when no budget is near its limit: bars of a few percent tell a reviewer nothing.
 * Labels are ours, not input text, so nothing needs escaping.
 */
export function renderTierChart(
  before: TierSnapshot,
  after: TierSnapshot,
  budgets: TierBudgets,
  focus?: FocusUsage | null,
): string | undefined {
  const budgetsUsed: [string, number | undefined, number, number][] = [
    ["ST files", before.st.files, after.st.files, budgets.st_max_files],
    ["ST bytes", before.st.bytes, after.st.bytes, budgets.st_max_total_bytes],
    ["LT files", before.lt.files, after.lt.files, budgets.lt_max_files],
    ["LT bytes", before.lt.bytes, after.lt.bytes, budgets.lt_max_total_bytes],
  ];
  if (focus) {
    budgetsUsed.push(["MEMORY.md bytes", focus.bytes_before, focus.bytes_after, focus.max_bytes]);
    if (focus.items_after !== undefined && focus.max_items !== undefined) {
      budgetsUsed.push(["MEMORY.md items", focus.items_before, focus.items_after, focus.max_items]);
    }
  }
  const series: [string, number][] = budgetsUsed
    .filter(([, , used, max]) => chartPercent(used, max) >= NEAR_LIMIT_PERCENT)
    .flatMap(([label, was, used, max]) => [
      [`${label} before`, chartPercent(was ?? 0, max)],
      [`${label} after`, chartPercent(used, max)],
    ]);
  if (series.length === 0) return undefined;
  const top = Math.max(100, ...series.map(([, v]) => v));
  return [
    "```mermaid",
    "xychart-beta",
    `  title "Budgets near their limit, % used"`,
    `  x-axis [${series.map(([label]) => `"${label}"`).join(", ")}]`,
    `  y-axis "% of budget" 0 --> ${top}`,
    `  bar [${series.map(([, v]) => v).join(", ")}]`,
    "```",
  ].join("\n");
}
