/*
 * The page's script and stylesheet, written beside index.html as files: the page's policy
 * runs no inline script. The script reads the engrams from the JSON data block, lists them
 * and filters them on every keystroke; it builds elements and sets `textContent` only, so
 * no text from memory is ever parsed as markup.
 */

/** app.js: the engram list, its search box and its topic and tier filters. */
export const DASHBOARD_SCRIPT = `"use strict";
(function () {
  var SHOWN = 300;
  var data = JSON.parse(document.getElementById("data").textContent);
  var engrams = data.engrams;
  var haystacks = engrams.map(function (e) {
    return [e.id, pathOf(e), e.scope, e.version, e.topics.join(" "), e.facts.join(" "),
      e.decisions.join(" "), e.provenance.created_by, e.provenance.run_id,
      e.provenance.senders.join(" ")].join("\\n").toLowerCase();
  });
  var search = document.getElementById("search");
  var topic = document.getElementById("topic");
  var tier = document.getElementById("tier");
  var list = document.getElementById("engram-list");
  var count = document.getElementById("engram-count");

  function pathOf(e) {
    return "memory/" + e.scope + "/" + e.version + "/engram_" + e.id + ".json";
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function row(e) {
    var li = el("li", "engram " + e.scope);
    var head = el("div", "head");
    head.appendChild(el("code", "id", e.id));
    head.appendChild(el("span", "tier", e.scope));
    head.appendChild(el("span", "version", e.version));
    e.topics.forEach(function (t) { head.appendChild(el("span", "topic", t)); });
    li.appendChild(head);
    if (e.decisions.length > 0 || e.facts.length > 0) {
      var ul = el("ul", "items");
      e.decisions.forEach(function (d) { ul.appendChild(el("li", "decision", d)); });
      e.facts.forEach(function (f) { ul.appendChild(el("li", "fact", f)); });
      li.appendChild(ul);
    }
    if (!e.readable) li.appendChild(el("p", "unreadable", "unreadable: run director verify"));
    var p = e.provenance;
    var prov = "by " + (p.created_by || "?") + ", run " + (p.run_id || "?") + ", " +
      p.event_count + " event(s) from " + (p.senders.join(", ") || "nobody") + "; " + pathOf(e);
    if (e.supersedes.length > 0) prov += "; supersedes " + e.supersedes.join(", ");
    if (e.superseded_by) prov += "; superseded by " + e.superseded_by;
    li.appendChild(el("p", "prov", prov));
    return li;
  }

  function render() {
    var words = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var wantTopic = topic.value;
    var wantTier = tier.value;
    var matches = [];
    for (var i = 0; i < engrams.length; i++) {
      var e = engrams[i];
      if (wantTier && e.scope !== wantTier) continue;
      if (wantTopic && e.topics.indexOf(wantTopic) < 0) continue;
      var hay = haystacks[i];
      var ok = true;
      for (var w = 0; w < words.length; w++) {
        if (hay.indexOf(words[w]) < 0) { ok = false; break; }
      }
      if (ok) matches.push(e);
    }
    var fragment = document.createDocumentFragment();
    matches.slice(0, SHOWN).forEach(function (e) { fragment.appendChild(row(e)); });
    list.replaceChildren(fragment);
    count.textContent = matches.length + " of " + engrams.length + " engram(s)" +
      (matches.length > SHOWN ? ", the first " + SHOWN + " shown" : "");
  }

  search.addEventListener("input", render);
  topic.addEventListener("change", render);
  tier.addEventListener("change", render);
  render();
})();
`;

/** style.css: readable on a laptop and in print, light and dark. */
export const DASHBOARD_STYLE = `:root { color-scheme: light dark; --fg: #1d232a; --muted: #5b6670; --bg: #ffffff;
  --panel: #f4f6f8; --line: #d5dbe1; --accent: #2563c9; --warn: #c27c0e; --bad: #c0392b; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e8ed; --muted: #98a4af; --bg: #14181c;
  --panel: #1d2328; --line: #34404a; --accent: #6aa2ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 16px; }
header { padding-top: 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 8px; }
h3 { font-size: 14px; margin: 10px 0 4px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 14px 0; }
code { font: 12px/1.3 ui-monospace, monospace; overflow-wrap: anywhere; }
.meta, .prov, .empty { color: var(--muted); margin: 2px 0; }
.prov { font-size: 12px; }
.chart { max-width: 100%; height: auto; }
.chart text { fill: var(--fg); font-size: 12px; }
.chart .tick { fill: var(--muted); font-size: 11px; }
.chart .end { text-anchor: end; }
.chart .track { fill: var(--line); }
.chart .bar { fill: var(--accent); }
.chart .bar.high { fill: var(--warn); }
.chart .bar.over { fill: var(--bad); }
.chart .axis { stroke: var(--muted); stroke-width: 1; }
.chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
.chart .point { fill: var(--accent); }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0 0; }
dt { color: var(--muted); }
dd { margin: 0; }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid var(--line); }
ol.timeline > li { display: grid; grid-template-columns: 150px 1fr; gap: 8px; padding: 4px 0 8px 10px; }
ol.timeline time { color: var(--muted); font-size: 12px; }
ol.timeline p { margin: 2px 0; }
.controls { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 6px; }
#search { flex: 1 1 320px; padding: 6px 8px; font-size: 14px; }
ol.engrams { list-style: none; padding: 0; margin: 0; }
ol.engrams > li { border-top: 1px solid var(--line); padding: 6px 0; }
.head { display: flex; gap: 6px; flex-wrap: wrap; align-items: baseline; }
.tier, .topic, .version { font-size: 11px; border-radius: 3px; padding: 0 5px; background: var(--line); }
.engram.lt .tier { background: var(--accent); color: var(--bg); }
ul.items { margin: 4px 0; padding-left: 20px; }
li.decision { font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
tr.silent td { color: var(--muted); }
.unreadable { color: var(--bad); margin: 2px 0; }
`;
