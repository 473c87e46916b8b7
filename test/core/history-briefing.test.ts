/** The one "says something" predicate and where each imported decision goes (issue 41). */
import { describe, expect, it } from "vitest";
import { hasContent } from "../../src/core/history/content.js";
import { heldProposals, parseProposal, proposalText } from "../../src/core/history/proposals.js";
import {
  decisionRoutes,
  routeOfConfidence,
  subjectTerms,
} from "../../src/core/history/standing.js";
import { notesOfEngram } from "../../src/core/recall/notes.js";
import { engram } from "./focus-fixtures.js";

const YEAR = 365.25 * 24 * 3600;

describe("hasContent", () => {
  it("refuses asides, merges, badges, e-mail and one-word lines", () => {
    for (const text of [
      "Never mind.",
      "Commit: Merge branch 'topic'",
      "Merge pull request #12 from a/b",
      "switch badges from badgen.net to shields.io",
      "change my contributor email to tag with expressjs",
      "Add jane.doe@example.com to the list",
      "fix: typo",
      "Update",
    ]) {
      expect(hasContent(text), text).toBe(false);
    }
    for (const text of [
      "adopt Node@18 as the minimum supported version",
      "Change query parser setting default to 'simple'",
      "Use ESM",
      "use node:buffer instead of safe-buffer@5.2.1",
      'Lesson: Reverted "add etag option"',
    ]) {
      expect(hasContent(text), text).toBe(true);
    }
  });
});

describe("decisionRoutes", () => {
  const at = (years: number) => Math.round(1_700_000_000 + years * YEAR);
  it("proposes below the line, files superseded, reverted and old touched decisions apart", () => {
    const routes = decisionRoutes(
      [
        {
          sha: "a1",
          committedAt: at(4.5),
          subject: "Deprecate res.sendfile",
          decision: { title: "Deprecate res.sendfile" },
        },
        {
          sha: "a2",
          committedAt: at(0.1),
          subject: "Use pathval module",
          decision: { title: "Use pathval module", rationale: "one less copy of the path walker" },
        },
        {
          sha: "a2b",
          committedAt: at(4),
          subject: "Use crc module",
          decision: { title: "Use crc module", rationale: "closes #12" },
        },
        {
          sha: "a3",
          committedAt: at(1),
          subject: "Never mind.",
          decision: { title: "Never mind." },
        },
        { sha: "a4", committedAt: at(8), subject: "Remove res.sendfile" },
        {
          sha: "a5",
          committedAt: at(9),
          subject: "Default the cache to off",
          decision: { title: "Default the cache to off", confidence: 0.4 },
        },
        {
          sha: "a6",
          committedAt: at(9.1),
          subject: "Drop support for Node.js below 4",
          decision: { title: "Drop support for Node.js below 4" },
        },
        {
          sha: "a7",
          committedAt: at(9.2),
          subject: "Pin the linter",
          decision: { title: "Pin the linter" },
        },
        {
          sha: "a8",
          committedAt: at(9.3),
          subject: 'Revert "Pin the linter"',
          lesson: 'Reverted "Pin the linter": broke CI',
        },
        {
          sha: "a9",
          committedAt: at(9.4),
          subject: "Require Node 18",
          decision: { title: "Require Node 18" },
          supersedes: "a6",
        },
      ],
      0.6,
    );
    expect(routes).toEqual([
      "earlier", // old, and res.sendfile was touched later
      "earlier", // twice as old as the line
      "memory", // old, nothing later names the crc module
      "none",
      undefined,
      "proposal",
      "earlier", // superseded
      "earlier", // reverted
      undefined,
      "memory",
    ]);
  });

  it("reads the classifier's confidence, 1 when it states none", () => {
    expect(routeOfConfidence(undefined, 0.6)).toBe("memory");
    expect(routeOfConfidence(0.59, 0.6)).toBe("proposal");
    expect(routeOfConfidence(0.59, 0.5)).toBe("memory");
    expect(subjectTerms("deprecate res.json(obj, status) in package.json")).toEqual(["res.json"]);
  });
});

describe("proposals in memory", () => {
  it("round-trip through their note text and are listed until decided", () => {
    const p = {
      sha: "0123456789abcdef",
      confidence: 0.35,
      title: "Use pnpm",
      rationale: "faster installs",
    };
    const text = `Question: ${proposalText(p)}`;
    expect(parseProposal(text)).toEqual({ ...p, sha: "0123456789ab" });
    const held = engram({ facts: [text], tentative: [text], senders: ["git-history"] });
    expect(heldProposals([held]).map((h) => h.id)).toEqual(["0123456789ab"]);
    const decided = engram({
      decisions: [{ title: "Use pnpm", rationale: "" }],
      senders: ["git-history"],
    });
    expect(heldProposals([held, decided])).toEqual([]);
  });
});

describe("recall of imported facts", () => {
  it("does not index a recorded commit that says nothing", () => {
    const e = engram({
      facts: ["Commit: Merge branch 'x'", "Lesson: retry the merge with jitter"],
    });
    expect(notesOfEngram(e).map((n) => n.text)).toEqual(["retry the merge with jitter"]);
  });
});
