/**
 * Review in a minute (issue 37): a new decision that contradicts a current decision on main,
 * without saying it replaces it, is flagged in the pull request body's "Look at these first"
 * and reported by `director guard` (a warning: the reviewer says which holds). A decision
 * about something else in the same topic is not flagged. Real repositories, a bare origin.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { BRANCH, proposeRun, type RunJson, setup } from "../support/proposals.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const ON_MAIN = "Use Postgres advisory locks for the job queue";
const CONTRADICTS = "Use Redis locks for the job queue";
const OTHER = "Cap the job queue at 500 jobs";

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

async function decide(repo: TempRepo, text: string): Promise<void> {
  ok(
    await worker(
      ["emit", "--kind", "decision", "--text", text, "--rationale", "load test", "--topic", "jobs"],
      { cwd: repo.dir },
    ),
  );
}

interface Flag {
  kind: string;
  engram_id: string;
  reason: string;
  text: string;
  item_id?: string;
  contradicts?: { id: string; text: string };
}
interface GuardJson {
  ok: boolean;
  findings: { code: string; message: string }[];
  warnings: { code: string; message: string; path: string }[];
}

describe("a decision that contradicts memory", () => {
  it("is flagged in the pull request body and reported by the guard; one about something else is not", async () => {
    const { clone } = await setup(dirs);
    await decide(clone, ON_MAIN);
    ok(
      await director(["run", "--flush", "--json"], {
        cwd: clone.dir,
        env: { SOURCE_DATE_EPOCH: "1800000000" },
      }),
    );
    git(clone.dir, ["add", "-A"]);
    git(clone.dir, ["commit", "-qm", "engram: the day"]);
    git(clone.dir, ["push", "-q", "origin", "main"]);

    await decide(clone, CONTRADICTS);
    await decide(clone, OTHER);
    const run = jsonOf<RunJson & { proposal: { review: { flags: Flag[] } } }>(
      ok(await proposeRun(clone, [], 1_800_000_500)),
    );
    const flags = run.proposal.review.flags.filter((f) => f.kind === "contradiction");
    expect(flags.map((f) => f.text)).toEqual([CONTRADICTS]);
    const mainId = flags[0]?.contradicts?.id as string;
    expect(mainId).toMatch(/^e_[0-9a-f]{32}#d0$/);
    expect(flags[0]?.contradicts?.text).toBe(ON_MAIN);

    const body = run.proposal.would_open?.body ?? "";
    const lookFirst = body.slice(body.indexOf("### ⚠ Look at these first"));
    expect(lookFirst).toContain("### ⚠ Look at these first (1)");
    expect(lookFirst).toContain(`**contradiction** in`);
    expect(lookFirst).toContain(
      `“${CONTRADICTS}” — contradicts \`${mainId}\` on main, “${ON_MAIN}”: say which holds`,
    );
    expect(lookFirst).toContain(`\`worker emit --supersedes ${mainId}\``);
    expect(lookFirst.slice(0, lookFirst.indexOf("### Decisions"))).not.toContain(OTHER);
    expect(run.proposal.would_open?.title).toMatch(/\(⚠ 1\)$/);

    // The guard reports it on the pull request, without failing it.
    const guard = ok(
      await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`, "--json"], {
        cwd: clone.dir,
      }),
    );
    const report = jsonOf<GuardJson>(guard);
    expect(report.ok).toBe(true);
    const warned = report.warnings.filter((w) => w.code === "flagged-contradiction");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.message).toContain(`decision "${CONTRADICTS}" contradicts ${mainId} on main`);
    // On the engram the body flags it in (the long-term one carries the decision too).
    expect(warned[0]?.path).toMatch(
      new RegExp(`^memory/(st|lt)/[^/]+/engram_${flags[0]?.engram_id}\\.json$`),
    );
    const text = ok(
      await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`], {
        cwd: clone.dir,
      }),
    );
    expect(`${text.stdout}${text.stderr}`).toContain(
      `warning: ${warned[0]?.path}: decision "${CONTRADICTS}" contradicts ${mainId} on main`,
    );
  }, 240_000);

  it("flags a decision stated below promote_min_confidence in the body and the guard, as a warning", async () => {
    const { clone } = await setup(dirs);
    const unsure = "Move invoice PDFs to object storage";
    const sure = "Store money as integer cents";
    for (const [text, confidence] of [
      [unsure, "0.5"],
      [sure, "0.9"],
    ] as const) {
      ok(
        await worker(
          [
            "emit",
            "--kind",
            "decision",
            "--text",
            text,
            "--rationale",
            "size",
            "--confidence",
            confidence,
          ],
          { cwd: clone.dir },
        ),
      );
    }
    const run = jsonOf<RunJson & { proposal: { review: { flags: Flag[] } } }>(
      ok(await proposeRun(clone, [], 1_800_000_500)),
    );
    expect(run.proposal.review.flags.map((f) => [f.reason, f.text])).toEqual([
      ["low-confidence", unsure],
    ]);
    const body = run.proposal.would_open?.body ?? "";
    expect(body).toContain(`**confidence** in`);
    expect(body).toContain("stated at confidence 0.5, below promote\\_min\\_confidence 0.7");
    const report = jsonOf<GuardJson>(
      ok(
        await director(["guard", "--base", "main", "--head", `origin/${BRANCH}`, "--json"], {
          cwd: clone.dir,
        }),
      ),
    );
    expect(report.ok).toBe(true);
    expect(report.warnings.filter((w) => w.code === "flagged-confidence").length).toBe(1);
  }, 240_000);
});
