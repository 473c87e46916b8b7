/**
 * The command line's error contract through the built bins: which repository a command works
 * on, errors a user can act on (never "a bug"), one JSON object per error with `--json`,
 * option suggestions, per-command help and the notice of a wait for the Director lock.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, EXIT } from "../../src/errors.js";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  spawnBin,
  worker,
} from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
let template: TempRepo;
beforeAll(async () => {
  assertBuilt();
  template = dirs.repo("engram-errors-template-");
  const r = await director(["init"], { cwd: template.dir });
  if (r.code !== 0) throw new Error(`director init failed: ${describeResult(r)}`);
});
afterAll(() => dirs.cleanup());

function expectExit(r: BinResult, code: number): void {
  expect(r.code, describeResult(r)).toBe(code);
}

interface ErrorJson {
  error: string;
  code: string;
  message: string;
  exit_code: number;
}

/** The one JSON object a failed `--json` command printed, checked against its exit status. */
function errorJsonOf(r: BinResult): ErrorJson {
  const lines = r.stdout.split("\n").filter((l) => l !== "");
  expect(lines, describeResult(r)).toHaveLength(1);
  const json = JSON.parse(lines[0] as string) as ErrorJson;
  expect(Object.keys(json).sort()).toEqual(["code", "error", "exit_code", "message"]);
  expect(json.code in ERROR_CODES, json.code).toBe(true);
  expect(json.exit_code).toBe(r.code);
  expect(json.message.length).toBeGreaterThan(0);
  return json;
}

function noBug(r: BinResult): void {
  expect(r.stderr, describeResult(r)).not.toMatch(/internal error|a bug|\n\s+at /);
}

describe.concurrent("commands find their repository like git", () => {
  it("from a subfolder, worker and director commands work on the enclosing work tree", async () => {
    const repo = dirs.copy(template);
    const sub = repo.path("src", "ui");
    mkdirSync(sub, { recursive: true });
    const emit = await worker(["emit", "--kind", "fact", "--text", "from a subfolder"], {
      cwd: sub,
    });
    expectExit(emit, 0);
    expect(existsSync(join(sub, ".engram")), "no state folder in the subfolder").toBe(false);
    expect(readdirSync(repo.path(".engram", "spool"))).toHaveLength(1);
    const run = await director(["run", "--force", "--json"], {
      cwd: sub,
      env: { SOURCE_DATE_EPOCH: "1800000000" },
    });
    expectExit(run, 0);
    expect(JSON.parse(run.stdout).drained.accepted).toBe(1);
    const top = JSON.parse(
      (await worker(["check", "--offline", "--json"], { cwd: repo.dir })).stdout,
    );
    const below = JSON.parse((await worker(["check", "--offline", "--json"], { cwd: sub })).stdout);
    expect(below.catalog_version).toBe(top.catalog_version);
    expect(below.catalog_hash).toBe(top.catalog_hash);
    expect(existsSync(join(sub, "memory"))).toBe(false);
  });

  it("--repo that does not exist, is not a folder or not a git work tree is exit 3, and nothing is created", async () => {
    const base = dirs.dir();
    const missing = join(base, "nonexistent");
    const file = join(base, "a-file");
    writeFileSync(file, "x");
    const plain = join(base, "plain");
    mkdirSync(plain);
    const cases: [string, RegExp][] = [
      [missing, /no such folder/],
      [file, /not a folder/],
      [plain, /not a git work tree/],
    ];
    const runs = cases.flatMap(([dir, says]) => [
      ...[["run"], ["init"]].map(async (command) => {
        const r = await director([...command, "--repo", dir, "--json"], { cwd: base });
        expectExit(r, EXIT.state);
        expect(r.stderr).toMatch(says);
        expect(r.stderr).toContain(dir);
        expect(errorJsonOf(r).code).toBe("not_a_repository");
      }),
      worker(["emit", "--kind", "fact", "--text", "x", "--repo", dir], { cwd: base }).then((r) =>
        expectExit(r, EXIT.state),
      ),
    ]);
    await Promise.all(runs);
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(plain)).toEqual([]);
  });

  it("--repo given a subfolder of a work tree says which folder is the work tree", async () => {
    const repo = dirs.copy(template);
    mkdirSync(repo.path("docs"));
    const r = await director(["status", "--repo", "docs"], { cwd: repo.dir });
    expectExit(r, EXIT.state);
    expect(r.stderr).toContain(`--repo ${repo.dir}`);
  });

  it("outside any git work tree every command says so, director init included", async () => {
    const plain = dirs.dir();
    for (const r of [
      await director(["init"], { cwd: plain }),
      await director(["status"], { cwd: plain }),
      await worker(["check"], { cwd: plain }),
    ]) {
      expectExit(r, EXIT.state);
      expect(r.stderr).toMatch(/not inside a git work tree/);
      noBug(r);
    }
    expect(readdirSync(plain)).toEqual([]);
  });

  it("a command other than init in a repository without director init says to run it", async () => {
    const repo = dirs.repo();
    const results = await Promise.all([
      director(["run", "--json"], { cwd: repo.dir }),
      director(["status"], { cwd: repo.dir }),
      worker(["emit", "--kind", "fact", "--text", "x"], { cwd: repo.dir }),
      worker(["check"], { cwd: repo.dir }),
    ]);
    for (const r of results) {
      expectExit(r, EXIT.state);
      expect(r.stderr).toContain("run director init");
    }
    expect(errorJsonOf(results[0] as BinResult).code).toBe("not_initialized");
    expect(readdirSync(repo.dir)).toEqual([".git"]);
    // director init from a subfolder lays out the work tree's top.
    mkdirSync(repo.path("lib"));
    expectExit(await director(["init"], { cwd: repo.path("lib") }), 0);
    expect(existsSync(repo.path("memory", "catalog.json"))).toBe(true);
    expect(existsSync(repo.path("lib", "memory"))).toBe(false);
    expectExit(await director(["status"], { cwd: repo.path("lib") }), 0);
  });
});

