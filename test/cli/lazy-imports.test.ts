/**
 * Start-up is most of what an agent waits for on `worker emit`, `recall`, `check`, `session`
 * and `director status`: they must not load the GitHub, NATS or git libraries (nor zod, for
 * valid input), which only other commands use. The bins run
 * with a loader hook that records every module they load (test/support/import-trace.mjs).
 * The bins are the bundle (dist/bin): a file it loads stands for the modules esbuild put in
 * it (dist/bundle-meta.json), so the test names modules, not chunks.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  childEnv,
  DIRECTOR_BIN,
  ENGRAM_BIN,
  ROOT,
  WORKER_BIN,
} from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { waitUntil } from "../support/wait.js";

const TRACE = join(ROOT, "test", "support", "import-trace.mjs");
const HEAVY = /node_modules\/(@octokit|@nats-io|isomorphic-git|simple-git)\//;
/** zod: a valid config, catalog and worker envelope are checked without it. */
const ZOD = /node_modules\/zod\//;
/** The secret scanner and its rule tables: only a command that redacts needs them. */
const REDACTION = /\/core\/ingest\/(redact|rules\/[^/]+)\.js$/;

const dirs = new TempDirs();
let repo: TempRepo;
beforeAll(() => {
  assertBuilt();
  repo = dirs.repo();
  const init = spawnSync(process.execPath, [DIRECTOR_BIN, "init"], {
    cwd: repo.dir,
    env: childEnv(),
  });
  expect(init.status).toBe(0);
});
afterAll(() => dirs.cleanup());

