/**
 * Integration through the real bins (`dist/src/cli/{director,worker}.js`, built by `npm test`)
 * on real temporary git repositories: every command and its documented contract.
 */
import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeResult, director, jsonOf, worker } from "../support/bins.js";
import { type Envelope, note } from "../support/envelopes.js";
import {
  listFiles,
  readCatalogFile,
  readEngrams,
  readNdjson,
  snapshot,
} from "../support/memory.js";
import { gitIgnores, type TempRepo, tomlConfig } from "../support/repo.js";
import {
  dir,
  dirs,
  EPOCH,
  engramFiles,
  expectExit,
  expectVerified,
  ingest,
  initRepo,
  inputFile,
  runCycle,
  spoolFiles,
  useCliHarness,
  wrk,
} from "./cli-harness.js";

useCliHarness();

describe.concurrent("director init", () => {
  it("lays out config, memory skeleton, catalog, MEMORY.md and ignores the state folder; a second run changes nothing", async () => {
    const repo = dirs.repo();
    const first = jsonOf<{ created: string[]; kept: string[] }>(
      await dir(repo, ["init", "--json"]),
    );
    for (const path of [
      "config/dev.toml",
      "memory/st/.gitkeep",
      "memory/lt/.gitkeep",
      "memory/catalog.json",
      "MEMORY.md",
    ]) {
      expect(first.created).toContain(path);
      expect(statSync(repo.path(path)).isFile()).toBe(true);
    }
    expect(first.kept).toEqual([]);
    const gitignore = readFileSync(repo.path(".gitignore"), "utf8").split("\n");
    expect(gitignore).toContain("/.engram/");
    expect(gitIgnores(repo.dir, ".engram/buffer/journal.ndjson")).toBe(true);
    expect(gitIgnores(repo.dir, "memory/catalog.json")).toBe(false);
    const catalog = readCatalogFile(repo.dir);
    expect(catalog.catalog_version).toBe(0);
    expect(catalog.entries).toEqual([]);

    const files = (r: TempRepo) => listFiles(r.dir, r.dir, [".git"]);
    const before = snapshot(repo.dir, files(repo));
    const mtimes = new Map(files(repo).map((p) => [p, statSync(repo.path(p)).mtimeMs]));
    const second = jsonOf<{ created: string[]; kept: string[] }>(
      await dir(repo, ["init", "--json"]),
    );
    expect(second.created).toEqual([]);
    for (const path of ["config/dev.toml", "memory/catalog.json", "MEMORY.md", ".gitignore"]) {
      expect(second.kept).toContain(path);
    }
    expect(files(repo)).toEqual([...before.keys()]);
    expect(snapshot(repo.dir, files(repo))).toEqual(before);
    for (const [path, mtime] of mtimes) expect(statSync(repo.path(path)).mtimeMs, path).toBe(mtime);

    // A fresh repository is consistent.
    const [verify, check] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify, 0);
    expect(jsonOf<{ ok: boolean }>(check).ok).toBe(true);
  });
});

describe.concurrent("worker emit", () => {
  it("spools one memory_note.v1 envelope per call and prints its event_id", async () => {
    const repo = await initRepo();
    const args = ["emit", "--kind", "lesson", "--text", "Pin the Node version in CI"];
    const [a, b] = await Promise.all([
      wrk(
        repo,
        [
          ...args,
          "--topic",
          "ci",
          "--topic",
          "node",
          "--link",
          "#12",
          "--link",
          "src/a.ts",
          "--json",
        ],
        {
          env: { ENGRAM_WORKER_ID: "w-emit" },
        },
      ),
      wrk(repo, [...args, "--json"]),
    ]);
    const ja = jsonOf<{ event_id: string; spooled: boolean; path: string }>(a);
    const jb = jsonOf<{ event_id: string; spooled: boolean; path: string }>(b);
    expect(ja.spooled).toBe(true);
    expect(typeof ja.event_id).toBe("string");
    expect(ja.event_id.length).toBeGreaterThan(0);
    expect(ja.event_id).not.toBe(jb.event_id);
    expect(spoolFiles(repo)).toHaveLength(2);
    const [env] = readNdjson<Envelope & { payload: Record<string, unknown> }>(ja.path);
    expect(env).toMatchObject({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_note.v1",
      event_id: ja.event_id,
      sender: { role: "worker", id: "w-emit" },
      payload: {
        kind: "lesson",
        text: "Pin the Node version in CI",
        topics: ["ci", "node"],
        links: ["#12", "src/a.ts"],
      },
    });
  });

  it("refuses bad input with exit 2 and a message naming the flag, spooling nothing", async () => {
    const repo = await initRepo();
    const cases: [string[], string][] = [
      [["--kind", "nope", "--text", "x"], "--kind"],
      [["--kind", "fact"], "--text"],
      [["--text", "x"], "--kind"],
      [["--kind", "fact", "--text", "x", "--confidence", "2"], "--confidence"],
      [["--kind", "fact", "--text", "x", "--confidence", "high"], "--confidence"],
    ];
    const results = await Promise.all(
      cases.map(([args]) => wrk(repo, ["emit", ...args, "--json"])),
    );
    results.forEach((r, i) => {
      const flag = cases[i]?.[1] as string;
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain(flag);
    });
    expect(spoolFiles(repo)).toEqual([]);
  });
});

