/**
 * `worker recall` returns a promoted lesson once (the LT engram), and the ST engrams it
 * superseded only with `--include-superseded`, through the built bins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

interface Hit {
  engram_id: string;
  scope: "st" | "lt";
  superseded_by?: string[];
}

describe("worker recall of a promoted lesson", () => {
  it("returns it once; --include-superseded adds the ST engrams it carries forward", async () => {
    const repo = dirs.repo("engram-recall-superseded-");
    jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\npromote_repeat_min = 3\n");
    const lesson = "Cache the npm folder between CI jobs";
    // The same lesson in three cycles: one ST engram states it, the next two raise its evidence
    // (dedup before create), then one LT engram supersedes them.
    // All three cycles in one second (one batch): each still sees what the ones before wrote.
    const env = { SOURCE_DATE_EPOCH: "1800000000" };
    for (let i = 0; i < 3; i++) {
      const args = ["emit", "--kind", "lesson", "--text", lesson, "--topic", "ci"];
      jsonOf(await worker([...args, "--worker", `w${i}`, "--json"], { cwd: repo.dir, env }));
      jsonOf(await director(["run", "--force", "--json"], { cwd: repo.dir, env }));
    }
    const query = ["recall", "cache npm folder", "--no-signal", "--json"];
    const once = jsonOf<Hit[]>(await worker(query, { cwd: repo.dir }));
    expect(once.map((h) => h.scope)).toEqual(["lt"]);

    const all = jsonOf<Hit[]>(await worker([...query, "--include-superseded"], { cwd: repo.dir }));
    expect(all).toHaveLength(2);
    const lt = all.find((h) => h.scope === "lt") as Hit;
    expect(lt.engram_id).toBe(once[0]?.engram_id);
    for (const st of all.filter((h) => h.scope === "st")) {
      expect(st.superseded_by).toEqual([lt.engram_id]);
    }
  });
});
