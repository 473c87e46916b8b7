/**
 * `npm run demo`: the whole engram cycle on a scratch git repository, through the real bins.
 * A Director and three workers work on two issues for three rounds; after each round the
 * Director compacts, promotes and rewrites the catalog and MEMORY.md. Then the memory is
 * shown, searched, verified, tampered with and verified again.
 *
 * Usage: node dist/scripts/demo.js [--dir DIR] [--keep | --clean] [--quiet]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const BINS = {
  director: fileURLToPath(new URL("../src/cli/director.js", import.meta.url)),
  worker: fileURLToPath(new URL("../src/cli/worker.js", import.meta.url)),
};
const WORKERS = ["worker-api", "worker-ui", "worker-tests"] as const;
type Worker = (typeof WORKERS)[number];
const GIT_ID = ["-c", "user.name=engram-demo", "-c", "user.email=demo@engram.invalid"];
const LESSON =
  "Run the integration tests with --runInBand: the shared Postgres fixture is not safe in parallel.";
// Built at run time so that no scanner mistakes the demo itself for a leak.
const FAKE_TOKEN = "ghp_" + "x".repeat(36);

const { values: opts } = parseArgs({
  options: {
    dir: { type: "string" },
    keep: { type: "boolean" },
    clean: { type: "boolean" },
    quiet: { type: "boolean" },
  },
});
const root = opts.dir ? resolve(opts.dir) : mkdtempSync(join(tmpdir(), "engram-demo-"));
const repo = join(root, "repo");
const bus = join(root, "bus");
// Receipt times must come from the clock here, and the seal key from the state folder.
const env: NodeJS.ProcessEnv = { ...process.env };
for (const name of ["SOURCE_DATE_EPOCH", "ENGRAM_SEAL_KEY", "ENGRAM_WORKER_ID"]) delete env[name];

const say = (text: string) => {
  if (!opts.quiet) process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
};
const section = (title: string) => say(`\n=== ${title} ${"=".repeat(Math.max(3, 74 - title.length))}`);

/** Runs a command; an exit code other than `expect` fails the demo with its output. */
function exec(cmd: string, args: readonly string[], expect = 0): string {
  const r = spawnSync(cmd, args, { cwd: repo, env, encoding: "utf8" });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== expect) {
    const shown = [cmd, ...args].map((a) => (a.length > 60 ? `${a.slice(0, 57)}...` : a)).join(" ");
    throw new Error(`${shown}\nexited ${r.status} (expected ${expect})\n${r.stdout}${r.stderr}`);
  }
  return r.stdout;
}
const director = (args: string[], expect = 0) =>
  exec(process.execPath, [BINS.director, ...args, "--repo", repo], expect);
const worker = (args: string[], expect = 0) =>
  exec(process.execPath, [BINS.worker, ...args, "--repo", repo], expect);
const git = (...args: string[]) => exec("git", [...GIT_ID, "-c", "commit.gpgsign=false", ...args]);

function note(who: Worker, kind: string, text: string, ...extra: string[]): void {
  worker(["emit", "--worker", who, "--run-id", "demo-run-1", "--kind", kind, "--text", text, ...extra]);
}

/** Agent-bus envelopes of one worker, one per line, with realistic sent_at stamps. */
class Bus {
  private lines: string[] = [];
  private seq = new Map<string, number>();
  constructor(private clock: number) {}
  send(who: Worker, type: string, payload: Record<string, unknown>, stepSeconds = 20): this {
    this.clock += stepSeconds * 1000;
    const seq = (this.seq.get(who) ?? 0) + 1;
    this.seq.set(who, seq);
    const envelope = {
      schema_version: "agentbus-envelope/v1",
      message_type: type,
      sent_at: new Date(this.clock).toISOString(),
      sender: { role: "worker", id: who, run_id: "demo-run-1" },
      seq,
      event_id: `ev_${who}_${this.clock}_${seq}`,
      payload,
    };
    this.lines.push(JSON.stringify(envelope));
    return this;
  }
  raw(line: string): this {
    this.lines.push(line);
    return this;
  }
  /** Writes the lines to a file and ingests it, as a transport would. */
  flush(name: string): string {
    mkdirSync(bus, { recursive: true });
    const file = join(bus, `${name}.ndjson`);
    writeFileSync(file, `${this.lines.join("\n")}\n`);
    this.lines = [];
    return director(["ingest", file]).trim();
  }
}

const ISSUES: Record<Worker, number> = { "worker-api": 41, "worker-ui": 42, "worker-tests": 41 };

