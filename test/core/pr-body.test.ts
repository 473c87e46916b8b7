import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inlineText, linkTarget } from "../../src/core/rendering/markdown.js";
import {
  GITHUB_BODY_MAX_CHARS,
  type Proposal,
  parsePrMarker,
  renderPrBody,
  renderPrTitle,
} from "../../src/core/rendering/pr-body.js";
import {
  renderStepSummary,
  stepSummaryFromProposal,
} from "../../src/core/rendering/step-summary.js";

import { FILE_URL, HASH_A, HASH_B, proposal, row } from "./pr-body-fixtures.js";

// ---- reading a rendered body back ------------------------------------------------------------

/** Cell delimiters as GFM's table scanner sees them: a backslash escapes the next character. */
function delimiters(line: string): number {
  let n = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\\") i++;
    else if (line[i] === "|") n++;
  }
  return n;
}

interface Table {
  heading: string;
  columns: number;
  rows: string[];
}

/** Every table: its heading, the column count from its header, and its body lines. */
function tables(body: string): Table[] {
  const out: Table[] = [];
  const lines = body.split("\n");
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("### ")) heading = line.slice(4);
    if (!line.startsWith("| ") || !lines[i + 1]?.startsWith("| --- ")) continue;
    const table: Table = { heading, columns: delimiters(line) - 1, rows: [] };
    i += 2;
    while (i < lines.length && lines[i] !== "") table.rows.push(lines[i++] as string);
    out.push(table);
  }
  return out;
}

function section(body: string, name: string): Table | undefined {
  return tables(body).find((t) => t.heading.startsWith(name));
}

const NOTICE = /_… (\d[\d,]*) more (promoted|new|evicted) engrams? not shown/g;

function omittedIn(body: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of body.matchAll(NOTICE)) out[m[2] as string] = Number(m[1]?.replace(/,/g, ""));
  return out;
}

function shownRows(body: string): number {
  return ["Promoted", "New engrams", "Evicted"].reduce(
    (n, name) => n + (section(body, name)?.rows.length ?? 0),
    0,
  );
}

function totalRows(p: Proposal): number {
  return p.written.length + p.promoted.length + p.evicted.length;
}

// ---- hostile input ---------------------------------------------------------------------------

const NASTY = [
  "|",
  "\\|",
  "\\",
  "\n",
  "\r\n",
  "\r",
  "\u2028",
  "`",
  "```",
  "<!--",
  "-->",
  "--!>",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "[x](javascript:alert(1))",
  "![i](http://evil/)",
  "@octocat",
  "@org/team",
  "**",
  "_",
  "&lt;",
  "\u202e",
  "\u0000",
  "# heading",
  "| --- |",
  "😀",
  "\ud800",
];

const hostile = fc
  .array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: "binary", maxLength: 30 })), {
    maxLength: 8,
  })
  .map((parts) => parts.join(""));

const longHostile = fc.oneof(
  hostile,
  fc.tuple(hostile, fc.integer({ min: 1, max: 9000 })).map(([s, n]) => s.repeat(Math.min(n, 2000))),
);

const scope = fc.constantFrom("st" as const, "lt" as const);

const rowArb = fc.record({
  engram_id: hostile,
  scope,
  path: hostile,
  topics: fc.array(hostile, { maxLength: 8 }),
  first_fact: longHostile,
  event_count: fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: undefined }),
});

const usage = fc.record({
  files: fc.integer({ min: 0, max: 1e6 }),
  bytes: fc.integer({ min: 0, max: 1e12 }),
});
const tiers = fc.record({ st: usage, lt: usage });

function proposalArb(maxRows: number): fc.Arbitrary<Proposal> {
  return fc.record({
    base: fc.record({
      branch: hostile,
      sha: hostile,
      catalog_version: fc.nat(),
      catalog_hash: hostile,
    }),
    head: fc.record({ branch: hostile, catalog_version: fc.nat(), catalog_hash: hostile }),
    compacted_events: fc.nat(),
    source_window: fc.option(fc.record({ start_ts: hostile, end_ts: hostile }), { nil: null }),
    written: fc.array(rowArb, { maxLength: maxRows }),
    promoted: fc.array(
      fc.tuple(rowArb, hostile).map(([r, reason]) => ({ ...r, reason })),
      { maxLength: maxRows },
    ),
    evicted: fc.array(fc.record({ engram_id: hostile, scope, path: hostile }), {
      maxLength: maxRows,
    }),
    tiers_before: tiers,
    tiers_after: tiers,
    budgets: fc.record({
      st_max_files: fc.nat(),
      st_max_total_bytes: fc.nat(),
      lt_max_files: fc.nat(),
      lt_max_total_bytes: fc.nat(),
    }),
    focus: fc.option(
      fc.record({ bytes_before: fc.nat(), bytes_after: fc.nat(), max_bytes: fc.nat() }),
      { nil: null },
    ),
    rejected_skipped: fc.option(fc.nat(), { nil: undefined }),
  });
}

