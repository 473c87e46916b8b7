/**
 * The dashboard's pure parts: every text from memory escaped wherever it lands, the data
 * block unable to end its script element, charts drawn as SVG, no other origin named, and
 * the pull-request body's link to the uploaded page.
 */
import { describe, expect, it } from "vitest";
import { budgetChart, engramsChart, formatBudget } from "../../src/core/dashboard/charts.js";
import { escapeHtml, jsonForScriptBlock } from "../../src/core/dashboard/escape.js";
import {
  buildDashboardModel,
  type DashboardInput,
  type DashboardStatus,
  engramView,
} from "../../src/core/dashboard/model.js";
import { dashboardFiles, renderDashboardPage } from "../../src/core/dashboard/page.js";
import { buildProposal } from "../../src/core/proposal/proposal.js";
import { renderPrBody } from "../../src/core/rendering/pr-body.js";
import { catalogOf, engram, mapOf } from "./focus-fixtures.js";

const HOSTILE = [
  `<img src=x onerror="document.title='pwned'">`,
  "<script>document.title='pwned'</script>",
  "</script><script>alert(1)</script>",
  "<!--",
  `" onmouseover="alert(1)`,
  "\u2028line\u2029",
];

const tier = { files: 1, bytes: 900, max_files: 397, max_bytes: 4_194_304 };
const status: DashboardStatus = {
  catalog: {
    version: 7,
    hash: `sha256:${"a".repeat(64)}`,
    entries: 2,
    created_at: "2025-01-01T00:00:00.000Z",
  },
  buffer: { events: 30, bytes: 4000, max_events: 100_000, max_bytes: 33_554_432 },
  tiers: { st: { ...tier, files: 30 }, lt: tier },
  focus: { present: true, fresh: true, bytes: 300, items: 2, max_bytes: 16_384, max_items: 60 },
  quarantine: { records: 1, by_reason: { [HOSTILE[0] as string]: 1 } },
  spool: { files: 0 },
  last_compaction_at: "2025-01-01T00:00:00.000Z",
  swarm: {
    workers: [
      {
        worker: HOSTILE[1] as string,
        last_seen: "2025-01-01T00:00:00.000Z",
        age_seconds: 12,
        live: true,
        stage: HOSTILE[4] as string,
        issue: "#42",
        progress: 0.5,
        errors: 0,
        catalog_mismatch: false,
        drift: null,
      },
    ],
  },
};

function hostileInput(): DashboardInput {
  const st = engram({
    version: "20250101-000000Z",
    topics: [HOSTILE[2] as string],
    facts: HOSTILE,
    decisions: [{ title: HOSTILE[0] as string, rationale: HOSTILE[1] as string }],
  });
  return {
    generatedAt: "2025-01-02T00:00:00.000Z",
    name: HOSTILE[3] as string,
    status,
    catalog: catalogOf([st]),
    engrams: new Map([[st.engram_id, engramView(JSON.parse(JSON.stringify(st)))]]),
    focusText: `## Decisions\n\n- **${HOSTILE[0]}**: ${HOSTILE[1]} ([e_1](memory/x.json))\n`,
    versions: [
      {
        version: 6,
        catalog_hash: `sha256:${"b".repeat(64)}`,
        created_at: "2025-01-01T00:00:00.000Z",
        made_by: { kind: "session", session_id: HOSTILE[0] as string },
        counts: { engrams: 1, episodes: 0, facts: 0, state: 0, core: 0 },
      },
      {
        version: 7,
        catalog_hash: status.catalog.hash,
        created_at: "2025-01-01T00:00:00.000Z",
        made_by: { kind: "cycle" },
        counts: { engrams: 2, episodes: 0, facts: 0, state: 0, core: 0 },
      },
    ],
    versionBytes: new Map([[7, 1800]]),
    knowledgeDecisions: [
      {
        id: "k_1",
        text: HOSTILE[2] as string,
        rationale: null,
        version: 6,
        written_at: "2025-01-01T00:00:00.000Z",
      },
    ],
    sync: [
      {
        target: "notion",
        state: "active",
        records: [
          { state: "synced", last_error: null, last_attempt_at: "2025-01-01T00:00:00.000Z" },
          {
            state: "failed",
            last_error: HOSTILE[0] as string,
            last_attempt_at: "2025-01-01T00:01:00.000Z",
          },
          { state: "pending", last_error: null, last_attempt_at: null },
        ],
        last_check_at: null,
        status_reason: null,
      },
    ],
  };
}