/** Round `n`: telemetry, notes, a drain, the closing telemetry, a forced Director cycle. */
function playRound(n: number, clock: Bus): string {
  const main = git("rev-parse", "HEAD").trim();
  const seen = JSON.parse(readFileSync(join(repo, "memory/catalog.json"), "utf8")).hash as string;
  const stages = ["plan", "code", "test"];
  for (const who of WORKERS) {
    const issue = ISSUES[who];
    clock.send(who, "protocol_hello.v1", {
      protocol_version: "1",
      capabilities: ["memory_note.v1", "recall"],
      main_ancestor_sha: main,
      catalog_hash_seen: seen,
    });
    stages.forEach((stage, i) => {
      const progress = (i + 1) / 5;
      clock.send(who, "heartbeat.v1", { stage, issue, progress, main_ancestor_sha: main }, 30);
      clock.send(who, "task_progress.v1", {
        stage,
        issue,
        status: "completed",
        progress,
        duration_ms: (90 + 40 * i + 17 * n) * 1000,
      });
    });
  }
  if (n === 1) {
    clock.send("worker-ui", "worker_error.v1", {
      error_type: "TypeError",
      message: "Cannot read properties of undefined (reading 'expiresAt') in SessionBanner",
      retryable: false,
      issue: 42,
      stage: "test",
    });
    clock.raw(JSON.stringify({ schema_version: "agentbus-envelope/v1", message_type: "heartbeat.v1" }));
  }
  for (let attempt = 1; attempt <= (n === 1 ? 2 : 1); attempt++) {
    clock.send("worker-tests", "worker_error.v1", {
      error_type: "TimeoutError",
      message: "login rate-limit suite timed out after 30000 ms waiting for Postgres",
      retryable: true,
      issue: 41,
      stage: "test",
      attempt,
    });
  }
  const ingested = clock.flush(`round-${n}-work`);

  const lessonBy: Worker = WORKERS[n - 1] as Worker;
  note(lessonBy, "lesson", LESSON, "--topic", "testing", "--topic", "postgres", "--confidence", "0.9");
  if (n === 1) {
    note("worker-api", "decision", "Rate-limit /login with a token bucket per client IP", "--issue", "41",
      "--rationale", "A bucket is two numbers per client and survives restarts in Redis; sliding windows need a sorted set.",
      "--topic", "auth", "--link", "src/api/login.ts", "--confidence", "0.85", "--outcome", "success");
    note("worker-ui", "convention", "UI strings go through t(); no literal English in components.",
      "--topic", "i18n", "--link", "src/ui/i18n.ts");
    note("worker-ui", "question", "Should the expiry banner also show on the admin pages?", "--issue", "42");
  } else if (n === 2) {
    note("worker-tests", "decision", "Mock the clock with vi.useFakeTimers in session-expiry tests",
      "--issue", "42", "--rationale", "Real timers made the banner test take 61 s and flake on CI.",
      "--topic", "testing");
    note("worker-api", "incident",
      `A personal access token (${FAKE_TOKEN}) was pasted into a CI log; it was revoked and the log deleted.`,
      "--topic", "security", "--link", "PR#57");
  } else {
    note("worker-api", "fact", "Customer Acme's staging tenant is acme-7731; their SSO drops sessions after 8 h.",
      "--privacy", "sensitive", "--topic", "customer-acme");
    note("worker-ui", "fact", "The session banner reads expiresAt from /api/session, in seconds since the epoch.",
      "--issue", "42", "--link", "src/ui/SessionBanner.tsx", "--confidence", "0.95");
  }
  const drained = director(["run"]).split("\n")[1] ?? "";

  for (const who of WORKERS) {
    const issue = ISSUES[who];
    clock.send(who, "heartbeat.v1", { stage: "review", issue, progress: 0.9, main_ancestor_sha: main }, 30);
    clock.send(who, "task_progress.v1", { stage: "review", issue, status: "completed", progress: 1, duration_ms: 45_000 + n * 1000 });
    clock.send(who, "heartbeat.v1", { stage: "review", issue, progress: 1, main_ancestor_sha: main }, 30);
    clock.send(who, "heartbeat.v1", { stage: "idle", progress: 1, main_ancestor_sha: main }, 30);
  }
  const closing = clock.flush(`round-${n}-review`);
  const summary = director(["run", "--force"]);
  git("add", "-A");
  git("commit", "-q", "-m", `memory: round ${n}`);
  return `ingest work:    ${ingested}\nrun (drain):    ${drained}\ningest review:  ${closing}\ndirector run --force:\n${summary}`;
}

function tree(dir: string, prefix = ""): string[] {
  const names = readdirSync(dir).sort();
  return names.flatMap((name, i) => {
    const path = join(dir, name);
    const last = i === names.length - 1;
    const isDir = statSync(path).isDirectory();
    const line = `${prefix}${last ? "└── " : "├── "}${name}${isDir ? "/" : `  (${statSync(path).size} B)`}`;
    return isDir ? [line, ...tree(path, prefix + (last ? "    " : "│   "))] : [line];
  });
}

