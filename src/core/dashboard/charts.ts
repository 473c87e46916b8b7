import { escapeHtml } from "./escape.js";
import type { BudgetUse, DashboardVersion } from "./model.js";

/*
 * The charts are SVG drawn here, as markup in index.html: no library, no script needed to
 * see them. Colours come from classes in style.css (the page's policy forbids inline styles).
 */

const UNITS = ["B", "KiB", "MiB", "GiB"];

/** Bytes for people: `3.7 KiB`, `32 MiB`. */
export function formatBytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 ? String(value) : value.toFixed(1).replace(/\.0$/, "");
  return `${shown} ${UNITS[unit]}`;
}

/** `30 / 397 files`, `3.7 KiB / 4 MiB`. */
export function formatBudget(b: BudgetUse): string {
  if (b.unit === "bytes") return `${formatBytes(b.used)} / ${formatBytes(b.max)}`;
  return `${b.used.toLocaleString("en")} / ${b.max.toLocaleString("en")} ${b.unit}`;
}

function fillClass(ratio: number): string {
  return ratio >= 1 ? "bar over" : ratio >= 0.8 ? "bar high" : "bar";
}

const LABEL_W = 130;
const BAR_W = 300;
const ROW_H = 26;

/** One horizontal bar per budget, its use written beside it. */
export function budgetChart(budgets: readonly BudgetUse[]): string {
  const height = budgets.length * ROW_H + 8;
  const width = LABEL_W + BAR_W + 170;
  const rows = budgets.map((b, i) => {
    const y = 4 + i * ROW_H;
    const ratio = b.max > 0 ? b.used / b.max : 0;
    const filled = Math.max(ratio > 0 ? 1 : 0, Math.round(Math.min(ratio, 1) * BAR_W));
    return [
      `<text x="0" y="${y + 15}" class="label">${escapeHtml(b.label)}</text>`,
      `<rect x="${LABEL_W}" y="${y + 3}" width="${BAR_W}" height="16" class="track"/>`,
      `<rect x="${LABEL_W}" y="${y + 3}" width="${filled}" height="16" class="${fillClass(ratio)}" data-budget="${escapeHtml(b.label)}"/>`,
      `<text x="${LABEL_W + BAR_W + 8}" y="${y + 15}" class="value">${escapeHtml(formatBudget(b))}</text>`,
    ].join("");
  });
  return svg(width, height, "budgets against their use", rows.join(""));
}

const CHART_W = 440;
const CHART_H = 180;
const PAD = { left: 72, right: 12, top: 12, bottom: 34 };
/** More points than a chart this wide can show apart: the latest are drawn. */
const MAX_POINTS = 200;

interface Series {
  title: string;
  values: readonly { version: number; value: number }[];
  format: (n: number) => string;
  kind: "line" | "bars";
}

/** Engrams per logged version, as a line with a point per version. */
export function engramsChart(versions: readonly DashboardVersion[]): string {
  return seriesChart({
    title: "engrams per version",
    values: versions.map((v) => ({ version: v.version, value: v.engrams })),
    format: (n) => n.toLocaleString("en"),
    kind: "line",
  });
}

/** Bytes of memory per logged version (those whose snapshot could be read), as bars. */
export function bytesChart(versions: readonly DashboardVersion[]): string {
  const values: { version: number; value: number }[] = [];
  for (const v of versions)
    if (v.bytes !== null) values.push({ version: v.version, value: v.bytes });
  return seriesChart({ title: "bytes per version", values, format: formatBytes, kind: "bars" });
}

function seriesChart(series: Series): string {
  const values = series.values.slice(-MAX_POINTS);
  if (values.length === 0) {
    return svg(
      CHART_W,
      60,
      series.title,
      `<text x="8" y="34" class="label">no version logged yet (memory/versions.ndjson)</text>`,
    );
  }
  const plotW = CHART_W - PAD.left - PAD.right;
  const plotH = CHART_H - PAD.top - PAD.bottom;
  const max = Math.max(1, ...values.map((v) => v.value));
  const step = plotW / values.length;
  const x = (i: number) => PAD.left + step * i + step / 2;
  const y = (value: number) => PAD.top + plotH - (value / max) * plotH;
  const parts: string[] = [
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}" class="axis"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" class="axis"/>`,
    `<text x="${PAD.left - 6}" y="${PAD.top + 10}" class="tick end">${escapeHtml(series.format(max))}</text>`,
    `<text x="${PAD.left - 6}" y="${PAD.top + plotH}" class="tick end">0</text>`,
  ];
  const first = values[0] as { version: number };
  const last = values[values.length - 1] as { version: number };
  parts.push(
    `<text x="${PAD.left}" y="${CHART_H - 10}" class="tick">v${first.version}</text>`,
    `<text x="${PAD.left + plotW}" y="${CHART_H - 10}" class="tick end">v${last.version}</text>`,
  );
  if (series.kind === "line") {
    const points = values.map((v, i) => `${round(x(i))},${round(y(v.value))}`).join(" ");
    parts.push(`<polyline points="${points}" class="line"/>`);
  }
  values.forEach((v, i) => {
    const label = `v${v.version}: ${series.format(v.value)}`;
    if (series.kind === "line") {
      parts.push(
        `<circle cx="${round(x(i))}" cy="${round(y(v.value))}" r="3" class="point"><title>${escapeHtml(label)}</title></circle>`,
      );
    } else {
      const top = y(v.value);
      const w = Math.min(40, Math.max(1, step * 0.7));
      parts.push(
        `<rect x="${round(x(i) - w / 2)}" y="${round(top)}" width="${round(w)}" height="${round(PAD.top + plotH - top)}" class="bar"><title>${escapeHtml(label)}</title></rect>`,
      );
    }
  });
  return svg(CHART_W, CHART_H, series.title, parts.join(""));
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function svg(width: number, height: number, title: string, body: string): string {
  return (
    `<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(title)}">` +
    `<title>${escapeHtml(title)}</title>${body}</svg>`
  );
}
