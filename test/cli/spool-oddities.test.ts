/**
 * The spool is the state folder's, and a state folder may be restored from anywhere: an
 * entry named like a spool file that no worker wrote (a FIFO, a link, a folder) must never
 * stop the Director. It is moved aside and reported once; the workers' files beside it are
 * drained as usual.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonOf } from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import { dir, expectExit, initRepo, spoolFiles, useCliHarness, wrk } from "./cli-harness.js";

useCliHarness();

interface Drained {
  drained: {
    files: number;
    accepted: number;
    set_aside: { name: string; kind: string; moved_to: string | null }[];
  };
}

describe("entries of the spool that are not a worker's file", () => {
  it("a FIFO, a link and a folder are moved aside; the notes beside them are drained", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "before the oddities"]), 0);
    const spool = repo.path(".engram", "spool");
    const outside = join(repo.dir, "..", `${repo.dir.split("/").pop()}-outside.ndjson`);
    writeFileSync(outside, "not an envelope\n");
    // Named to sort first: a drain that opened it would block there for ever.
    execFileSync("mkfifo", [join(spool, "000000000000000-1-aaaaaaaaaaaa.ndjson")]);
    symlinkSync(outside, join(spool, "000000000000001-1-bbbbbbbbbbbb.ndjson"));
    mkdirSync(join(spool, "000000000000002-1-cccccccccccc.ndjson"));
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "after the oddities"]), 0);

    const r = await dir(repo, ["run", "--flush", "--json"]);
    expectExit(r, 0);
    const out = jsonOf<Drained>(r);
    expect(out.drained.files).toBe(2);
    expect(out.drained.accepted).toBe(2);
    expect(out.drained.set_aside).toEqual([
      {
        name: "000000000000000-1-aaaaaaaaaaaa.ndjson",
        kind: "fifo",
        moved_to: "set-aside/000000000000000-1-aaaaaaaaaaaa.ndjson",
      },
      {
        name: "000000000000001-1-bbbbbbbbbbbb.ndjson",
        kind: "symbolic link",
        moved_to: "set-aside/000000000000001-1-bbbbbbbbbbbb.ndjson",
      },
      {
        name: "000000000000002-1-cccccccccccc.ndjson",
        kind: "directory",
        moved_to: "set-aside/000000000000002-1-cccccccccccc.ndjson",
      },
    ]);
    expect(r.stderr).toContain("a fifo, not a spool file: never read");
    expect(spoolFiles(repo)).toEqual([]);
    expect(
      lstatSync(join(spool, "set-aside", "000000000000000-1-aaaaaaaaaaaa.ndjson")).isFIFO(),
    ).toBe(true);
    // The link was moved, never followed: what it pointed at is as it was.
    expect(readFileSync(outside, "utf8")).toBe("not an envelope\n");
    expect(readFileSync(repo.path("MEMORY.md"), "utf8")).toContain("after the oddities");

    // Reported once: the next run finds nothing odd.
    const again = jsonOf<Drained>(await dir(repo, ["run", "--json"]));
    expect(again.drained.set_aside).toEqual([]);
    expectExit(await dir(repo, ["verify"]), 0);
  });

  it("an entry that cannot be moved aside is left where it is, never read, and the run goes on", async () => {
    const repo = await initRepo();
    const spool = repo.path(".engram", "spool");
    mkdirSync(spool, { recursive: true });
    // set-aside is a link: entries are never carried through it.
    const elsewhere = join(repo.dir, "..", `${repo.dir.split("/").pop()}-elsewhere`);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(spool, "set-aside"));
    execFileSync("mkfifo", [join(spool, "000000000000000-1-aaaaaaaaaaaa.ndjson")]);
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "beside a fifo"]), 0);
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    const out = jsonOf<Drained>(r);
    expect(out.drained.accepted).toBe(1);
    expect(out.drained.set_aside).toEqual([
      { name: "000000000000000-1-aaaaaaaaaaaa.ndjson", kind: "fifo", moved_to: null },
    ]);
    expect(existsSync(join(elsewhere, "000000000000000-1-aaaaaaaaaaaa.ndjson"))).toBe(false);
    expect(lstatSync(join(spool, "000000000000000-1-aaaaaaaaaaaa.ndjson")).isFIFO()).toBe(true);
  });

  it("a spool file larger than a note is streamed, every line of it read", async () => {
    const repo = await initRepo(
      "[memory]\nbuffer_max_events = 100000\nbuffer_max_bytes = 134217728\n",
    );
    const pad = "x".repeat(3000);
    const lines = Array.from({ length: 1600 }, (_, i) =>
      note("fact", `large spool note ${i} ${pad}`, {
        eventId: `ev_${String(i).padStart(32, "0")}`,
      }),
    );
    const text = ndjson(lines);
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 1024 * 1024);
    mkdirSync(repo.path(".engram", "spool"), { recursive: true });
    writeFileSync(repo.path(".engram", "spool", "000000000000000-1-dddddddddddd.ndjson"), text);
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    const out = jsonOf<Drained>(r);
    expect(out.drained.files).toBe(1);
    expect(out.drained.accepted).toBe(1600);
    expect(spoolFiles(repo)).toEqual([]);
  });
});