const fileUrlArb = fc.option(
  fc.constantFrom<(path: string) => string>(
    FILE_URL,
    (path) => `javascript:alert(${JSON.stringify(path)})`,
    (path) => `https://x/${path}) <b>|\n`,
    (path) => path,
  ),
  { nil: undefined },
);

/** The body has no HTML but the marker and the fold, and nothing can close the marker early. */
function expectInert(body: string): void {
  const lines = body.split("\n");
  const markerLines = lines.filter((l) => l.includes("<!--"));
  expect(markerLines.length).toBeLessThanOrEqual(1);
  if (markerLines.length === 1) {
    expect(lines[0]).toBe(markerLines[0]);
    expect(lines[0]?.indexOf("-->")).toBe((lines[0]?.length ?? 0) - 3);
    expect(lines[0]).not.toMatch(/--!>/);
  }
  // Our own HTML (the fold) and the chart's fixed `-->` axis are the only angle brackets.
  const rest = lines
    .slice(markerLines.length)
    .join("\n")
    .replace(/<\/?(?:details|summary)>/g, "")
    .replace(/```mermaid\nxychart-beta\n[^`]*```/, "");
  expect(rest).not.toMatch(/[<>]/);
  // A link can only come from fileUrl, and its target cannot break out of the parentheses.
  // (Brackets inside a code span are literal: code spans outrank links.)
  const outsideCode = rest.replace(/`[^`\n]*`/g, "");
  for (const m of outsideCode.matchAll(/(^|[^\\])\]\(([^)]*)\)/g)) {
    const target = m[2] as string;
    expect(target).toMatch(/^[^\s()<>`|]+$/);
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) expect(target).toMatch(/^https?:\/\//);
  }
  // No mention survives in text: every @ is followed by a zero-width space (GitHub does not
  // look for mentions in code spans or link targets).
  const text = outsideCode.replace(/\]\([^)\s]*\)/g, "]");
  expect(text).not.toMatch(/@(?!\u200b)/);
}

function expectTablesIntact(body: string): void {
  for (const t of tables(body)) {
    for (const line of t.rows) {
      expect(line.startsWith("| ")).toBe(true);
      expect(delimiters(line)).toBe(t.columns + 1);
    }
  }
}

describe("renderPrBody", () => {
  it("explains the cycle: marker, summary, budgets, chart, one row per engram, evictions", () => {
    const p = proposal({ rejected_skipped: 2 });
    const body = renderPrBody(p, { fileUrl: FILE_URL });
    const lines = body.split("\n");
    expect(lines[0]).toMatch(/^<!-- engram-pr \{.*\} -->$/);
    expect(body).toContain("## Memory update: catalog v7 → v8");
    expect(body).toContain(
      "The Director compacted **12 events** received from `2025-01-01T00:00:00.000Z` to `2025-01-01T02:00:00.000Z` into **2 engrams** (1 short-term, 1 long-term).",
    );
    expect(body).toContain("| short-term (ST) | 10 → 11 of 64 (15.6% → 17.2%) |");
    expect(body).toContain("| MEMORY.md | | 1,000 → 1,200 of 8,192 (12.2% → 14.6%) |");
    // No budget is near its limit: no chart of bars of a few percent.
    expect(body).not.toContain("```mermaid");
    const promoted = section(body, "Promoted to long-term (1)");
    expect(promoted?.rows).toEqual([
      `| [e\\_${"0".repeat(31)}3](${FILE_URL(row(3).path)}) | ci, topic3 | fact number 3 | repeated in 3 engrams |`,
    ]);
    expect(section(body, "New engrams (2)")?.rows.map((r) => r.slice(0, 7))).toEqual([
      "| ST | ",
      "| LT | ",
    ]);
    expect(section(body, "Evicted over budget (1)")?.rows).toEqual([
      "| ST | `e_old` | `memory/st/20240101-000000Z/engram_e_old.json` |",
    ]);
    expect(body).toContain("_2 engrams from earlier pull requests closed without merging were");
    expect(body.endsWith("</details>\n")).toBe(true);
    expect(parsePrMarker(body)).toEqual({
      base_branch: "main",
      base_sha: p.base.sha,
      base_catalog_version: 7,
      base_catalog_hash: HASH_A,
      head_branch: "engram/main",
      head_catalog_version: 8,
      head_catalog_hash: HASH_B,
    });
    expect(renderPrTitle(p)).toBe("memory: 1 promoted, 1 evicted");
  });

  it("titles a cycle without compaction by what moved", () => {
    const p = proposal({ compacted_events: 0, written: [] });
    expect(renderPrTitle(p)).toBe("memory: 1 promoted, 1 evicted");
    expect(renderPrTitle({ ...p, promoted: [], evicted: [] })).toBe("memory: no new knowledge");
  });

  it("escapes hostile text: a fact cannot break its row, open HTML, link or mention", () => {
    const fact = "a | b\nc `code` <script>x</script> --> [l](javascript:x) @octocat \\| \u202eevil";
    const body = renderPrBody(proposal({ written: [row(1, { first_fact: fact })] }));
    const line = section(body, "New engrams")?.rows[0] as string;
    expect(line).toContain(
      "a \\| b c \\`code\\` &lt;script&gt;x&lt;/script&gt; --&gt; \\[l\\](javascript:x) @\u200boctocat \\\\\\| evil",
    );
    expectTablesIntact(body);
    expectInert(body);
  });

  it("a 10,000-engram proposal with 8,000-character facts stays under GitHub's limit", () => {
    const big = "x|<".repeat(2_667);
    const p = proposal({
      written: Array.from({ length: 10_000 }, (_, i) => row(i, { first_fact: big, topics: [big] })),
      evicted: Array.from({ length: 500 }, (_, i) => ({
        engram_id: `e_${i}`,
        scope: "st" as const,
        path: `memory/st/x/engram_e_${i}.json`,
      })),
    });
    const body = renderPrBody(p, { fileUrl: FILE_URL });
    expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_MAX_CHARS);
    const omitted = omittedIn(body);
    expect(omitted.evicted).toBe(500);
    expect(shownRows(body) + (omitted.new ?? 0) + (omitted.evicted ?? 0)).toBe(totalRows(p));
    expect(body).toContain(`[memory/catalog.json](${FILE_URL("memory/catalog.json")})`);
    // Cut where the next row would not fit: not much room is left.
    expect(body.length).toBeGreaterThan(GITHUB_BODY_MAX_CHARS - 2_000);
    expect(renderPrBody(p, { fileUrl: FILE_URL })).toBe(body);
  });

  it("is never longer than maxChars, whatever the input", () => {
    fc.assert(
      fc.property(
        proposalArb(12),
        fc.option(fc.integer({ min: -5, max: 70_000 }), { nil: undefined }),
        fileUrlArb,
        (p, maxChars, fileUrl) => {
          const body = renderPrBody(p, { maxChars, fileUrl });
          expect(body.length).toBeLessThanOrEqual(Math.max(0, maxChars ?? GITHUB_BODY_MAX_CHARS));
          expectTablesIntact(body);
          expectInert(body);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is deterministic: the same input gives the same bytes", () => {
    fc.assert(
      fc.property(proposalArb(8), fc.integer({ min: 500, max: 70_000 }), (p, maxChars) => {
        const copy = structuredClone(p);
        expect(renderPrBody(copy, { maxChars, fileUrl: FILE_URL })).toBe(
          renderPrBody(p, { maxChars, fileUrl: FILE_URL }),
        );
        expect(renderPrTitle(copy)).toBe(renderPrTitle(p));
      }),
      { numRuns: 100 },
    );
  });

  it("shows every row when they fit, and says how many were left out when not", () => {
    fc.assert(
      fc.property(proposalArb(30), fc.integer({ min: 6_000, max: 40_000 }), (p, maxChars) => {
        const full = renderPrBody(p, { maxChars: 10_000_000 });
        const body = renderPrBody(p, { maxChars });
        const omitted = omittedIn(body);
        const left = Object.values(omitted).reduce((a, b) => a + b, 0);
        expect(shownRows(body) + left).toBe(totalRows(p));
        if (full.length <= maxChars) {
          expect(body).toBe(full);
          expect(left).toBe(0);
          expect(shownRows(body)).toBe(totalRows(p));
        } else {
          expect(left).toBeGreaterThan(0);
          // Rows go from the end: a section is cut only when every later one shows nothing.
          const order = ["promoted", "new", "evicted"];
          const firstCut = order.findIndex((k) => (omitted[k] ?? 0) > 0);
          for (const later of order.slice(firstCut + 1)) {
            const name = { promoted: "Promoted", new: "New engrams", evicted: "Evicted" }[later];
            expect(section(body, name as string)).toBeUndefined();
          }
        }
        expect(parsePrMarker(body)).toBeDefined();
      }),
      { numRuns: 100 },
    );
  });

  it("the marker survives hostile branch names and hashes, and reads back exactly", () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, fc.nat(), (branch, sha, hash, version) => {
        const p = proposal({
          base: { branch, sha, catalog_hash: hash, catalog_version: version },
          head: { branch: `${branch}-->`, catalog_version: version + 1, catalog_hash: hash },
        });
        const body = renderPrBody(p);
        expectInert(body);
        const marker = parsePrMarker(body);
        const clip = (s: string, n: number) => Array.from(s).slice(0, n).join("");
        expect(marker?.base_branch).toBe(clip(branch, 255));
        expect(marker?.base_catalog_hash).toBe(clip(hash, 80));
        expect(marker?.base_catalog_version).toBe(version);
        expect(marker?.head_catalog_version).toBe(version + 1);
      }),
      { numRuns: 200 },
    );
  });

  it("parsePrMarker refuses bodies without a well-formed marker", () => {
    expect(parsePrMarker("")).toBeUndefined();
    expect(parsePrMarker("<!-- engram-pr {nope} -->")).toBeUndefined();
    expect(
      parsePrMarker(
        '<!-- engram-pr {"base_branch":"m","base_sha":"s","base_catalog_version":-1,"base_catalog_hash":"h","head_branch":"e","head_catalog_version":1,"head_catalog_hash":"h"} -->',
      ),
    ).toBeUndefined();
  });
});

