import { describe, expect, it } from "vitest";
import { renderPrBody } from "../../src/core/rendering/pr-body.js";
import { proposal } from "./pr-body-fixtures.js";

describe("the budgets in the pull-request body", () => {
  it("charts only the budgets near their limit, MEMORY.md's bytes and items among them", () => {
    const body = renderPrBody(
      proposal({
        tiers_after: { st: { files: 55, bytes: 21_000 }, lt: { files: 4, bytes: 5_000 } },
        focus: {
          bytes_before: 6_000,
          bytes_after: 7_900,
          max_bytes: 8_192,
          items_before: 40,
          items_after: 44,
          max_items: 60,
        },
      }),
    );
    expect(body).toContain(
      "| MEMORY.md | 40 → 44 of 60 (66.7% → 73.3%) items | 6,000 → 7,900 of 8,192 (73.2% → 96.4%) |",
    );
    expect(body).toContain(
      [
        "```mermaid",
        "xychart-beta",
        '  title "Budgets near their limit, % used"',
        '  x-axis ["ST files before", "ST files after", "MEMORY.md bytes before", "MEMORY.md bytes after"]',
        '  y-axis "% of budget" 0 --> 100',
        "  bar [16, 86, 73, 96]",
        "```",
      ].join("\n"),
    );
    // The chart is bookkeeping: inside the fold.
    expect(body.indexOf("```mermaid")).toBeGreaterThan(body.indexOf("<details>"));
  });
});
