/**
 * A history import read as a newcomer reads it, through the bins: `director ingest --from-git
 * main` then `director run` on every labelled real history (the held-out ones too, their
 * failures saying counts only) written as a real repository, and
 * MEMORY.md checked as a briefing (no contentless item, the newest decisions, areas and
 * lessons beside them); and an uncertain decision proposed, then confirmed with one command.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import { hasContent, reasonOf } from "../../src/core/history/content.js";
import { director, GIT_IDENTITY, jsonOf, succeeded } from "../support/bins.js";
import {
  CORPUS_HISTORIES,
  importedDecisions,
  loadCorpus,
  writeCorpusRepo,
} from "../support/history-corpus.js";
import { importWithProposal } from "../support/history-proposal.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const ENV = { ...GIT_IDENTITY, SOURCE_DATE_EPOCH: "1795000000", GIT_CONFIG_GLOBAL: "/dev/null" };

/** The bullets of each section of MEMORY.md, by heading. */
function sections(md: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let heading = "";
  for (const line of md.split("\n")) {
    if (line.startsWith("## ")) {
      heading = line.slice(3);
      out.set(heading, []);
    } else if (line.startsWith("- ") && heading !== "") out.get(heading)?.push(line);
  }
  return out;
}

/** A bullet's text without its engram link. */
function itemText(bullet: string): string {
  return bullet.replace(/^- /, "").replace(/ \(\[e_[0-9a-f]+\]\([^)]*\)\)$/, "");
}

describe("MEMORY.md after an import is a briefing (real histories, through the bins)", () => {
  // Every labelled history; a held-out one's failures say counts only, never its items.
  for (const name of CORPUS_HISTORIES) {
    it(`${name}: no contentless item, the newest decisions first, areas beside them`, async () => {
      const corpus = loadCorpus(name);
      const shown = (text: string) => (corpus.held_out ? "(a held-out history: not shown)" : text);
      const repo = dirs.repo(`engram-briefing-${name}-`);
      const written = writeCorpusRepo(repo.dir, corpus);
      succeeded(await director(["init"], { cwd: repo.dir, env: ENV }));
      succeeded(await director(["ingest", "--from-git", "main"], { cwd: repo.dir, env: ENV }));
      succeeded(await director(["run"], { cwd: repo.dir, env: ENV }));
      const md = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
      const bySection = sections(md);
      const all = [...bySection.values()].flat();
      // No item without content: no aside, merge, badge or e-mail line.
      const empty = all.filter((b) => !hasContent(itemText(b).replace(/\*\*/g, "")));
      expect(empty.length, shown(`${empty.join("\n")}\n\n${md}`)).toBe(0);
      expect(/^- .*\bMerge (branch|pull request)\b/im.test(md), shown(md)).toBe(false);

      // The newest decision the import found (and keeps in force) opens the Decisions section.
      const decisions = bySection.get("Decisions") ?? [];
      const imported = importedDecisions(corpus);
      // A decision below the line is proposed, not remembered: the newest one at the line.
      const remembered = (sha: string) => (imported.get(sha)?.confidence ?? 1) >= DECISION_LINE;
      // At least four shown, or every one the import remembers where it found fewer (it
      // finds three in excalidraw's 200 commits).
      const found = [...imported.keys()].filter(remembered).length;
      expect(decisions.length, shown(md)).toBeGreaterThanOrEqual(Math.min(4, found));
      expect(found, shown(md)).toBeGreaterThan(0);
      const newest = [...written]
        .reverse()
        .find(
          (w) =>
            imported.has(w.commit.sha) &&
            remembered(w.commit.sha) &&
            hasContent(imported.get(w.commit.sha)?.title ?? ""),
        );
      const title = imported.get(newest?.commit.sha ?? "")?.title ?? "";
      expect(
        decisions
          .slice(0, 3)
          .some((d) => d.toLowerCase().includes(title.slice(0, 30).toLowerCase())),
        shown(`${title}\n${decisions.slice(0, 3).join("\n")}`),
      ).toBe(true);

      // Areas beside the decisions; decisions keep to their share of the view.
      expect(bySection.get("Areas")?.length ?? 0, shown(md)).toBeGreaterThan(0);
      expect(decisions.length).toBeLessThanOrEqual(30);

      // The share of decisions shown with a reason (reported; a floor the corpus allows).
      const withReason = decisions.filter((d) => /^\*\*.+?\*\*: /.test(itemText(d))).length;
      console.log(
        `${name}: ${all.length} items, ${decisions.length} decisions (${withReason} with a reason, ${(withReason / decisions.length).toFixed(2)}), ${bySection.get("Recent")?.length ?? 0} lessons/conventions, ${bySection.get("Areas")?.length ?? 0} areas`,
      );
      // Held to it where the rules were drawn: a held-out history's squashed titles may give
      // no reason at all (uptime-kuma's four decisions shown carry none).
      if (!corpus.held_out) expect(withReason).toBeGreaterThan(0);
    });
  }
});

describe("propose -> confirm of an uncertain imported decision, through the bins", () => {
  it("a decision below the line is proposed, not in MEMORY.md; one command confirms it; the next run remembers it", async () => {
    const repo = dirs.repo("engram-confirm-");
    const sha = await importWithProposal(repo, ENV);
    let md = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
    expect(md).toContain("**Use zod for every schema");
    // (The area's latest subjects may name the commit; no decision nor item says it.)
    expect(sections(md).get("Decisions")?.join("\n")).not.toContain("lockfile format");
    expect(md).not.toContain("Proposed decision");

    const listed = jsonOf<{ proposals: { id: string; title: string; confidence: number }[] }>(
      await director(["confirm", "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(listed.proposals.map((p) => [p.title, p.confidence])).toEqual([
      ["Switch the lockfile format to v3 by default", 0.3],
    ]);
    const id = listed.proposals[0]?.id as string;
    expect(sha.startsWith(id)).toBe(true);

    // An id that names nothing is refused with the open ones named.
    const bad = await director(["confirm", "abcdef0"], { cwd: repo.dir, env: ENV });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(id);

    const confirmed = jsonOf<{ confirmed: { id: string }[]; accepted: number }>(
      await director(["confirm", id.slice(0, 8), "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(confirmed.confirmed.map((c) => c.id)).toEqual([id]);
    expect(confirmed.accepted).toBe(1);
    succeeded(await director(["run"], { cwd: repo.dir, env: ENV }));
    md = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
    const decisions = sections(md).get("Decisions") ?? [];
    expect(decisions.join("\n"), md).toContain("**Switch the lockfile format to v3 by default**");
    // Decided: no longer open.
    const after = jsonOf<{ proposals: unknown[] }>(
      await director(["confirm", "--json"], { cwd: repo.dir, env: ENV }),
    );
    expect(after.proposals).toEqual([]);
  });
});

describe("reasonOf", () => {
  it("drops bare references and restatements of the title", () => {
    expect(reasonOf("closes #3236")).toBeUndefined();
    expect(reasonOf("PR-URL: https://github.com/x/y/pull/1")).toBeUndefined();
    expect(
      reasonOf("* docs: replace 'dummy' with 'placeholder'", "replace dummy with placeholder"),
    ).toBeUndefined();
    expect(reasonOf("closes #1 because the old one leaked", "use X")).toBe(
      "because the old one leaked",
    );
  });
});
