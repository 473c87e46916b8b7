/**
 * Each note's own confidence and outcome, through the built bins (issue 36): two decisions
 * and a lesson compacted into one engram, then promoted, each keep what their note stated,
 * in the engram files, `worker recall --json` and `worker learnings --json`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };
let repo: TempRepo;

const SURE = "Keep the retry budget at three attempts";
const UNSURE = "Ship the new parser behind a feature flag";
const LESSON = "The staging webhook retries twice before giving up";

interface Stated {
  text: string;
  kind?: string;
  scope?: string;
  confidence?: number | null;
  outcome?: string;
}

beforeAll(async () => {
  assertBuilt();
  repo = dirs.repo("engram-item-stated-");
  jsonOf(await director(["init", "--json"], { cwd: repo.dir, env: ENV }));
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "init"]);
  const emit = async (args: string[]) =>
    jsonOf(
      await worker(["emit", ...args, "--topic", "retries", "--json"], { cwd: repo.dir, env: ENV }),
    );
  await emit(["--kind", "decision", "--text", SURE, "--confidence", "0.9", "--outcome", "success"]);
  await emit([
    "--kind",
    "decision",
    "--text",
    UNSURE,
    "--confidence",
    "0.75",
    "--outcome",
    "failure",
  ]);
  await emit(["--kind", "lesson", "--text", LESSON, "--confidence", "0.8", "--outcome", "partial"]);
  jsonOf(await director(["run", "--flush", "--json"], { cwd: repo.dir, env: ENV }));
});

afterAll(() => dirs.cleanup());

function engrams(scope: string) {
  const catalog = JSON.parse(readFileSync(join(repo.dir, "memory/catalog.json"), "utf8")) as {
    entries: { scope: string; path: string }[];
  };
  return catalog.entries
    .filter((e) => e.scope === scope)
    .map(
      (e) =>
        JSON.parse(readFileSync(join(repo.dir, e.path), "utf8")) as {
          decisions: { title: string; confidence?: number }[];
          said_by?: Record<string, { confidence?: number; outcome?: string }>;
        },
    );
}

describe("each note's own confidence and outcome", () => {
  it("is in the ST engram and in the LT engram the decisions were promoted into", () => {
    const [st] = engrams("st");
    expect(st?.decisions.map((d) => [d.title, d.confidence])).toEqual([
      [SURE, 0.9],
      [UNSURE, 0.75],
    ]);
    expect(Object.values(st?.said_by ?? {}).map((s) => s.outcome)).toEqual(
      expect.arrayContaining(["success", "failure", "partial"]),
    );
    const [lt] = engrams("lt");
    expect(lt?.decisions.map((d) => [d.title, d.confidence])).toEqual([
      [SURE, 0.9],
      [UNSURE, 0.75],
    ]);
    expect(
      Object.values(lt?.said_by ?? {})
        .map((s) => s.outcome)
        .sort(),
    ).toEqual(["failure", "success"]);
  });

  it("is on each recall hit (a lesson's is one hit with its episode)", async () => {
    const hits = async (query: string) =>
      jsonOf<Stated[]>(
        await worker(["recall", query, "--json", "--no-signal"], { cwd: repo.dir, env: ENV }),
      ).filter((h) => query.split(" ").every((w) => h.text.includes(w)));
    expect((await hits("retry budget"))[0]).toMatchObject({
      text: SURE,
      scope: "lt",
      confidence: 0.9,
      outcome: "success",
    });
    expect((await hits("parser behind"))[0]).toMatchObject({
      text: UNSURE,
      scope: "lt",
      confidence: 0.75,
      outcome: "failure",
    });
    expect((await hits("staging webhook"))[0]).toMatchObject({
      text: LESSON,
      confidence: 0.8,
      outcome: "partial",
    });
  });

  it("is on each learning", async () => {
    const { learnings } = jsonOf<{ learnings: Stated[] }>(
      await worker(["learnings", "--json"], { cwd: repo.dir, env: ENV }),
    );
    const of = (text: string) => learnings.find((l) => l.text === text);
    expect(of(SURE)).toMatchObject({ confidence: 0.9, outcome: "success" });
    expect(of(UNSURE)).toMatchObject({ confidence: 0.75, outcome: "failure" });
    expect(of(LESSON)).toMatchObject({ confidence: 0.8, outcome: "partial" });
  });
});