/** Which modules (dist/src/...) each file of the bundle holds, as esbuild wrote them. */
function bundleInputs(): Map<string, string[]> {
  const meta = JSON.parse(readFileSync(join(ROOT, "dist", "bundle-meta.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  return new Map(
    Object.entries(meta.outputs).map(([file, out]) => [
      join(ROOT, file),
      Object.keys(out.inputs).map((input) => join(ROOT, input)),
    ]),
  );
}

/** The trace's lines, each file of the bundle replaced by the modules it holds. */
function modulesOf(lines: string[]): string[] {
  const inputs = bundleInputs();
  return lines.flatMap((line) => {
    const path = line.startsWith("file://") ? fileURLToPath(line) : line;
    return inputs.get(path) ?? [line];
  });
}

/** Runs a bin with the import trace; returns the lines of the trace (URLs and paths). */
function traceOf(bin: string, args: string[]): string[] {
  const trace = join(dirs.dir("engram-trace-"), "modules.txt");
  const r = spawnSync(process.execPath, ["--import", TRACE, bin, ...args], {
    cwd: repo.dir,
    env: childEnv({ ENGRAM_TEST_IMPORT_TRACE: trace }),
    encoding: "utf8",
  });
  expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  return readFileSync(trace, "utf8").split("\n").filter(Boolean);
}

/** Runs a bin with the import trace; returns the modules it loaded. */
function loadedBy(bin: string, args: string[]): string[] {
  return modulesOf(traceOf(bin, args));
}

/** A repository of its own, initialized, one decision note spooled; `run` runs a bin in it. */
function repoWithNote(text: string) {
  const own = dirs.repo();
  own.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  const run = (bin: string, args: string[]) =>
    spawnSync(process.execPath, [bin, ...args, "--repo", own.dir], {
      cwd: own.dir,
      env: childEnv(),
      encoding: "utf8",
    });
  expect(run(DIRECTOR_BIN, ["init"]).status).toBe(0);
  expect(run(WORKER_BIN, ["emit", "--kind", "decision", "--text", text]).status).toBe(0);
  return { own, run };
}

describe("command start-up loads only what the command uses", () => {
  it("worker emit (spool) loads no GitHub, NATS, git library or zod", () => {
    const loaded = loadedBy(WORKER_BIN, ["emit", "--kind", "fact", "--text", "lazy start"]);
    // The trace works: it saw the command's own modules.
    expect(loaded.some((m) => m.endsWith("/worker/emit.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
    // A note is redacted before it is spooled: proof the trace sees the scanner.
    expect(loaded.some((m) => REDACTION.test(m))).toBe(true);
    // The state folder's checks read the index and .gitignore: no git child is started.
    expect(loaded.filter((m) => m.endsWith("/git/git-child.js"))).toEqual([]);
  });

  it("worker recall, its signal spooled, loads no GitHub, NATS, git library or zod", () => {
    const loaded = loadedBy(WORKER_BIN, ["recall", "anything"]);
    expect(loaded.some((m) => m.endsWith("/worker/recall.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
  });

  it("a recall that finds nothing in a new repository loads no crypto, os or child process module", () => {
    const loaded = loadedBy(WORKER_BIN, ["recall", "nothing here"]);
    // The trace names Node's own modules: proof it sees them.
    expect(loaded).toContain("node:fs");
    const TAKEN_WHEN_USED = ["node:crypto", "node:os", "node:child_process"];
    expect(loaded.filter((m) => TAKEN_WHEN_USED.includes(m))).toEqual([]);
    // A check of that repository starts no git either: nothing names a commit yet.
    expect(loadedBy(WORKER_BIN, ["check", "--offline"])).not.toContain("node:child_process");
  });

  it("worker context, its index cached, loads no GitHub, NATS, git library or zod", () => {
    loadedBy(WORKER_BIN, ["context", "lazy start"]); // builds the context index
    const loaded = loadedBy(WORKER_BIN, ["context", "lazy start"]);
    expect(loaded.some((m) => m.endsWith("/graph/context-cache.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
  });

  it("worker context counts from the index's stored token counts: no tokenizer tables, no recall hits layer", () => {
    const { own, run } = repoWithNote("tokenizer tables load lazily");
    expect(run(DIRECTOR_BIN, ["run", "--force"]).status).toBe(0);
    const context = (topic: string) => ["context", topic, "--repo", own.dir];
    expect(loadedBy(WORKER_BIN, context("tokenizer tables")).length).toBeGreaterThan(0); // builds the index
    const TOKENIZER = /node_modules\/gpt-tokenizer\//;
    const warm = loadedBy(WORKER_BIN, context("tokenizer tables"));
    expect(warm.some((m) => m.endsWith("/graph/context-cache.js"))).toBe(true);
    // Context ranks with recall's ranking (rank.js over its recall index), not recall's hits.
    expect(warm.some((m) => m.endsWith("/core/recall/rank.js"))).toBe(true);
    const RECALL_HITS = /\/core\/recall\/recall\.js$/;
    expect(warm.filter((m) => TOKENIZER.test(m) || RECALL_HITS.test(m))).toEqual([]);
    // A topic word memory never held is counted by the tokenizer itself: proof the trace sees it.
    const unseen = loadedBy(WORKER_BIN, context("tokenizer zeppelins"));
    expect(unseen.some((m) => /gpt-tokenizer\/.*bpeRanks\/cl100k_base/.test(m))).toBe(true);
  });

  it("a bad note still loads zod, which names the field", () => {
    const trace = join(dirs.dir("engram-trace-"), "modules.txt");
    const r = spawnSync(
      process.execPath,
      ["--import", TRACE, WORKER_BIN, "emit", "--kind", "fact", "--text", "x", "--confidence", "2"],
      { cwd: repo.dir, env: childEnv({ ENGRAM_TEST_IMPORT_TRACE: trace }), encoding: "utf8" },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--confidence");
    expect(modulesOf(readFileSync(trace, "utf8").split("\n")).some((m) => ZOD.test(m))).toBe(true);
  });

  it("worker recall --session reads git objects through git itself, loading no git library", () => {
    const start = spawnSync(process.execPath, [WORKER_BIN, "session", "start", "--json"], {
      cwd: repo.dir,
      env: childEnv(),
      encoding: "utf8",
    });
    const id = (JSON.parse(start.stdout) as { session_id: string }).session_id;
    const loaded = loadedBy(WORKER_BIN, ["recall", "anything", "--no-signal", "--session", id]);
    expect(loaded.some((m) => m.endsWith("/sessions/recall.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it("worker recall loads the sync code only for a stated confidence, a store's client only to ask it", () => {
    const plain = loadedBy(WORKER_BIN, ["recall", "anything", "--no-signal"]);
    expect(plain.filter((m) => /\/sync\/|@notionhq|@modelcontextprotocol/.test(m))).toEqual([]);
    // No store is set up here: the hybrid path runs, and no client is loaded for nothing.
    const hybrid = loadedBy(WORKER_BIN, [
      "recall",
      "anything",
      "--confidence",
      "0.1",
      "--no-signal",
    ]);
    expect(hybrid.some((m) => m.endsWith("/sync/hybrid-recall.js"))).toBe(true);
    expect(
      hybrid.filter((m) => /node_modules\/(@notionhq|@modelcontextprotocol)\//.test(m)),
    ).toEqual([]);
    expect(hybrid.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it("the command tables load only argument parsing: --help loads no schema or library", () => {
    for (const bin of [WORKER_BIN, DIRECTOR_BIN]) {
      const loaded = loadedBy(bin, ["--help"]);
      expect(loaded.some((m) => m.endsWith("/cli/main.js"))).toBe(true);
      expect(loaded.filter((m) => /node_modules\//.test(m))).toEqual([]);
    }
  });

  it("the engram bin loads only the program it runs, and its table only argument parsing", () => {
    const worker = loadedBy(ENGRAM_BIN, ["worker", "--help"]);
    expect(worker.some((m) => m.endsWith("/cli/worker-commands.js"))).toBe(true);
    expect(worker.filter((m) => m.endsWith("/cli/director-commands.js"))).toEqual([]);
    expect(worker.filter((m) => /node_modules\//.test(m))).toEqual([]);
    const own = loadedBy(ENGRAM_BIN, ["--help"]);
    expect(own.filter((m) => /\/cli\/(worker|director)-commands\.js$/.test(m))).toEqual([]);
  });

  it("worker hook session-start reads memory through git itself: no git library, GitHub, NATS or zod", () => {
    const loaded = loadedBy(WORKER_BIN, ["hook", "session-start"]);
    expect(loaded.some((m) => m.endsWith("/worker/check.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
    // Nor the setup planners and the YAML parser (smol-toml reads config/dev.toml anyway).
    expect(loaded.filter((m) => /node_modules\/yaml\/|\/hosts\/plan\.js$/.test(m))).toEqual([]);
  });

  it("the trace sees a heavy library when a command does load one", () => {
    // worker sync reads git history in process (isomorphic-git): proof the test can fail.
    const loaded = loadedBy(WORKER_BIN, ["sync"]);
    expect(loaded.some((m) => /node_modules\/isomorphic-git\//.test(m))).toBe(true);
  });

  it("worker check reads drift through git itself: no git library, GitHub, NATS or zod", () => {
    const loaded = loadedBy(WORKER_BIN, ["check", "--offline"]);
    expect(loaded.some((m) => m.endsWith("/worker/check.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
  });

  it("worker session start, write and end load no git library, GitHub, NATS or zod", () => {
    const start = loadedBy(WORKER_BIN, ["session", "start", "--json"]);
    expect(start.some((m) => m.endsWith("/sessions/session.js"))).toBe(true);
    expect(start.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
    const started = spawnSync(process.execPath, [WORKER_BIN, "session", "start", "--json"], {
      cwd: repo.dir,
      env: childEnv(),
      encoding: "utf8",
    });
    const id = (JSON.parse(started.stdout) as { session_id: string }).session_id;
    const write = loadedBy(WORKER_BIN, [
      ...["session", "write", "--session", id, "--kind", "fact", "--text", "lazy"],
      ...["--confidence", "0.9"],
    ]);
    expect(write.some((m) => m.endsWith("/sessions/session.js"))).toBe(true);
    expect(write.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
    // Spooled (no bus given): only the spool's own code is loaded.
    const end = loadedBy(WORKER_BIN, ["session", "end", id, "--json"]);
    expect(end.some((m) => m.endsWith("/sessions/end.js"))).toBe(true);
    expect(end.filter((m) => HEAVY.test(m) || ZOD.test(m))).toEqual([]);
  });

  it("director sync run --hook loads no store client (it returns at once)", async () => {
    repo.writeConfig('[sync.graphiti]\nurl = "http://127.0.0.1:9/mcp/"\nretries = 0\n');
    const loaded = loadedBy(DIRECTOR_BIN, ["sync", "run", "--target", "graphiti", "--hook"]);
    expect(loaded.some((m) => m.endsWith("/sync/hook.js"))).toBe(true);
    expect(
      loaded.filter((m) => /node_modules\/(@modelcontextprotocol|@notionhq)\//.test(m)),
    ).toEqual([]);
    // The detached run it started ends by releasing the hook lock.
    const lock = join(repo.dir, ".engram", "sync", "graphiti", "hook.lock");
    await waitUntil(() => !existsSync(lock), "the detached sync run to release its hook lock");
  });

  it("director ingest of envelopes the quick check is sure of loads no zod; a doubtful one does", () => {
    const envelope = (n: number, payload: object) =>
      JSON.stringify({
        schema_version: "agentbus-envelope/v1",
        message_type: "memory_note.v1",
        sent_at: "2026-11-02T09:00:00.000Z",
        sender: { role: "worker", id: "worker-1" },
        seq: n,
        payload,
        event_id: `ev_lazy_${n}`,
      });
    const inbox = dirs.dir("engram-lazy-ingest-");
    const clean = join(inbox, "clean.ndjson");
    writeFileSync(clean, `${envelope(1, { kind: "fact", text: "zod stays unloaded" })}\n`);
    const loaded = loadedBy(DIRECTOR_BIN, ["ingest", clean, "--json"]);
    expect(loaded.some((m) => m.endsWith("/ingest/normalize-batch.js"))).toBe(true);
    expect(loaded.filter((m) => ZOD.test(m))).toEqual([]);
    // A confidence of the wrong type: the quick check is not sure, zod decides and names it.
    const doubtful = join(inbox, "doubtful.ndjson");
    writeFileSync(
      doubtful,
      `${envelope(2, { kind: "fact", text: "fine" })}\n${envelope(3, { kind: "fact", text: "x", confidence: "high" })}\n`,
    );
    const withZod = loadedBy(DIRECTOR_BIN, ["ingest", doubtful, "--json"]);
    expect(withZod.some((m) => ZOD.test(m))).toBe(true);
    const quarantine = readFileSync(join(repo.dir, ".engram", "quarantine.ndjson"), "utf8");
    const records = quarantine
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; detail: string });
    expect(records.filter((r) => r.line === 2).map((r) => r.detail.split(":")[0])).toEqual([
      "payload.confidence",
    ]);
  });

  it("director run with nothing to do loads no compaction engine, session code, secret scanner or zod", () => {
    const { own } = repoWithNote("idle runs stay light");
    const ENGINE = /\/(core\/compaction\/plan|director\/consolidate|director\/versions)\.js$/;
    // A cycle with work loads the engine: proof the trace sees it.
    const busy = loadedBy(DIRECTOR_BIN, ["run", "--force", "--repo", own.dir]);
    expect(busy.some((m) => ENGINE.test(m))).toBe(true);
    const idle = loadedBy(DIRECTOR_BIN, ["run", "--repo", own.dir]);
    expect(idle.some((m) => m.endsWith("/director/run.js"))).toBe(true);
    expect(
      idle.filter((m) => ENGINE.test(m) || HEAVY.test(m) || ZOD.test(m) || REDACTION.test(m)),
    ).toEqual([]);
  });

  it("director status loads no git library, GitHub, NATS, secret scanner or zod", () => {
    const loaded = loadedBy(DIRECTOR_BIN, ["status"]);
    expect(loaded.some((m) => m.endsWith("/director/status.js"))).toBe(true);
    expect(loaded.filter((m) => HEAVY.test(m) || ZOD.test(m) || REDACTION.test(m))).toEqual([]);
  });

  it("the frequent commands read a handful of the bundle's files, all CommonJS: the bin, the loader, the hot script (scripts/bundle-hot.ts)", () => {
    const BUNDLE_FILE = /\/dist\/bin\/[^/]+\.c?js$/;
    const filesOf = (bin: string, args: string[]) =>
      new Set(traceOf(bin, args).filter((line) => BUNDLE_FILE.test(line)));
    for (const [bin, args] of [
      [WORKER_BIN, ["emit", "--kind", "fact", "--text", "few files"]],
      [WORKER_BIN, ["recall", "few files"]],
      [WORKER_BIN, ["check", "--offline"]],
      [DIRECTOR_BIN, ["status"]],
    ] as const) {
      const files = filesOf(bin, [...args]);
      // The trace counts the bundle's files: proof it sees them (the script is read, not imported).
      expect([...files].some((file) => file.endsWith("/dist/bin/hot-load.cjs"))).toBe(true);
      // No ES module of the bundle: these commands start no loader of ES modules.
      expect(
        [...files].filter((file) => !file.endsWith(".cjs")),
        args.join(" "),
      ).toEqual([]);
      expect(files.size, `${args.join(" ")} loads ${[...files].join(", ")}`).toBeLessThanOrEqual(3);
    }
  });
});