function main(): void {
  if (!existsSync(BINS.director)) throw new Error(`${BINS.director} is missing: run npm run build`);
  if (existsSync(repo) && readdirSync(repo).length > 0) throw new Error(`${repo} is not empty`);
  mkdirSync(repo, { recursive: true });

  section("1. A scratch repository and director init");
  git("-c", "init.defaultBranch=main", "init", "-q");
  writeFileSync(join(repo, "README.md"), "# acme-web\n\nA small web app, worked on by a swarm of agents.\n");
  git("add", "-A");
  git("commit", "-q", "-m", "initial commit");
  say(director(["init"]));
  writeFileSync(
    join(repo, "config/dev.toml"),
    `# Demo budgets: a small newest window, so every forced cycle compacts.
[memory]
buffer_max_bytes = 1_048_576
buffer_max_events = 500
buffer_keep_recent_events = 10
memory_md_max_items = 30
promote_repeat_min = 3

[agent_bus]
max_message_bytes = 16_384
`,
  );
  git("add", "-A");
  git("commit", "-q", "-m", "engram: init");
  say(`repository: ${repo}\nconfig/dev.toml: keep the newest 10 events, promote a fact seen in 3 engrams`);

  const clock = new Bus(Date.now() - 3 * 60 * 60 * 1000);
  for (let n = 1; n <= 3; n++) {
    section(`2.${n} Round ${n}: workers report, the Director runs`);
    say(playRound(n, clock));
  }

  section("3. director status");
  say(director(["status"]));
  section("4. The memory tree");
  say(["memory/", ...tree(join(repo, "memory"))].join("\n"));
  section("5. MEMORY.md (generated)");
  say(readFileSync(join(repo, "MEMORY.md"), "utf8"));

  const catalog = JSON.parse(readFileSync(join(repo, "memory/catalog.json"), "utf8")) as {
    entries: { path: string; scope: string }[];
  };
  const lt = catalog.entries.filter((e) => e.scope === "lt");
  const promoted = lt.find((e) => readFileSync(join(repo, e.path), "utf8").includes("--runInBand"));
  if (!promoted) throw new Error("the repeated lesson was not promoted to LT");
  section(`6. One engram: ${promoted.path}`);
  say(readFileSync(join(repo, promoted.path), "utf8"));

  section("7. Redaction and sealing");
  const all = catalog.entries.map((e) => readFileSync(join(repo, e.path), "utf8")).join("\n");
  if (all.includes(FAKE_TOKEN) || all.includes("acme-7731")) throw new Error("a secret reached memory/");
  const redacted = all.split("\n").find((l) => l.includes("[REDACTED:github-token]"));
  const sealed = all.split("\n").find((l) => l.includes('"alg": "A256GCM"'));
  say(`the token is in no file; the incident reads:\n  ${redacted?.trim()}`);
  say(`the sensitive note is sealed (AES-256-GCM, key in .engram/seal.key):\n  ${sealed?.trim()} ...`);

  section('8. worker recall "postgres integration tests"');
  say(worker(["recall", "postgres integration tests", "--worker", "worker-ui", "--limit", "3"]));

  section("9. director verify and worker check");
  say(director(["verify"]));
  say(worker(["check"]));

  section("10. Tamper detection: edit one fact by hand");
  const victim = catalog.entries.find((e) => e.scope === "st") as { path: string };
  const original = readFileSync(join(repo, victim.path), "utf8");
  const edited = JSON.parse(original) as { facts: string[] };
  edited.facts[0] = "Nobody needs to run the tests.";
  writeFileSync(join(repo, victim.path), `${JSON.stringify(edited, null, 2)}\n`);
  say(`edited facts[0] of ${victim.path}\n$ director verify   (exit 1)`);
  say(director(["verify"], 1));
  writeFileSync(join(repo, victim.path), original);
  say(`restored it\n$ director verify\n${director(["verify"]).trim()}`);

  if (opts.clean) {
    rmSync(root, { recursive: true, force: true });
    process.stdout.write("engram demo: ok (scratch repository removed)\n");
    return;
  }
  const cd = relative(process.cwd(), repo).startsWith("..") ? repo : relative(process.cwd(), repo);
  process.stdout.write(`
engram demo: ok. The scratch repository is kept at
  ${repo}
Try next:
  cd ${cd}
  git log --stat --oneline                 # memory changed once per round
  node ${BINS.director} status --json
  node ${BINS.worker} recall "token bucket" --json
  node ${BINS.worker} emit --worker me --kind lesson --text "..." && node ${BINS.director} run --force
  head -3 ${join(bus, "round-1-work.ndjson")}   # agent-bus envelopes as ingested
`);
}

try {
  main();
} catch (error) {
  process.stderr.write(`engram demo failed: ${(error as Error).message}\n(scratch files in ${root})\n`);
  process.exitCode = 1;
}
