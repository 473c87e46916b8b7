/**
 * validate_and_merge against what engrams already hold, through the bins: a session fact that
 * restates an engram's claim raises that learning's evidence (recorded in
 * memory/knowledge/evidence.json) instead of adding a copy to memory/knowledge.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { learningId } from "../../src/core/graph/learnings.js";
import type { SessionStepReport } from "../../src/director/consolidate.js";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { binIn, endedSession } from "../support/sessions.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

const CLAIM = "Deploys go out on Tuesdays";

/** What `director run --json` says of one session. */
type Report = SessionStepReport;

/** One session writing the claim as a fact with confidence 0.9, ended, then `director run`. */
async function restate(repo: TempRepo, text: string): Promise<Report[]> {
  const id = await endedSession(repo, [["fact", text]]);
  const run = jsonOf<{ sessions: Report[] }>(await binIn(director, repo, ["run", "--json"]));
  expect(run.sessions.map((s) => s.session_id)).toEqual([id]);
  return run.sessions;
}

const knowledgeFiles = (repo: TempRepo) => {
  const dir = join(repo.dir, "memory", "knowledge");
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

const evidenceOf = (repo: TempRepo) =>
  JSON.parse(readFileSync(join(repo.dir, "memory", "knowledge", "evidence.json"), "utf8"));

describe("a session restating what an engram holds", () => {
  it("raises the learning's evidence, session after session, never adds a copy", async () => {
    const repo = temps.repo();
    // Every event compacted at once: the lesson becomes an engram in the first run.
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    await binIn(director, repo, ["init"]);
    await binIn(worker, repo, ["emit", "--kind", "lesson", "--text", CLAIM, "--topic", "flow"]);
    await binIn(director, repo, ["run", "--force"]);
    const engrams = readFileSync(join(repo.dir, "memory", "catalog.json"), "utf8");
    expect(JSON.parse(engrams).entries).toHaveLength(1);
    const id = learningId(CLAIM);

    const [first] = (await restate(repo, "deploys  go out on TUESDAYS")) as [Report];
    expect(first.applied.fact).toBe(0);
    expect(first.merged).toBe(1);
    // The engram's evidence (1) and this session's.
    expect(first.merged_items).toEqual([{ seq: 1, kind: "fact", into: id, evidence: 2 }]);
    expect(knowledgeFiles(repo)).toEqual(["evidence.json"]);
    expect(evidenceOf(repo)).toEqual({
      kind: "evidence",
      records: [{ id, evidence: 1, version: first.to_version }],
    });
    await binIn(director, repo, ["verify"]);

    const [second] = (await restate(repo, CLAIM)) as [Report];
    expect(second.merged_items).toEqual([{ seq: 1, kind: "fact", into: id, evidence: 3 }]);
    expect(knowledgeFiles(repo)).toEqual(["evidence.json"]);
    expect(second.from_version).toBe(first.to_version);
    expect(evidenceOf(repo).records).toEqual([{ id, evidence: 2, version: second.to_version }]);
    await binIn(director, repo, ["verify"]);

    // History counts no new facts; the evidence file shows as changed between the versions.
    const history = jsonOf<{ versions: { version: number; counts: { facts: number } }[] }>(
      await binIn(director, repo, ["history", "--json"]),
    );
    expect(history.versions.slice(0, 2).map((v) => [v.version, v.counts.facts])).toEqual([
      [second.to_version, 0],
      [first.to_version, 0],
    ]);
    const diff = jsonOf<{ facts: { added: string[] }; files: { changed: string[] } }>(
      await binIn(director, repo, [
        "diff",
        `${first.to_version}`,
        `${second.to_version}`,
        "--json",
      ]),
    );
    expect(diff.facts.added).toEqual([]);
    expect(diff.files.changed).toEqual(["memory/knowledge/evidence.json"]);

    // The learning lists its whole evidence: its engram's and the two sessions'.
    const learnings = jsonOf<{ learnings: { id: string; evidence: number }[] }>(
      await binIn(worker, repo, ["learnings", "--json"]),
    );
    expect(learnings.learnings.filter((l) => l.id === id).map((l) => l.evidence)).toEqual([3]);
  });
});
