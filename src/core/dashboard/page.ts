import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "./assets.js";
import { budgetChart, bytesChart, engramsChart } from "./charts.js";
import { escapeHtml as h, jsonForScriptBlock } from "./escape.js";
import type { DashboardDecision, DashboardModel } from "./model.js";

/**
 * The page's policy: its own script and stylesheet files only, no inline script or event
 * handler, no inline style, nothing from another origin, no form, no frame.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'";

/** What only a response header can say (a meta element's policy may not): no framing. */
export const DASHBOARD_CSP_HEADER = `${DASHBOARD_CSP}; frame-ancestors 'none'`;

/** The files beside index.html that the page loads. */
export const DASHBOARD_ASSETS = { script: "app.js", style: "style.css" } as const;

/** Decisions written into the page; the rest are found through the engram list. */
const DECISIONS_SHOWN = 300;

/** `2026-11-29 04:56 UTC` from an ISO-8601 UTC time; the text as is when it is not one. */
export function shortTime(iso: string | null): string {
  if (iso === null || iso === "") return "never";
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/**
 * index.html: every section as markup (budgets, charts, focus, decisions, workers, sync),
 * the engrams embedded as a JSON data block that app.js reads to list and filter them.
 * Every text from memory or state passes through `escapeHtml`.
 */
export function renderDashboardPage(model: DashboardModel): string {
  const c = model.catalog;
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${h(DASHBOARD_CSP)}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(`engram memory: ${model.name}`)}</title>`,
    `<link rel="stylesheet" href="${DASHBOARD_ASSETS.style}">`,
    `<script src="${DASHBOARD_ASSETS.script}" defer></script>`,
    "</head>",
    "<body>",
    "<header>",
    `<h1>engram memory: ${h(model.name)}</h1>`,
    `<p class="meta">catalog <strong id="catalog-version">version ${c.version}</strong>, ${c.entries.toLocaleString("en")} engrams, <code id="catalog-hash">${h(c.hash)}</code>, made ${h(shortTime(c.created_at))}; page generated ${h(shortTime(model.generated_at))}</p>`,
    "</header>",
    "<main>",
    budgetsSection(model),
    versionsSection(model),
    focusSection(model),
    decisionsSection(model.decisions),
    engramsSection(model),
    workersSection(model),
    syncSection(model),
    "</main>",
    `<script type="application/json" id="data">${jsonForScriptBlock({ engrams: model.engrams })}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

function budgetsSection(model: DashboardModel): string {
  const reasons = Object.entries(model.quarantine.by_reason)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([reason, n]) => `${h(reason)} ${n}`)
    .join(", ");
  return [
    '<section id="tiers"><h2>Tiers, buffer and budgets</h2>',
    budgetChart(model.budgets),
    '<dl class="facts">',
    `<dt>quarantine</dt><dd>${model.quarantine.records} record(s)${reasons ? ` (${reasons})` : ""}</dd>`,
    `<dt>last compaction</dt><dd>${h(shortTime(model.last_compaction_at))}</dd>`,
    `<dt>spool</dt><dd>${model.spool_files} file(s) waiting</dd>`,
    "</dl></section>",
  ].join("\n");
}

function versionsSection(model: DashboardModel): string {
  return [
    '<section id="versions"><h2>Catalog versions</h2>',
    `<p class="meta">${model.versions.length} version(s) logged in memory/versions.ndjson</p>`,
    '<div class="charts">',
    `<figure>${engramsChart(model.versions)}<figcaption>engrams per version</figcaption></figure>`,
    `<figure>${bytesChart(model.versions)}<figcaption>bytes of memory per version</figcaption></figure>`,
    "</div></section>",
  ].join("\n");
}

function focusSection(model: DashboardModel): string {
  const { focus } = model;
  if (!focus.present) {
    return '<section id="focus"><h2>MEMORY.md</h2><p class="empty">MEMORY.md is missing</p></section>';
  }
  const groups = new Map<string, string[]>();
  for (const item of focus.items) {
    const list = groups.get(item.section) ?? [];
    list.push(`<li>${focusItemHtml(item.text)}</li>`);
    groups.set(item.section, list);
  }
  const body = [...groups]
    .map(([section, items]) => `<h3>${h(section || "items")}</h3><ul>${items.join("")}</ul>`)
    .join("\n");
  return [
    '<section id="focus"><h2>MEMORY.md</h2>',
    `<p class="meta">${focus.items.length} item(s)${focus.fresh ? "" : ", <strong>stale</strong>: generated from another catalog"}</p>`,
    body || '<p class="empty">no items</p>',
    "</section>",
  ].join("\n");
}

/**
 * A MEMORY.md item's few marks, on text already escaped (so no markup can come in): bold
 * stays bold, a link to an engram file shows its label (the file is not beside the page).
 */
function focusItemHtml(text: string): string {
  return h(text)
    .replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<code title="$2">$1</code>');
}