describe.concurrent("errors a user can act on are never a bug", () => {
  it("director ingest of a missing file or a folder is exit 3 naming it", async () => {
    const repo = dirs.copy(template);
    mkdirSync(repo.path("somedir"));
    const missing = await director(["ingest", "missing.ndjson"], { cwd: repo.dir });
    expectExit(missing, EXIT.state);
    expect(missing.stderr).toContain("missing.ndjson: no such file or directory");
    noBug(missing);
    const folder = await director(["ingest", "somedir/", "--json"], { cwd: repo.dir });
    expectExit(folder, EXIT.state);
    expect(folder.stderr).toContain("somedir/: is a directory");
    noBug(folder);
    expect(errorJsonOf(folder).code).toBe("is_a_directory");
    const json = errorJsonOf(
      await director(["ingest", "missing.ndjson", "--json"], { cwd: repo.dir }),
    );
    expect(json).toMatchObject({ error: "FileSystemError", code: "file_not_found", exit_code: 3 });
  });

  it("worker emit --from a missing file is exit 3 naming it", async () => {
    const repo = dirs.copy(template);
    const r = await worker(["emit", "--from", "notes.ndjson", "--json"], { cwd: repo.dir });
    expectExit(r, EXIT.state);
    expect(errorJsonOf(r).message).toContain("--from notes.ndjson: no such file or directory");
  });

  it("a state folder the file system refuses is exit 3 naming the path, not a bug", async () => {
    const repo = dirs.copy(template);
    // A file where the state folder's parent should be: ENOTDIR on every write into it.
    repo.write("blocker", "not a folder\n");
    repo.writeConfig('[state]\ndir = "blocker/state"\n');
    const r = await worker(["emit", "--kind", "fact", "--text", "x", "--json"], { cwd: repo.dir });
    expectExit(r, EXIT.state);
    noBug(r);
    const json = errorJsonOf(r);
    expect(json.code).toBe("not_a_directory");
    expect(json.message).toContain(repo.path("blocker"));
  });

  it.skipIf(process.getuid?.() === 0)(
    "a spool folder without write permission is exit 3 permission_denied",
    async () => {
      const repo = dirs.copy(template);
      const spool = repo.path(".engram", "spool");
      chmodSync(spool, 0o555);
      try {
        const r = await worker(["emit", "--kind", "fact", "--text", "x", "--json"], {
          cwd: repo.dir,
        });
        expectExit(r, EXIT.state);
        noBug(r);
        expect(errorJsonOf(r).code).toBe("permission_denied");
      } finally {
        chmodSync(spool, 0o755);
      }
    },
  );
});