describe("Markdown helpers", () => {
  it("inlineText never yields a line break, a raw pipe, < or >", () => {
    fc.assert(
      fc.property(hostile, fc.integer({ min: 1, max: 200 }), (text, max) => {
        const out = inlineText(text, max);
        expect(out).not.toMatch(/[\n\r<>\u2028\u2029]/);
        expect(delimiters(out)).toBe(0);
        expect(out.length).toBeLessThanOrEqual(5 * max + 2);
      }),
    );
  });

  it("linkTarget keeps http(s) and relative URLs and encodes what could end them", () => {
    expect(linkTarget("https://github.com/o/r/blob/main/a b(1).json")).toBe(
      "https://github.com/o/r/blob/main/a%20b%281%29.json",
    );
    expect(linkTarget("memory/catalog.json")).toBe("memory/catalog.json");
    expect(linkTarget("javascript:alert(1)")).toBeUndefined();
    expect(linkTarget("data:text/html,x")).toBeUndefined();
    expect(linkTarget("https://x/\u2028y")).toBe("https://x/%E2%80%A8y");
  });
});

describe("renderStepSummary", () => {
  it("is a short budget table with the catalog and the PR", () => {
    const p = proposal();
    const text = renderStepSummary(
      stepSummaryFromProposal(p, { number: 42, url: "https://github.com/o/r/pull/42" }),
    );
    expect(text).toContain(`### engram Director: catalog v8 \`${HASH_B}\``);
    expect(text).toContain("12 events compacted into 2 engrams; 1 promoted, 1 evicted.");
    expect(text).toContain("Engram pull request: [#42](https://github.com/o/r/pull/42)");
    expect(text).toContain("| long-term (LT) | 2 → 4 of 256 (0.8% → 1.6%) |");
    expect(renderStepSummary({ ...stepSummaryFromProposal(p), pr: null })).toContain(
      "No engram pull request",
    );
  });

  it("stays small whatever the numbers and strings", () => {
    fc.assert(
      fc.property(proposalArb(3), hostile, (p, url) => {
        const text = renderStepSummary(stepSummaryFromProposal(p, { number: 1, url }));
        expect(text.length).toBeLessThan(16_384);
        expect(text).not.toContain("<");
      }),
      { numRuns: 100 },
    );
  });
});
