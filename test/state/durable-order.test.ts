/**
 * Crash safety is an order of system calls: every rename a cycle intent's steps make (memory
 * files, the ledger, the journal, the buffer's meta) must be made durable (an fsync of its
 * folder) before the intent is removed, or a crash just after the removal can bring back the
 * old file with no intent to replay.
 * The steps defer their folders' fsyncs to the end of the step (`withDirSyncsDeferred`); this
 * test watches the real system calls of `director ingest` compacting for room many times.
 * It needs strace, and is skipped where there is none.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIRECTOR_BIN } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const hasStrace = spawnSync("strace", ["-V"]).status === 0;

/** One system call of interest, in the order the process made them. */
type Call =
  | { op: "rename"; from: string; to: string }
  | { op: "unlink"; path: string }
  | { op: "fsync"; path: string };

function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  for (const line of text.split("\n")) {
    if (/= -1 /.test(line) || line.includes("<unfinished ...>")) continue;
    let m = /\brename(?:at2?)?\((?:[^,]+, )?"([^"]+)", (?:[^,]+, )?"([^"]+)"/.exec(line);
    if (m) {
      calls.push({ op: "rename", from: m[1] as string, to: m[2] as string });
      continue;
    }
    m = /\bunlink(?:at)?\((?:[^,]+, )?"([^"]+)"/.exec(line);
    if (m) {
      calls.push({ op: "unlink", path: m[1] as string });
      continue;
    }
    m = /\bfsync\(\d+<([^>]+)>\)/.exec(line);
    if (m) calls.push({ op: "fsync", path: m[1] as string });
  }
  return calls;
}

describe.skipIf(!hasStrace)("the order of a compaction's system calls", () => {
  it("every rename an intent's steps make is fsynced in its folder before the intent goes", () => {
    const repo = dirs.repo("engram-durable-");
    const init = spawnSync(process.execPath, [DIRECTOR_BIN, "init"], { cwd: repo.dir });
    expect(init.status, String(init.stderr)).toBe(0);
    repo.writeConfig("[memory]\nbuffer_max_events = 60\nbuffer_keep_recent_events = 10\n");
    const input = join(dirs.dir("engram-durable-in-"), "notes.ndjson");
    writeFileSync(
      input,
      ndjson(
        Array.from({ length: 400 }, (_, i) =>
          note("fact", `durable note ${i} about component ${i % 7}`, {
            eventId: `ev_${String(i).padStart(32, "0")}`,
            sender: `w${i % 5}`,
          }),
        ),
      ),
    );
    const trace = join(dirs.dir("engram-durable-trace-"), "trace.txt");
    const r = spawnSync(
      "strace",
      [
        "-f",
        "-y",
        "-e",
        "trace=rename,renameat,renameat2,unlink,unlinkat,fsync",
        "-o",
        trace,
        process.execPath,
        DIRECTOR_BIN,
        "ingest",
        input,
        "--json",
      ],
      { cwd: repo.dir, encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const calls = parseTrace(readFileSync(trace, "utf8"));
    const state = join(repo.dir, ".engram");
    const intent = join(state, "buffer", "cycle-intent.json");
    let open = false;
    let compactions = 0;
    // Folders with a rename not yet made durable, while an intent stands.
    const dirty = new Set<string>();
    for (const call of calls) {
      if (call.op === "rename" && call.to === intent) {
        open = true;
        dirty.clear();
      } else if (call.op === "unlink" && call.path === intent) {
        expect([...dirty], "folders not fsynced when the intent was removed").toEqual([]);
        open = false;
        compactions++;
      } else if (open && call.op === "rename" && call.to.startsWith(`${repo.dir}/`)) {
        dirty.add(call.to.slice(0, call.to.lastIndexOf("/")));
      } else if (call.op === "fsync") {
        dirty.delete(call.path);
      }
    }
    expect(open).toBe(false);
    // Several compactions for room, then the settle's cycle.
    expect(compactions).toBeGreaterThan(3);
  });
});