describe.concurrent("--json: every error is one JSON object on stdout", () => {
  it("usage, unknown command, config and state errors alike", async () => {
    const repo = dirs.copy(template);
    const bad = dirs.copy(template);
    bad.writeConfig("[memory]\nbogus_key = 1\n");
    const cases: [Promise<BinResult>, string, number][] = [
      [director(["run", "--forse", "--json"], { cwd: repo.dir }), "usage", EXIT.usage],
      [director(["frobnicate", "--json"], { cwd: repo.dir }), "usage", EXIT.usage],
      [director(["--json"], { cwd: repo.dir }), "usage", EXIT.usage],
      [worker(["emit", "--text", "x", "--json"], { cwd: repo.dir }), "usage", EXIT.usage],
      [director(["ingest", "--json"], { cwd: repo.dir }), "usage", EXIT.usage],
      [director(["status", "--json"], { cwd: bad.dir }), "config", EXIT.usage],
      [
        director(["restore", `e_${"0".repeat(32)}`, "--json"], { cwd: repo.dir }),
        "state",
        EXIT.state,
      ],
      [
        director(["run", "--json", "--repo", "/nonexistent-engram"], { cwd: repo.dir }),
        "not_a_repository",
        EXIT.state,
      ],
    ];
    for (const [pending, code, exit] of cases) {
      const r = await pending;
      expectExit(r, exit);
      expect(errorJsonOf(r).code, describeResult(r)).toBe(code);
    }
  });
});

describe.concurrent("options and help", () => {
  it("an unknown option suggests the nearest one, with balanced quotes", async () => {
    const repo = dirs.copy(template);
    const r = await director(["run", "--forse"], { cwd: repo.dir });
    expectExit(r, EXIT.usage);
    const first = r.stderr.split("\n")[0] as string;
    expect(first).toContain("unknown option --forse (did you mean --force?)");
    expect((first.match(/'/g) ?? []).length % 2).toBe(0);
    expect((first.match(/"/g) ?? []).length % 2).toBe(0);
    const w = await worker(["emit", "--kindd", "fact"], { cwd: repo.dir });
    expect(w.stderr).toContain("did you mean --kind?");
    const cmd = await director(["rnu"], { cwd: repo.dir });
    expect(cmd.stderr).toContain("unknown command 'rnu' (did you mean 'run'?)");
  });

  it("director help run and worker help emit show that command's help", async () => {
    const repo = dirs.repo();
    const [a, b, c, d] = await Promise.all([
      director(["help", "run"], { cwd: repo.dir }),
      director(["run", "--help"], { cwd: repo.dir }),
      worker(["help", "emit"], { cwd: repo.dir }),
      worker(["emit", "--help"], { cwd: repo.dir }),
    ]);
    expectExit(a, 0);
    expect(a.stdout.startsWith("usage: director run")).toBe(true);
    expect(a.stdout).toBe(b.stdout);
    expectExit(c, 0);
    expect(c.stdout).toBe(d.stdout);
    expect(c.stdout).toContain("--kind");
  });
});

describe("a second director run waits for the lock", () => {
  it("says once on stderr that it waits, and for whom", async () => {
    const repo = dirs.copy(template);
    // A live holder (this test process) that says what it runs, as a Director writes it.
    const lock = repo.path(".engram", "director.lock");
    writeFileSync(lock, `${process.pid} 0123456789abcdef\ndirector run\n`);
    const waiting = spawnBin(DIRECTOR_BIN, ["run"], { cwd: repo.dir, timeoutMs: 60_000 });
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      waiting.child.stderr?.on("data", (d: Buffer | string) => {
        stderr += String(d);
        if (stderr.includes("waiting")) resolve();
      });
      waiting.child.on("close", () => reject(new Error(`ended before waiting: ${stderr}`)));
    });
    unlinkSync(lock);
    const r = await waiting.done;
    expectExit(r, 0);
    const notices = r.stderr.split("\n").filter((l) => l.includes("waiting"));
    expect(notices, r.stderr).toEqual([
      `director run: waiting for the Director lock, held by pid ${process.pid} (director run); it is released when that command ends`,
    ]);
  });
});
