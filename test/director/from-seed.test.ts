/**
 * `director ingest --from-seed`: a pai-seed seed.json becomes memory through the normal
 * ingest path; the file is never written, a second import adds nothing, and a malformed seed
 * names the path and the field.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { learningId, learningsOf } from "../../src/core/graph/learnings.js";
import { ingestSeed } from "../../src/director/from-seed.js";
import { initRepository } from "../../src/director/init.js";
import { runCycle } from "../../src/director/run.js";
import type { Engram } from "../../src/schema/engram.js";
import { assertBuilt, describeResult, runDirector as director } from "../support/bins.js";
import { fakeSecrets } from "../support/fake-secrets.js";
import { filesContaining, readEngrams, snapshot } from "../support/memory.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const SEED = join(import.meta.dirname, "..", "fixtures", "pai-seed", "seed.json");
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());
beforeAll(() => assertBuilt());

async function freshRepo(): Promise<TempRepo> {
  const repo = dirs.repo("engram-from-seed-");
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  initRepository(await openContext({ repo: repo.dir }));
  return repo;
}

describe("director ingest --from-seed", () => {
  it("imports confirmed learnings and pending proposals, twice to the same memory, never writing the seed", async () => {
    const repo = await freshRepo();
    const ctx = await openContext({ repo: repo.dir });
    const before = readFileSync(SEED);

    const first = await ingestSeed(ctx, SEED);
    expect(first).toMatchObject({ learnings: 3, proposals: 1, skipped: 3, accepted: 4 });
    await runCycle(ctx, { force: true });
    const memory = snapshot(repo.dir, ["memory", "MEMORY.md"]);

    const second = await ingestSeed(ctx, SEED);
    expect(second).toMatchObject({ accepted: 0, duplicates: 4 });
    await runCycle(ctx, { force: true });
    expect(snapshot(repo.dir, ["memory", "MEMORY.md"])).toEqual(memory);
    expect(readFileSync(SEED).equals(before)).toBe(true);
    const verified = await director(["verify"], { cwd: repo.dir });
    expect(verified.code, describeResult(verified)).toBe(0);

    const engrams = readEngrams(repo.dir).map((e) => e.engram as Engram);
    const learnings = learningsOf(engrams);
    const byText = new Map(learnings.map((l) => [l.text, l]));
    expect(byText.get("Runs the unit tests before every commit")).toMatchObject({
      type: "pattern",
      origin: { source: "session_2026-03-02", confirmed_at: "2026-03-02T10:35:00.000Z" },
      topics: expect.arrayContaining(["testing", "workflow"]),
    });
    expect(
      byText.get("Reviews of src/engine/plan.ts go faster with a diagram first"),
    ).toMatchObject({ type: "insight", origin: { confirmed_at: "2026-03-11T08:00:00.000Z" } });
    expect(byText.get("Tends to skip the changelog when a release is rushed")?.type).toBe(
      "self_knowledge",
    );
    // A pending proposal is proposed like any note: where it came from, never confirmed.
    expect(byText.get("Keeps pull requests under four hundred lines")).toMatchObject({
      type: "pattern",
      origin: { source: "session_2026-03-12", confirmed_at: null },
    });
    // Unconfirmed learnings and decided proposals stay out.
    expect(byText.has("Prefers tabs over spaces")).toBe(false);
    expect(byText.has("Answers before reading the whole question")).toBe(false);
    const insight = engrams.find((e) => e.facts.some((f) => f.includes("diagram first")));
    expect(insight?.entities).toContain("file:src/engine/plan.ts");
    expect(
      insight?.origins?.[
        learningId("Reviews of src/engine/plan.ts go faster with a diagram first")
      ],
    ).toEqual({ source: "session_2026-03-10", confirmed_at: "2026-03-11T08:00:00.000Z" });
  });

  it("waits in the buffer like any events: a plain run keeps the newest window, --flush compacts it", async () => {
    const repo = dirs.repo("engram-from-seed-window-");
    // The default window (buffer_keep_recent_events) is larger than this seed's 4 events.
    repo.writeConfig("");
    initRepository(await openContext({ repo: repo.dir }));
    const ctx = await openContext({ repo: repo.dir });
    expect(await ingestSeed(ctx, SEED)).toMatchObject({ accepted: 4 });
    const plain = await runCycle(ctx, {});
    expect(plain.compacted_events).toBe(0);
    expect(readEngrams(repo.dir)).toHaveLength(0);
    const flushed = await runCycle(ctx, { flush: true });
    expect(flushed.compacted_events).toBe(4);
    expect(readEngrams(repo.dir).length).toBeGreaterThan(0);
  });

  it("redacts secrets in a seed like any ingest", async () => {
    const repo = await freshRepo();
    const ctx = await openContext({ repo: repo.dir });
    const secret = fakeSecrets(15).find((s) => s.kind === "github-pat");
    if (!secret) throw new Error("no github-pat fake");
    const seed = JSON.parse(readFileSync(SEED, "utf8"));
    seed.learned.patterns[0].content = `Deploys with the token ${secret.text} from the vault`;
    const path = repo.write("seed.json", `${JSON.stringify(seed, null, 2)}\n`);
    const r = await ingestSeed(ctx, path);
    expect(r.redacted).toBeGreaterThan(0);
    await runCycle(ctx, { force: true });
    expect(filesContaining(join(repo.dir, "memory"), secret.secret)).toEqual([]);
    expect(filesContaining(join(repo.dir, ".engram"), secret.secret)).toEqual([]);
  });

  it("names the path and the field (JSON pointer) of a malformed seed, exit 2", async () => {
    const repo = await freshRepo();
    const seed = JSON.parse(readFileSync(SEED, "utf8"));
    seed.learned.insights[0].content = "";
    const path = repo.write("seed.json", JSON.stringify(seed));
    const r = await director(["ingest", "--from-seed", path, "--json"], { cwd: repo.dir });
    expect(r.code, describeResult(r)).toBe(2);
    const error = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: "bad_input" });
    expect(error.message).toContain(path);
    expect(error.message).toContain("/learned/insights/0/content");

    writeFileSync(path, "{ not json");
    const bad = await director(["ingest", "--from-seed", path], { cwd: repo.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${path}: not JSON`);
  });
});
