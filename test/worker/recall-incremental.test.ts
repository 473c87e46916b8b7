/**
 * The recall index stays incremental: a new catalog re-reads only the engrams whose hash
 * changed, and gives the same bytes as a build from nothing. Its caches are input: damaged
 * or planted ones are derived again, never trusted.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  generateEngrams,
  initBenchRepo,
  ROOMY_BUDGETS,
  writeEngramRepo,
} from "../../bench/repo-fixtures.js";
import type { RepoContext } from "../../src/context/repo-context.js";
import { sealEngram } from "../../src/core/model/engram.js";
import { recall, serializeRecallIndex } from "../../src/core/recall/recall.js";
import { readCatalog } from "../../src/repo/memory-tree.js";
import type { Engram } from "../../src/schema/engram.js";
import { recallIndexFor } from "../../src/worker/recall.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const ENGRAMS = generateEngrams(80, 0x1dea);

async function repoWith(engrams: readonly Engram[]): Promise<RepoContext> {
  const ctx = await initBenchRepo(join(dirs.dir("engram-recall-inc-"), "repo"), ROOMY_BUDGETS);
  writeEngramRepo(ctx, engrams);
  return ctx;
}

const cachePath = (ctx: RepoContext) => join(ctx.paths.root, "recall-index.json");
const notesPath = (ctx: RepoContext) => join(ctx.paths.root, "recall-index.notes.json");

/** The index of the repository's memory as a build from nothing makes it, as JSON. */
async function fresh(ctx: RepoContext): Promise<string> {
  rmSync(cachePath(ctx), { force: true });
  rmSync(notesPath(ctx), { force: true });
  const index = await recallIndexFor(ctx, await readCatalog(ctx.repoDir));
  return JSON.stringify(serializeRecallIndex(index));
}

async function current(ctx: RepoContext): Promise<string> {
  return JSON.stringify(
    serializeRecallIndex(await recallIndexFor(ctx, await readCatalog(ctx.repoDir))),
  );
}

describe("recall index, incremental", () => {
  it("after engrams are added and removed, reads only the changed ones and equals a fresh build", async () => {
    const before = ENGRAMS.slice(0, 60);
    // An ST engram both catalogs list, and a new LT engram that carries its first fact.
    const kept = ENGRAMS.slice(8, 60).find((e) => e.scope === "st" && e.facts.length > 0) as Engram;
    const template = ENGRAMS.find((e) => e.scope === "lt") as Engram;
    const { engram_id: _id, hash: _hash, ...body } = template;
    const carrier = sealEngram({
      ...body,
      facts: [kept.facts[0] as string, ...body.facts],
      supersedes: [kept.engram_id],
    });
    const after = [...ENGRAMS.slice(8, 80), carrier];
    const ctx = await repoWith(before);
    await current(ctx); // caches the index and each engram's notes
    writeEngramRepo(ctx, after);
    // An engram both catalogs list is not read again: its file may even be gone.
    const keptPath = join(
      ctx.repoDir,
      "memory",
      kept.scope,
      kept.version,
      `engram_${kept.engram_id}.json`,
    );
    const keptText = readFileSync(keptPath);
    rmSync(keptPath);
    const incremental = await current(ctx);
    writeFileSync(keptPath, keptText);
    const rebuilt = await fresh(ctx);
    expect(incremental).toBe(rebuilt);
    // Supersession crosses engrams: the kept engram's note is marked though it was not read.
    expect(rebuilt).toContain(`"superseded_by":["${carrier.engram_id}"]`);
    // And the removed engrams' notes are gone.
    const removed = before.filter((e) => !after.includes(e)).map((e) => e.engram_id);
    for (const id of removed) expect(rebuilt).not.toContain(id);
  });

  it("rebuilds from damaged or planted caches, giving the fresh index, never throwing", async () => {
    const ctx = await repoWith(ENGRAMS.slice(0, 40));
    const expected = await fresh(ctx);
    const notes = JSON.parse(readFileSync(notesPath(ctx), "utf8"));
    const index = JSON.parse(readFileSync(cachePath(ctx), "utf8"));
    // biome-ignore lint/suspicious/noExplicitAny: the caches as parsed JSON, planted by hand
    type Json = any;
    const plants: [string, (n: Json, i: Json) => void][] = [
      ["a note's text is a number", (n) => (n.engrams[0].notes[0].text = 42)],
      [
        "a note names another engram",
        (n) => (n.engrams[0].notes[0].engram_id = n.engrams[1].engram_id),
      ],
      ["a note with a field of its own", (n) => (n.engrams[1].notes[0].evil = true)],
      [
        "counts that are not counts",
        (n) => (n.engrams[2].notes[0].tokens = { text: -1, rationale: 0 }),
      ],
      ["a part of another hash", (n) => (n.engrams[3].hash = `sha256:${"0".repeat(64)}`)],
      ["claims out of step", (n) => n.engrams[4].claims.pop()],
      [
        "a posting past the notes",
        (_n, i) =>
          (i.index.terms[0][2] = Buffer.from(Int32Array.of(1e6).buffer).toString("base64")),
      ],
      [
        "a weight that is not a number",
        (_n, i) =>
          (i.index.terms[0][3] = Buffer.from(Float32Array.of(Number.NaN).buffer).toString(
            "base64",
          )),
      ],
      ["an origin's topics are a string", (_n, i) => (i.index.origins[0][4] = "payments")],
      ["a note's text is an object", (_n, i) => (i.index.notes[0][1].text = { x: 1 })],
    ];
    for (const [what, plant] of plants) {
      const n = structuredClone(notes);
      const i = structuredClone(index);
      plant(n, i);
      // A changed catalog would take the planted parts: key the index to another one.
      if (JSON.stringify(n) !== JSON.stringify(notes)) i.catalog_hash = "sha256:other";
      writeFileSync(notesPath(ctx), JSON.stringify(n));
      writeFileSync(cachePath(ctx), JSON.stringify(i));
      expect(await current(ctx), what).toBe(expected);
      const hits = recall(
        await recallIndexFor(ctx, await readCatalog(ctx.repoDir)),
        "retry payments",
      );
      expect(
        hits.every((h) => Number.isFinite(h.score)),
        what,
      ).toBe(true);
    }
    for (const text of ["", "{", "null", "[]", '{"format":"engram-recall-notes/v1","engrams":7}']) {
      writeFileSync(notesPath(ctx), text);
      writeFileSync(cachePath(ctx), text);
      expect(await current(ctx), JSON.stringify(text)).toBe(expected);
    }
  });
});
