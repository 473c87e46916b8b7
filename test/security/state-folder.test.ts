/**
 * Issue 25, items 2 and 8: the state folder and the seal key come from the user, never from
 * the repository, and what the state folder holds is private whatever the umask. Through the
 * built bins, on real repositories.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { minEngramBytes } from "../../src/core/compaction/min-engram.js";
import { dir, expectExit, initRepo, spoolFiles, useCliHarness, wrk } from "../cli/cli-harness.js";
import { childEnv, DIRECTOR_BIN, WORKER_BIN } from "../support/bins.js";
import { git, type TempRepo } from "../support/repo.js";

useCliHarness();

const ATTACKER_KEY = "ab".repeat(32);

function commitAll(repo: TempRepo, message: string): void {
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "--allow-empty", "-m", message]);
}

function noBug(r: { code: number | null; stderr: string }): void {
  expect(r.code).not.toBe(70);
  expect(r.stderr).not.toMatch(/please report it|\n\s+at /);
}

const sensitive = [
  "emit",
  "--kind",
  "fact",
  "--text",
  "the launch code is 1234",
  "--privacy",
  "sensitive",
];

describe("[state] dir", () => {
  it.each([
    ['""', "is the repository itself"],
    ['"/"', "is the repository itself"],
    ['"/tmp/engram-state"', "is absolute"],
    ['"../elsewhere"', '".." segment'],
    ['".git/engram"', "inside .git"],
  ])("%s is a config error naming state.dir and the file", async (value, why) => {
    const repo = await initRepo(`[state]\ndir = ${value}\n`);
    const r = await wrk(repo, sensitive);
    expectExit(r, 2);
    noBug(r);
    expect(r.stderr).toContain("config/dev.toml:2: state.dir:");
    expect(r.stderr).toContain(why);
  });

  it("a tracked folder shipping its own seal.key is refused before anything is sealed", async () => {
    const repo = await initRepo();
    repo.write("shared/seal.key", `${ATTACKER_KEY}\n`);
    chmodSync(repo.path("shared/seal.key"), 0o600);
    commitAll(repo, "a state folder of the attacker's");
    // The pull request also makes it ignored, so only tracking gives it away.
    writeFileSync(
      repo.path(".gitignore"),
      `${readFileSync(repo.path(".gitignore"), "utf8")}/shared/\n`,
    );
    repo.writeConfig('[state]\ndir = "shared"\n');
    const r = await wrk(repo, sensitive);
    expectExit(r, 2);
    noBug(r);
    expect(r.stderr).toContain("git tracks 1 file(s) in it (shared/seal.key)");
    expect(readdirSync(repo.path("shared"))).toEqual(["seal.key"]);
  });

  it("a folder git does not ignore is refused: git add -A would commit the journal", async () => {
    const repo = await initRepo('[state]\ndir = "state"\n');
    commitAll(repo, "init");
    const r = await wrk(repo, sensitive);
    expectExit(r, 2);
    expect(r.stderr).toContain("not ignored by git");
  });

  it("a .engram that is a (tracked) symbolic link is refused", async () => {
    const repo = await initRepo();
    const elsewhere = repo.path("elsewhere");
    renameSync(repo.path(".engram"), elsewhere);
    symlinkSync("elsewhere", repo.path(".engram"));
    // `/.engram/` in .gitignore ignores a folder, not a link: git tracks it.
    commitAll(repo, "a link");
    const r = await wrk(repo, sensitive);
    expectExit(r, 2);
    noBug(r);
    expect(r.stderr).toMatch(/symbolic link|git tracks/);
    expect(readdirSync(join(elsewhere, "spool"))).toEqual([]);
  });

  it("says so when the default folder still holds work after [state] dir moved", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "left behind"]), 0);
    writeFileSync(
      repo.path(".gitignore"),
      `${readFileSync(repo.path(".gitignore"), "utf8")}/other/\n`,
    );
    repo.writeConfig('[state]\ndir = "other"\n');
    const r = await dir(repo, ["status"]);
    expect(r.stderr).toContain(".engram still holds work of an earlier state folder");
    expect(r.stderr).toContain("1 spool file(s)");
  });
});

describe("a state folder restored from a branch holds no link engram follows", () => {
  it("a journal that links to a file outside is refused, and that file is left whole", async () => {
    const repo = await initRepo();
    const outside = join(repo.dir, "..", `${repo.dir.split("/").pop()}-victim.txt`);
    // No trailing newline: a Director taking it for a torn journal would cut it short.
    writeFileSync(outside, "precious, no newline at the end");
    mkdirSync(repo.path(".engram", "buffer"), { recursive: true });
    symlinkSync(outside, repo.path(".engram", "buffer", "journal.ndjson"));
    for (const args of [["run", "--json"], ["status"]]) {
      const r = await dir(repo, args);
      expectExit(r, 3);
      noBug(r);
      expect(r.stderr).toContain(
        ".engram/buffer/journal.ndjson: a symbolic link in the state folder",
      );
    }
    expect(readFileSync(outside, "utf8")).toBe("precious, no newline at the end");
  });

  it("a FIFO among the state files is refused by name, never opened (a read would block for ever)", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "kept"]), 0);
    for (const file of [
      ["buffer", "meta.json"],
      ["buffer", "liveness.json"],
      ["room", "ledger.json"],
    ]) {
      mkdirSync(repo.path(".engram", file[0] as string), { recursive: true });
      execFileSync("mkfifo", [repo.path(".engram", ...file)]);
      for (const args of [["run", "--json"], ["status"]]) {
        const r = await dir(repo, args);
        expectExit(r, 3);
        noBug(r);
        expect(r.stderr).toContain(`.engram/${file.join("/")}: a fifo in the state folder`);
      }
      rmSync(repo.path(".engram", ...file));
    }
    // Removed, as the message says: the run goes on and nothing was lost.
    expectExit(await dir(repo, ["run", "--flush", "--json"]), 0);
    expect(readFileSync(repo.path("MEMORY.md"), "utf8")).toContain("kept");
  });

  it("a buffer meta that is not JSON or not of its types is named with what to do, never a crash", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "before"]), 0);
    expectExit(await dir(repo, ["run", "--flush", "--json"]), 0);
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "kept through the meta"]), 0);
    expectExit(await dir(repo, ["run", "--json"]), 0);
    const meta = repo.path(".engram", "buffer", "meta.json");
    expect(existsSync(meta)).toBe(true);
    // A sequence number that is a string made the next journal line unreadable (exit 70).
    for (const [text, says] of [
      ["{not json", "not valid JSON"],
      ['{"last_seq":"x","recall_counts":5}', "last_seq is not a count"],
      ['{"recall_counts":{"e_1":-2}}', "recall_counts is not a table of counts"],
    ]) {
      writeFileSync(meta, text as string);
      for (const args of [["run", "--json"], ["status"]]) {
        const r = await dir(repo, args);
        expectExit(r, 3);
        noBug(r);
        expect(r.stderr).toContain(`.engram/buffer/meta.json: ${says}`);
        expect(r.stderr).toContain("move it aside");
      }
    }
    // As the message says: moved aside, the run goes on and no event is lost.
    renameSync(meta, `${meta}.bad`);
    expectExit(await dir(repo, ["run", "--flush", "--json"]), 0);
    expect(readFileSync(repo.path("MEMORY.md"), "utf8")).toContain("kept through the meta");
  });

  it("a cycle intent whose meta is not of its types is refused by name and set aside", async () => {
    const repo = await initRepo();
    mkdirSync(repo.path(".engram", "buffer"), { recursive: true });
    writeFileSync(
      repo.path(".engram", "buffer", "cycle-intent.json"),
      `${JSON.stringify({ through_seq: 0, deletes: [], meta: { last_seq: "x" } })}\n`,
    );
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    noBug(r);
    expect(r.stderr).toContain(
      "cycle-intent.json: meta: last_seq is not a count: refused, set aside",
    );
  });

  it("a spool file that links elsewhere is never read", async () => {
    const repo = await initRepo();
    const outside = join(repo.dir, "..", `${repo.dir.split("/").pop()}-notes.ndjson`);
    writeFileSync(outside, "not an envelope\n");
    symlinkSync(outside, repo.path(".engram", "spool", "000000000000001-1-aaaaaaaaaaaa.ndjson"));
    // Moved aside and reported, never followed; the run goes on (test/cli/spool-oddities).
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    noBug(r);
    expect(r.stderr).toContain("a symbolic link, not a spool file: never read");
    expect(readFileSync(outside, "utf8")).toBe("not an envelope\n");
  });
});

describe("the seal key is used only when it is the user's", () => {
  it("a key readable by others is refused with what to do", async () => {
    const repo = await initRepo();
    chmodSync(repo.path(".engram", "seal.key"), 0o644);
    const r = await wrk(repo, sensitive);
    expectExit(r, 3);
    noBug(r);
    expect(r.stderr).toContain("readable or writable by others (mode 644)");
    expect(r.stderr).toContain("chmod 600");
    expect(spoolFiles(repo)).toEqual([]);
  });

  it("a key that is a symbolic link is refused", async () => {
    const repo = await initRepo();
    const key = repo.path(".engram", "seal.key");
    writeFileSync(repo.path("attacker.key"), `${ATTACKER_KEY}\n`, { mode: 0o600 });
    renameSync(key, `${key}.mine`);
    symlinkSync(repo.path("attacker.key"), key);
    const r = await wrk(repo, sensitive);
    expectExit(r, 3);
    // The state folder's own check sees the link first; the key's check would too.
    expect(r.stderr).toContain(".engram/seal.key: a symbolic link");
    expect(spoolFiles(repo)).toEqual([]);
  });
});

/** Runs a bin under `umask 022`, the common default that made state files world-readable. */
function underUmask022(bin: string, args: string[], cwd: string): string {
  const r = spawnSync(
    "sh",
    ["-c", 'umask 022 && exec "$@"', "sh", process.execPath, bin, ...args],
    {
      cwd,
      env: childEnv({ SOURCE_DATE_EPOCH: "1767225600" }),
      encoding: "utf8",
    },
  );
  if (r.status !== 0) throw new Error(`${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** Every file and folder under `root` that someone other than the user may read. */
function openToOthers(root: string): string[] {
  const out: string[] = [];
  const visit = (at: string) => {
    const st = lstatSync(at);
    if ((st.mode & 0o077) !== 0)
      out.push(`${at.slice(root.length) || "/"} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(at)) visit(join(at, name));
  };
  visit(root);
  return out;
}

