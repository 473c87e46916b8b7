/**
 * Supersession survives compaction for room: a note that names what it replaces
 * (`worker emit --supersedes`) and is compacted for room by an ingest past the buffer's
 * budget still replaces it once the cycle packs the group's records. Through the bins, on a
 * real repository.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, jsonOf, worker } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

// No change cue, no default: only the name in --supersedes says the new one replaces the old.
const OLD = "Name branches feature/ and the issue number";
const NEW = "Name branches after the issue title, in kebab case";
const TINY = "[memory]\nbuffer_keep_recent_events = 0\nbuffer_max_events = 4\n";

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

interface Hit {
  id: string;
  text: string;
}

describe("supersession and compaction for room", () => {
  it("keeps a note's --supersedes through compaction for room: MEMORY.md and recall show only the new side", async () => {
    const repo = dirs.repo("engram-room-supersedes-");
    repo.writeConfig(TINY);
    ok(await director(["init"], { cwd: repo.dir }));
    ok(await worker(["emit", "--kind", "decision", "--text", OLD], { cwd: repo.dir }));
    ok(
      await director(["run", "--flush"], {
        cwd: repo.dir,
        env: { SOURCE_DATE_EPOCH: "1800000000" },
      }),
    );
    const hits = jsonOf<Hit[]>(
      ok(
        await worker(["recall", "branches issue number", "--json", "--no-signal"], {
          cwd: repo.dir,
        }),
      ),
    );
    const id = hits.find((h) => h.text === OLD)?.id as string;
    expect(id, JSON.stringify(hits)).toBeDefined();

    // The replacement first, then more notes than the buffer holds: the ingest compacts the
    // oldest (the replacement among them) for room before the cycle.
    const notes = join(dirs.dir("engram-notes-"), "notes.ndjson");
    const lines = [
      { kind: "decision", text: NEW, supersedes: [id], topics: ["branches"] },
      ...Array.from({ length: 12 }, (_, i) => ({
        kind: "fact",
        text: `filler note ${i} about the build cache`,
        topics: ["build"],
      })),
    ];
    writeFileSync(notes, lines.map((l) => JSON.stringify(l)).join("\n"));
    ok(await worker(["emit", "--from", notes], { cwd: repo.dir }));
    const run = jsonOf<{ compacted_for_room: { compactions: number } | null }>(
      ok(
        await director(["run", "--flush", "--json"], {
          cwd: repo.dir,
          env: { SOURCE_DATE_EPOCH: "1800000100" },
        }),
      ),
    );
    expect(run.compacted_for_room?.compactions ?? 0).toBeGreaterThan(0);

    const focus = readFileSync(repo.path("MEMORY.md"), "utf8");
    expect(focus).toContain(NEW);
    expect(focus).not.toContain(OLD);
    const after = jsonOf<Hit[]>(
      ok(await worker(["recall", "branches issue", "--json", "--no-signal"], { cwd: repo.dir })),
    );
    expect(after.map((h) => h.text)).toContain(NEW);
    expect(after.map((h) => h.text)).not.toContain(OLD);
  }, 120_000);
});