describe.concurrent("worker emit --from", () => {
  const notes = [
    '{"kind":"lesson","text":"Batch the notes of a task","topics":["bus"],"links":["#12"]}',
    "",
    '{"kind":"decision","text":"Use NATS across hosts","rationale":"CI runners","issue":12}',
    '{"kind":"fact","text":"the staging password is hunter2-staging","privacy":"sensitive"}',
  ];

  it("sends every note of a file in one delivery, sealing a sensitive one before it leaves", async () => {
    const repo = await initRepo();
    const file = inputFile("notes.ndjson", notes);
    const r = await wrk(repo, ["emit", "--from", file, "--json"], {
      env: { ENGRAM_WORKER_ID: "w-batch" },
    });
    expectExit(r, 0);
    const out = jsonOf<{ event_ids: string[]; spooled: boolean; path: string }>(r);
    expect(out).toMatchObject({ message_type: "memory_note.v1", spooled: true });
    expect(out.event_ids).toHaveLength(3);
    // One spool file holds the three envelopes, in order, numbered by seq.
    expect(spoolFiles(repo)).toHaveLength(1);
    const spooled = readNdjson<Envelope & { payload: Record<string, unknown> }>(out.path);
    expect(
      spooled.map((e) => [e.event_id, e.seq, (e.sender as { id: string }).id, e.payload.kind]),
    ).toEqual([
      [out.event_ids[0], 0, "w-batch", "lesson"],
      [out.event_ids[1], 1, "w-batch", "decision"],
      [out.event_ids[2], 2, "w-batch", "fact"],
    ]);
    expect(spooled[1]?.payload).toMatchObject({ rationale: "CI runners", issue: "12" });
    expect(readFileSync(out.path, "utf8")).not.toContain("hunter2");
    expect(spooled[2]?.payload.sealed).toHaveLength(1);
    // The Director takes them all.
    const run = await runCycle(repo);
    expect(run.drained).toMatchObject({ accepted: 3, files: 1 });
  });

  it("reads stdin, and refuses a bad note naming the file, line and field, sending nothing", async () => {
    const repo = await initRepo();
    const ok = await wrk(repo, ["emit", "--from", "-"], { input: `${notes[0]}\n` });
    expectExit(ok, 0);
    expect(ok.stdout).toBe("spooled 1 note(s)\n");
    const cases: [string, string[], string][] = [
      [`${notes[0]}\n{"kind":"lessn","text":"x"}\n`, [], "stdin:2: kind: Invalid option"],
      [`${notes[0]}\n\n{"kind":"fact","txt":"x"}\n`, [], "stdin:3: txt: unknown field"],
      ['{"kind":"fact","text":"x","topics":"db"}\n', [], "stdin:1: topics: expected an array"],
      ['{"kind":"fact","text":"x","confidence":2}\n', [], "stdin:1: confidence: Too big"],
      ["[1,2]\n", [], "stdin:1: expected a JSON object"],
      ["\n\n", [], "stdin: no notes"],
      [`${notes[0]}\n`, ["--kind", "fact"], "--from takes the notes from -: drop --kind"],
    ];
    for (const [input, extra, message] of cases) {
      const r = await wrk(repo, ["emit", "--from", "-", ...extra], { input });
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain(message);
    }
    expect(spoolFiles(repo)).toHaveLength(1);
  });
});

describe.concurrent("budgets", () => {
  it("memory/st never holds more than st_max_files engrams; evicted files leave disk and catalog", async () => {
    const repo = await initRepo(
      tomlConfig({ memory: { buffer_keep_recent_events: 0, st_max_files: 2 } }),
    );
    let evictedSomething = false;
    for (let cycle = 0; cycle < 3; cycle++) {
      const env = { SOURCE_DATE_EPOCH: String(EPOCH + cycle * 60) };
      await ingest(
        repo,
        inputFile(
          `budget-${cycle}.ndjson`,
          ["alpha", "beta", "gamma"].map((topic) =>
            note("fact", `Cycle ${cycle} fact about ${topic}`, {
              eventId: `b-${cycle}-${topic}`,
              topics: [topic],
            }),
          ),
        ),
        env,
      );
      const r = await runCycle(repo, ["--force"], env);
      const files = engramFiles(repo, "st");
      expect(files.length, `cycle ${cycle}: ${files.join(", ")}`).toBeLessThanOrEqual(2);
      const catalog = readCatalogFile(repo.dir);
      const listed = catalog.entries
        .filter((e) => e.scope === "st")
        .map((e) => e.path)
        .sort();
      expect(listed).toEqual(files);
      for (const path of r.evicted) {
        evictedSomething = true;
        expect(files).not.toContain(path);
        expect(catalog.entries.map((e) => e.path)).not.toContain(path);
      }
      // Oldest first: what stays is from the newest batch.
      for (const e of catalog.entries)
        expect(e.path).toContain(r.written[0]?.split("/")[2] ?? "none");
      await expectVerified(repo);
    }
    expect(evictedSomething).toBe(true);
  });
});