describe("state files are private whatever the umask", () => {
  it("journal, spool, quarantine, meta, caches and key: 0600 in 0700 folders under umask 022", async () => {
    const repo = await initRepo("[memory]\nbuffer_keep_recent_events = 0\n");
    const input = join(repo.dir, "..", `${repo.dir.split("/").pop()}-in.ndjson`);
    writeFileSync(input, "not json\n");
    const root = repo.path(".engram");
    const steps: [string, string[]][] = [
      [WORKER_BIN, ["emit", "--kind", "fact", "--text", "a private note"]],
      [WORKER_BIN, sensitive],
      [DIRECTOR_BIN, ["ingest", input]],
      // The journal is created by appending, then rewritten whole by a compaction.
      [DIRECTOR_BIN, ["run", "--json"]],
      [WORKER_BIN, ["emit", "--kind", "fact", "--text", "compacted next"]],
      [DIRECTOR_BIN, ["run", "--flush", "--json"]],
    ];
    for (const [bin, args] of steps) {
      underUmask022(bin, args, repo.dir);
      expect(openToOthers(root), args.join(" ")).toEqual([]);
    }
    // A session's buffer is appended to, then sent: private too.
    const started = underUmask022(WORKER_BIN, ["session", "start", "--json"], repo.dir);
    const id = (JSON.parse(started) as { session_id: string }).session_id;
    const write = ["session", "write", "--session", id, "--kind", "fact", "--text", "private"];
    write.push("--confidence", "0.9");
    for (const args of [write, ["session", "end", id]]) {
      underUmask022(WORKER_BIN, args, repo.dir);
      expect(openToOthers(root), args.join(" ")).toEqual([]);
    }
    expect(readdirSync(join(root, "buffer")).sort()).toEqual(
      expect.arrayContaining(["journal.ndjson", "meta.json", "seen.keys"]),
    );
    expect(readdirSync(root)).toEqual(expect.arrayContaining(["quarantine.ndjson", "seal.key"]));
  });

  it("an old state folder left open (0755) is closed when a command opens it", async () => {
    const repo = await initRepo();
    chmodSync(repo.path(".engram"), 0o755);
    mkdirSync(repo.path(".engram", "graph"), { mode: 0o755 });
    expectExit(await dir(repo, ["status"]), 0);
    expect(lstatSync(repo.path(".engram")).mode & 0o777).toBe(0o700);
    // A folder in it (restored or copied with open modes) is closed too: mkdir leaves it be.
    expect(lstatSync(repo.path(".engram", "graph")).mode & 0o777).toBe(0o700);
  });
});

describe("config floors", () => {
  it("engram_max_bytes below the smallest engram is refused, naming the key and the file", async () => {
    const floor = minEngramBytes();
    expect(floor).toBeGreaterThan(300);
    for (const value of [1, floor - 1]) {
      const repo = await initRepo(`[memory]\nengram_max_bytes = ${value}\n`);
      const r = await dir(repo, ["run"]);
      expectExit(r, 2);
      noBug(r);
      expect(r.stderr).toContain(
        `config/dev.toml:2: memory.engram_max_bytes: memory.engram_max_bytes (${value}) must be at least ${floor}`,
      );
    }
    const ok = await initRepo(`[memory]\nengram_max_bytes = ${floor}\n`);
    expectExit(await dir(ok, ["run"]), 0);
  });
});