describe("engramView", () => {
  it("takes what the page shows from any JSON, empty where a field is missing or mistyped", () => {
    expect(
      engramView({
        facts: ["a", 3],
        decisions: [{ title: "t" }, null, { title: 1 }],
        provenance: 7,
      }),
    ).toEqual({
      end_ts: "",
      facts: ["a"],
      decisions: [{ title: "t", rationale: "" }],
      supersedes: [],
      provenance: { created_by: "", run_id: "", senders: [], event_count: 0 },
    });
    expect(engramView(null).facts).toEqual([]);
  });
});

describe("escaping", () => {
  it("escapeHtml leaves no markup character", () => {
    for (const text of HOSTILE) expect(escapeHtml(text)).not.toMatch(/[<>"']/);
    expect(escapeHtml(`a&<b>"'`)).toBe("a&amp;&lt;b&gt;&quot;&#39;");
  });

  it("jsonForScriptBlock cannot end or bend its script element and reads back as is", () => {
    const value = { notes: HOSTILE };
    const text = jsonForScriptBlock(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe("the page", () => {
  const model = buildDashboardModel(hostileInput());
  const html = renderDashboardPage(model);

  it("shows hostile memory as text only, in every section", () => {
    // Our two elements are the only script elements; no other element is made from memory.
    expect(html.match(/<script\b[^>]*>/g)).toEqual([
      '<script src="app.js" defer>',
      '<script type="application/json" id="data">',
    ]);
    expect(html).not.toMatch(/<img\b/i);
    expect(html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i);
    expect(html).not.toContain("<!--");
    expect(html).toContain("&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;");
    // MEMORY.md's bold survives, its markup does not.
    expect(html).toContain("<strong>&lt;img src=x");
  });

  it("names no other origin in any src or href, and carries its policy", () => {
    const refs = [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/g)].map((m) => m[1]);
    expect(refs).toEqual(["style.css", "app.js"]);
    expect(html).toContain(
      `content="default-src &#39;none&#39;; script-src &#39;self&#39;; style-src &#39;self&#39;;`,
    );
    for (const [name, text] of dashboardFiles(model)) {
      expect(text, name).not.toMatch(/https?:\/\/|\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
    }
  });

  it("gives budgets as numbers beside their use, dates beside decisions, workers by id", () => {
    expect(formatBudget({ label: "st files", used: 30, max: 397, unit: "files" })).toBe(
      "30 / 397 files",
    );
    expect(html).toContain("30 / 397 files");
    expect(html).toContain("900 B / 4 MiB");
    expect(html).toMatch(/<time datetime="2025-01-01T00:00:00.000Z">2025-01-01 00:00 UTC<\/time>/);
    expect(html).toContain("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;</code>");
  });

  it("sums each sync target's queue: depth, success rate, the latest error", () => {
    expect(model.sync).toEqual([
      expect.objectContaining({
        queue_depth: 2,
        synced: 1,
        failed: 1,
        success_rate: 0.5,
        last_error: HOSTILE[0],
      }),
    ]);
  });

  it("draws its charts as SVG: a bar per budget, a point per version", () => {
    expect(budgetChart(model.budgets).match(/<rect [^>]*class="bar/g)).toHaveLength(8);
    expect(engramsChart(model.versions).match(/<circle /g)).toHaveLength(2);
    expect(html.match(/<svg /g)).toHaveLength(3);
  });

  it("is the same page for the same input", () => {
    expect(renderDashboardPage(buildDashboardModel(hostileInput()))).toBe(html);
  });
});

describe("the pull-request body", () => {
  const one = engram({ version: "20250101-000000Z", facts: ["The API is v2"] });
  const p = buildProposal({
    base: { branch: "main", sha: "0".repeat(40), catalog: catalogOf([], 3), focusBytes: null },
    head: { branch: "engram/main", catalog: catalogOf([one], 4), focusBytes: null },
    added: mapOf([one]),
    memory: {
      st_max_files: 64,
      st_max_total_bytes: 1e6,
      lt_max_files: 64,
      lt_max_total_bytes: 1e6,
      memory_md_max_bytes: 8192,
    },
    rejectedSkipped: 0,
  });
  const url = "https://github.com/o/r/actions/runs/123#artifacts";

  it("links the dashboard when the action uploads it, and only to http(s)", () => {
    expect(renderPrBody(p, { dashboardUrl: url })).toContain(
      `[the engram-dashboard artifact](${url})`,
    );
    expect(renderPrBody(p)).not.toContain("engram-dashboard");
    expect(renderPrBody(p, { dashboardUrl: "javascript:alert(1)" })).not.toContain(
      "engram-dashboard",
    );
  });
});