describe.concurrent("promotion", () => {
  it("a lesson repeated in promote_repeat_min (3) ST engrams is promoted to an LT engram that supersedes them", async () => {
    // Dedup before create: the first engram states the lesson, the next two raise its evidence.
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    const text = "Always run the migrations before seeding the test database";
    for (let cycle = 0; cycle < 3; cycle++) {
      const env = {
        SOURCE_DATE_EPOCH: String(EPOCH + cycle * 3600),
        ENGRAM_WORKER_ID: `w-promo-${cycle}`,
      };
      jsonOf(
        await wrk(repo, ["emit", "--kind", "lesson", "--text", text, "--topic", "db", "--json"], {
          env,
        }),
      );
      const r = await runCycle(repo, ["--force"], env);
      expect(r.compacted_events, `cycle ${cycle}`).toBe(1);
      expect(engramFiles(repo, "lt"), `cycle ${cycle}`).toHaveLength(cycle < 2 ? 0 : 1);
    }
    const st = readEngrams(repo.dir, "st");
    const stating = st.filter((e) => e.engram.facts.some((f) => f.includes(text)));
    expect(stating).toHaveLength(1);
    const restating = st.filter((e) => Object.values(e.engram.evidence ?? {}).includes(1));
    expect(restating).toHaveLength(2);
    const carrying = [...stating, ...restating];
    const lt = readEngrams(repo.dir, "lt");
    expect(lt).toHaveLength(1);
    const promoted = lt[0]?.engram;
    expect(promoted?.facts.some((f) => f.includes(text))).toBe(true);
    expect([...(promoted?.supersedes ?? [])].sort()).toEqual(
      carrying.map((e) => e.engram.engram_id).sort(),
    );
    await expectVerified(repo);
  });
});

describe.concurrent("command line", () => {
  it("--help on every command exits 0 and prints its usage", async () => {
    const repo = dirs.repo();
    const calls: [typeof director, string[], string][] = [
      [director, ["--help"], "usage: director"],
      [worker, ["--help"], "usage: worker"],
      ...["init", "ingest", "run", "verify", "status"].map(
        (c) =>
          [director, [c, "--help"], `usage: director ${c}`] as [typeof director, string[], string],
      ),
      ...["emit", "recall", "check"].map(
        (c) => [worker, [c, "--help"], `usage: worker ${c}`] as [typeof director, string[], string],
      ),
    ];
    const results = await Promise.all(calls.map(([bin, args]) => bin(args, { cwd: repo.dir })));
    results.forEach((r, i) => {
      expectExit(r, 0);
      expect(r.stdout.startsWith(calls[i]?.[2] as string), describeResult(r)).toBe(true);
    });
    // --help reads no config and writes nothing.
    expect(listFiles(repo.dir, repo.dir, [".git"])).toEqual([]);
  });

  it("an unknown command or flag exits 2", async () => {
    const repo = dirs.repo();
    const [a, b, c] = await Promise.all([
      director(["frobnicate"], { cwd: repo.dir }),
      worker(["frobnicate"], { cwd: repo.dir }),
      director(["run", "--frobnicate"], { cwd: repo.dir }),
    ]);
    for (const r of [a, b]) {
      expectExit(r, 2);
      expect(r.stderr).toContain("unknown command 'frobnicate'");
    }
    expectExit(c, 2);
    expect(c.stderr).toContain("frobnicate");
  });

  it("a config with an unknown key exits 2 naming config/dev.toml, the line and the key", async () => {
    const repo = await initRepo();
    repo.writeConfig("[memory]\nst_max_files = 5\nbogus_key = 3\n");
    const results = await Promise.all([
      dir(repo, ["status"]),
      dir(repo, ["run"]),
      wrk(repo, ["check"]),
    ]);
    for (const r of results) {
      expectExit(r, 2);
      expect(r.stderr, describeResult(r)).toContain("config/dev.toml:3");
      expect(r.stderr).toContain("bogus_key");
    }
    // Nothing was written by the refused run.
    expect(listFiles(repo.path(".engram", "buffer"))).toEqual([]);
  });
});