function decisionsSection(decisions: readonly DashboardDecision[]): string {
  const shown = decisions.slice(0, DECISIONS_SHOWN);
  const items = shown.map((d) => {
    const lineage = [
      `from <code>${h(d.source)}</code>`,
      d.supersedes.length > 0
        ? `which supersedes ${d.supersedes.map((id) => `<code>${h(id)}</code>`).join(", ")}`
        : "",
      d.superseded_by !== null ? `superseded by <code>${h(d.superseded_by)}</code>` : "",
    ]
      .filter(Boolean)
      .join("; ");
    return (
      `<li><time datetime="${h(d.date)}">${h(shortTime(d.date))}</time>` +
      `<div><strong class="title">${h(d.title)}</strong>` +
      (d.rationale ? `<p>${h(d.rationale)}</p>` : "") +
      `<p class="prov">${lineage}</p></div></li>`
    );
  });
  const more =
    decisions.length > shown.length
      ? `<p class="meta">${decisions.length - shown.length} older decision(s) not shown; search the engrams below</p>`
      : "";
  return [
    '<section id="decisions"><h2>Decisions</h2>',
    items.length > 0
      ? `<ol class="timeline">${items.join("\n")}</ol>${more}`
      : '<p class="empty">no decision recorded yet</p>',
    "</section>",
  ].join("\n");
}

function engramsSection(model: DashboardModel): string {
  const topics = model.topics
    .map((t) => `<option value="${h(t.topic)}">${h(t.topic)} (${t.count})</option>`)
    .join("");
  return [
    '<section id="engrams"><h2>Engrams</h2>',
    '<div class="controls">',
    '<input type="search" id="search" placeholder="search facts, decisions, topics, ids" aria-label="search engrams" autocomplete="off">',
    `<select id="topic" aria-label="topic"><option value="">every topic</option>${topics}</select>`,
    '<select id="tier" aria-label="tier"><option value="">both tiers</option><option value="st">short-term (st)</option><option value="lt">long-term (lt)</option></select>',
    "</div>",
    `<p class="meta" id="engram-count">${model.engrams.length} engram(s)</p>`,
    '<ol id="engram-list" class="engrams"></ol>',
    "</section>",
  ].join("\n");
}

function workersSection(model: DashboardModel): string {
  if (model.workers.length === 0) {
    return '<section id="workers"><h2>Workers</h2><p class="empty">no worker heard from</p></section>';
  }
  const rows = model.workers.map(
    (w) =>
      `<tr class="${w.live ? "live" : "silent"}"><td><code>${h(w.id)}</code></td>` +
      `<td>${w.live ? "live" : "silent"}</td>` +
      `<td>${h(shortTime(w.last_seen))} (${w.age_seconds} s ago)</td>` +
      `<td>${h(w.stage ?? "")}${w.issue ? ` ${h(w.issue)}` : ""}${w.progress !== null ? ` ${Math.round(w.progress * 100)}%` : ""}</td>` +
      `<td>${w.errors}</td><td>${h(w.drift)}</td></tr>`,
  );
  return [
    '<section id="workers"><h2>Workers</h2>',
    "<table><thead><tr><th>worker</th><th>liveness</th><th>last heartbeat</th><th>stage</th><th>errors</th><th>drift</th></tr></thead>",
    `<tbody>${rows.join("\n")}</tbody></table>`,
    "</section>",
  ].join("\n");
}

function syncSection(model: DashboardModel): string {
  if (model.sync.length === 0) {
    return '<section id="sync"><h2>Sync</h2><p class="empty">no sync target has run here</p></section>';
  }
  const rows = model.sync.map(
    (t) =>
      `<tr><td>${h(t.target)}</td><td>${h(t.state)}</td><td>${t.queue_depth}</td>` +
      `<td>${t.success_rate === null ? "none settled" : `${Math.round(t.success_rate * 100)}% (${t.synced} synced, ${t.failed} failed)`}</td>` +
      `<td>${h(t.last_error ?? "none")}</td><td>${h(shortTime(t.last_check_at))}</td></tr>`,
  );
  return [
    '<section id="sync"><h2>Sync</h2>',
    "<table><thead><tr><th>target</th><th>state</th><th>queue</th><th>success</th><th>last error</th><th>last check</th></tr></thead>",
    `<tbody>${rows.join("\n")}</tbody></table>`,
    "</section>",
  ].join("\n");
}

/** The text of the files beside index.html, by name. */
export const DASHBOARD_ASSET_TEXT: Readonly<Record<string, string>> = {
  [DASHBOARD_ASSETS.script]: DASHBOARD_SCRIPT,
  [DASHBOARD_ASSETS.style]: DASHBOARD_STYLE,
};

/** The page's files by name, in the order they are written: the assets, then index.html. */
export function dashboardFiles(model: DashboardModel): Map<string, string> {
  return new Map([
    ...Object.entries(DASHBOARD_ASSET_TEXT),
    ["index.html", renderDashboardPage(model)],
  ]);
}
