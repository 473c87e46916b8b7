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
}

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
    rows.push(`| MEMORY.md | | ${cell(focus.bytes_before, focus.bytes_after, focus.max_bytes)} |`);
  }
  return rows.join("\n");
}

/** Percent of budget for the chart: whole numbers, 0 without a budget, capped for sanity. */
function chartPercent(used: number, max: number): number {
  if (!Number.isFinite(used) || !Number.isFinite(max) || max <= 0) return 0;
  return Math.min(10_000, Math.max(0, Math.round((used * 100) / max)));
}

/**
 * A mermaid `xychart-beta` bar chart (GitHub renders mermaid fences) of each tier's files and
 * bytes as a percentage of its budget, before and after side by side. Labels are ours, not
 * input text, so nothing needs escaping.
 */
export function renderTierChart(
  before: TierSnapshot,
  after: TierSnapshot,
  budgets: TierBudgets,
): string {
  const series: [string, number][] = [];
  for (const [tier, label, maxFiles, maxBytes] of [
    ["st", "ST", budgets.st_max_files, budgets.st_max_total_bytes],
    ["lt", "LT", budgets.lt_max_files, budgets.lt_max_total_bytes],
  ] as const) {
    series.push(
      [`${label} files before`, chartPercent(before[tier].files, maxFiles)],
      [`${label} files after`, chartPercent(after[tier].files, maxFiles)],
      [`${label} bytes before`, chartPercent(before[tier].bytes, maxBytes)],
      [`${label} bytes after`, chartPercent(after[tier].bytes, maxBytes)],
    );
  }
  const top = Math.max(100, ...series.map(([, v]) => v));
  return [
    "```mermaid",
    "xychart-beta",
    '  title "Tier usage, % of budget"',
    `  x-axis [${series.map(([label]) => `"${label}"`).join(", ")}]`,
    `  y-axis "% of budget" 0 --> ${top}`,
    `  bar [${series.map(([, v]) => v).join(", ")}]`,
    "```",
  ].join("\n");
}
