/**
 * `npm run demo`: the whole engram cycle on a scratch git repository, through the built bins.
 * Three workers report on two issues for three rounds; after each round the Director compacts,
 * promotes and rewrites the catalog and MEMORY.md. Then the memory is shown, searched,
 * verified, tampered with and verified again.
 *
 * Usage: node dist/scripts/demo.js [--dir DIR] [--keep | --clean] [--quiet]
 * The scratch repository is kept (--keep, the default) unless --clean; --quiet prints only
 * the outcome. Exits 0 on success, 1 when any step does not behave as expected.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const BINS = {
  director: fileURLToPath(new URL("../src/cli/director.js", import.meta.url)),
  worker: fileURLToPath(new URL("../src/cli/worker.js", import.meta.url)),
};
const WORKERS = ["worker-api", "worker-ui", "worker-tests"] as const;
type Worker = (typeof WORKERS)[number];
const ISSUE: Record<Worker, number> = { "worker-api": 41, "worker-ui": 42, "worker-tests": 41 };
const LESSON =
  "Run the integration tests with --runInBand: the shared Postgres fixture is not safe in parallel.";
// Built at run time, so that no secret scanner mistakes this file for a leak; a real token's
// shape (a run of `x` is a placeholder, which the redactor keeps on purpose, as gitleaks does).
const FAKE_TOKEN = "ghp_" + ["Xq7vR2mB9kL4", "tW8nZ3cJ6hF1", "pD5sG0aYeUiO"].join("");

// [worker, kind, text, ...flags] for each round; every round one worker also repeats LESSON.
// biome-ignore format: a table reads better by hand
const NOTES: string[][][] = [
  [
    ["worker-api", "decision", "Rate-limit /login with a token bucket per client IP", "--issue", "41",
      "--rationale", "A bucket is two numbers per client and survives restarts in Redis; a sliding window needs a sorted set.",
      "--topic", "auth", "--link", "src/api/login.ts", "--confidence", "0.85", "--outcome", "success"],
    ["worker-ui", "convention", "UI strings go through t(); no literal English in components.",
      "--topic", "i18n", "--link", "src/ui/i18n.ts"],
    ["worker-ui", "question", "Should the expiry banner also show on the admin pages?", "--issue", "42"],
  ],
  [
    ["worker-tests", "decision", "Mock the clock with vi.useFakeTimers in session-expiry tests", "--issue",
      "42", "--rationale", "Real timers made the banner test take 61 s and flake on CI.", "--topic", "testing"],
    ["worker-api", "incident", `A personal access token (${FAKE_TOKEN}) was pasted into a CI log; it was revoked and the log deleted.`,
      "--topic", "security", "--link", "PR#57"],
  ],
  [
    ["worker-api", "fact", "Customer Acme's staging tenant is acme-7731; their SSO drops sessions after 8 h.",
      "--privacy", "sensitive", "--topic", "customer-acme"],
    ["worker-ui", "fact", "The session banner reads expiresAt from /api/session, in seconds since the epoch.",
      "--issue", "42", "--link", "src/ui/SessionBanner.tsx", "--confidence", "0.95"],
  ],
];

const flag = { type: "boolean" } as const;
const options = { dir: { type: "string" }, keep: flag, clean: flag, quiet: flag } as const;
const opts = (() => {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    process.stderr.write(
      `demo: ${(error as Error).message}\nusage: demo [--dir DIR] [--keep | --clean] [--quiet]\n`,
    );
    process.exit(2);
  }
})();
const root = opts.dir ? resolve(opts.dir) : fs.mkdtempSync(join(tmpdir(), "engram-demo-"));
const repo = join(root, "repo");
const busDir = join(root, "bus");
// Receipt times come from the clock, the seal key from the scratch state folder.
const env: NodeJS.ProcessEnv = { ...process.env };
for (const name of ["SOURCE_DATE_EPOCH", "ENGRAM_SEAL_KEY", "ENGRAM_WORKER_ID"]) delete env[name];

const say = (text: string) => {
  if (!opts.quiet) process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
};
const section = (title: string) =>
  say(`\n=== ${title} ${"=".repeat(Math.max(3, 74 - title.length))}`);

/** Runs a command in the scratch repo; an exit code other than `expect` fails the demo. */
function exec(cmd: string, args: readonly string[], expect = 0): string {
  const r = spawnSync(cmd, args, { cwd: repo, env, encoding: "utf8" });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== expect) {
    const what = `${cmd} ${args.join(" ")}`;
    throw new Error(`${what}\nexited ${r.status} (expected ${expect})\n${r.stdout}${r.stderr}`);
  }
  return r.stdout;
}
const director = (args: string[], expect = 0) =>
  exec(process.execPath, [BINS.director, ...args, "--repo", repo], expect);
const worker = (args: string[], expect = 0) =>
  exec(process.execPath, [BINS.worker, ...args, "--repo", repo], expect);
// Never rely on a global git identity, signing setup or default branch.
const GIT_CONFIG = ["user.name=engram-demo", "user.email=demo@engram.invalid"]
  .concat(["commit.gpgsign=false", "init.defaultBranch=main"])
  .flatMap((setting) => ["-c", setting]);
const git = (...args: string[]) => exec("git", [...GIT_CONFIG, ...args]);
const commit = (message: string) => [git("add", "-A"), git("commit", "-q", "-m", message)];

/** Agent-bus envelopes written to an NDJSON file, as a transport would deliver them. */
let clock = Date.now() - 3 * 60 * 60 * 1000;
let lines: string[] = [];
const seqs = new Map<string, number>();
function send(who: Worker, type: string, payload: Record<string, unknown>, seconds = 20): void {
  clock += seconds * 1000;
  const seq = (seqs.get(who) ?? 0) + 1;
  seqs.set(who, seq);
  const sender = { role: "worker", id: who, run_id: "demo-run-1" };
  const sent_at = new Date(clock).toISOString();
  const envelope = { schema_version: "agentbus-envelope/v1", message_type: type, sent_at, sender };
  lines.push(JSON.stringify({ ...envelope, seq, event_id: `ev_${who}_${seq}`, payload }));
}
function ingest(name: string): string {
  fs.mkdirSync(busDir, { recursive: true });
  const file = join(busDir, `${name}.ndjson`);
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  lines = [];
  return director(["ingest", file]).trim();
}

let mainSha = "";
const beat = (who: Worker, stage: string | undefined, progress: number) =>
  send(who, "heartbeat.v1", { stage, issue: ISSUE[who], progress, main_ancestor_sha: mainSha }, 30);
const done = (who: Worker, stage: string, progress: number, seconds: number) => {
  const payload = { stage, issue: ISSUE[who], status: "completed", progress };
  send(who, "task_progress.v1", { ...payload, duration_ms: seconds * 1000 });
};

/** Round `n`: work telemetry, notes, a plain run (drains the spool), review telemetry, a forced run. */
function playRound(n: number): string {
  mainSha = git("rev-parse", "HEAD").trim();
  const seen = JSON.parse(fs.readFileSync(join(repo, "memory/catalog.json"), "utf8")).hash;
  for (const who of WORKERS) {
    const drift = { main_ancestor_sha: mainSha, catalog_hash_seen: seen };
    send(who, "protocol_hello.v1", { protocol_version: "1", ...drift });
    ["plan", "code", "test"].forEach((stage, i) => {
      beat(who, stage, (i + 1) / 5);
      done(who, stage, (i + 1) / 5, 90 + 40 * i + 17 * n);
    });
  }
  const timeout = { error_type: "TimeoutError", retryable: true, issue: 41, stage: "test" };
  const message = "login rate-limit suite timed out after 30000 ms waiting for Postgres";
  for (let attempt = 1; attempt <= (n === 1 ? 2 : 1); attempt++) {
    send("worker-tests", "worker_error.v1", { ...timeout, message, attempt });
  }
  if (n === 1) {
    const typeError = { error_type: "TypeError", retryable: false, issue: 42 };
    const where = "Cannot read properties of undefined (reading 'expiresAt') in SessionBanner";
    send("worker-ui", "worker_error.v1", { ...typeError, message: where });
    // Deliberately malformed: it goes to the quarantine with its reason, never silently away.
    lines.push('{"schema_version":"agentbus-envelope/v1","message_type":"heartbeat.v1"}');
  }
  const ingested = ingest(`round-${n}-work`);

  const lesson = [WORKERS[n - 1] as string, "lesson", LESSON, "--topic", "testing"];
  for (const [who, kind, text, ...flags] of [lesson, ...(NOTES[n - 1] ?? [])]) {
    const id = ["--worker", who as string, "--run-id", "demo-run-1"];
    worker(["emit", ...id, "--kind", kind as string, "--text", text as string, ...flags]);
  }
  const drained = director(["run"]).split("\n")[1];

  for (const who of WORKERS) {
    beat(who, "review", 0.9);
    done(who, "review", 1, 45 + n);
    beat(who, "review", 1);
    beat(who, undefined, 1);
  }
  const reviewed = ingest(`round-${n}-review`);
  const summary = director(["run", "--force"]);
  commit(`memory: round ${n}`);
  return `$ director ingest (work)     ${ingested}\n$ director run               ${drained}
$ director ingest (review)   ${reviewed}\n$ director run --force\n${summary}`;
}

function tree(dir: string, prefix = ""): string[] {
  const names = fs.readdirSync(dir).sort();
  return names.flatMap((name, i) => {
    const path = join(dir, name);
    const [branch, indent] = i === names.length - 1 ? ["└── ", "    "] : ["├── ", "│   "];
    if (fs.statSync(path).isDirectory())
      return [`${prefix}${branch}${name}/`, ...tree(path, prefix + indent)];
    return [`${prefix}${branch}${name}  (${fs.statSync(path).size} B)`];
  });
}

type Entry = { path: string; scope: string };
const readRepo = (path: string) => fs.readFileSync(join(repo, path), "utf8");

function main(): void {
  if (!fs.existsSync(BINS.director)) throw new Error(`${BINS.director} is missing: npm run build`);
  if (fs.existsSync(repo) && fs.readdirSync(repo).length > 0)
    throw new Error(`${repo} is not empty`);
  fs.mkdirSync(repo, { recursive: true });

  section("1. A scratch repository, director init");
  git("init", "-q");
  fs.writeFileSync(join(repo, "README.md"), "# acme-web\n\nA web app built by agents.\n");
  commit("initial commit");
  say(director(["init"]));
  const config = `# Demo budgets: a small newest window, so that every forced cycle compacts.
[memory]\nbuffer_max_bytes = 1_048_576\nbuffer_max_events = 500\nbuffer_keep_recent_events = 10
memory_md_max_items = 30\npromote_repeat_min = 3\n\n[agent_bus]\nmax_message_bytes = 16_384\n`;
  fs.writeFileSync(join(repo, "config/dev.toml"), config);
  commit("engram: init");
  say(`repository: ${repo}\nconfig/dev.toml:\n${config}`);

  for (let n = 1; n <= 3; n++) {
    section(`2.${n} Round ${n}: the workers report, the Director runs`);
    say(playRound(n));
  }

  section("3. director status (and the quarantined line)");
  say(director(["status"]));
  say(fs.readFileSync(join(repo, ".engram/quarantine.ndjson"), "utf8"));
  section("4. The memory tree");
  say(["memory/", ...tree(join(repo, "memory"))].join("\n"));
  section("5. MEMORY.md, generated");
  say(readRepo("MEMORY.md"));

  const { entries } = JSON.parse(readRepo("memory/catalog.json")) as { entries: Entry[] };
  const lt = entries.filter((e) => e.scope === "lt");
  const promoted = lt.find((e) => readRepo(e.path).includes("--runInBand"));
  if (!promoted) throw new Error("the lesson repeated in three rounds was not promoted to LT");
  section(`6. The promoted lesson: ${promoted.path}`);
  say(readRepo(promoted.path));

  section("7. Redaction and sealing");
  const texts = entries.map((e) => readRepo(e.path));
  const leaked = texts.some((t) => t.includes(FAKE_TOKEN) || t.includes("acme-7731"));
  if (leaked) throw new Error("a secret reached memory/");
  const incident = texts.flatMap((t) => t.split("\n")).find((l) => l.includes("[REDACTED:"));
  const sensitive = entries.find((e) => readRepo(e.path).includes('"privacy": "sensitive"'));
  if (!incident || !sensitive) throw new Error("no redacted or sealed note in memory/");
  const sealed = (JSON.parse(readRepo(sensitive.path)) as { sealed: unknown[] }).sealed;
  say(`The token is in no file; the incident now reads\n  ${incident.trim()}`);
  say(`The sensitive note is sealed (AES-256-GCM, key in .engram/seal.key), in ${sensitive.path}:`);
  say(`  "sealed": ${JSON.stringify(sealed)}`);

  section('8. worker recall "postgres integration tests"');
  say(worker(["recall", "postgres integration tests", "--worker", "worker-ui", "--limit", "3"]));

  section("9. director verify, worker check");
  say(`$ director verify\n${director(["verify"])}$ worker check\n${worker(["check"])}`);

  section("10. Tamper detection: one fact edited by hand");
  const victim = entries.find((e) => e.scope === "st") as Entry;
  const original = readRepo(victim.path);
  const edited = JSON.parse(original) as { facts: string[] };
  edited.facts[0] = "Nobody needs to run the tests.";
  fs.writeFileSync(join(repo, victim.path), `${JSON.stringify(edited, null, 2)}\n`);
  say(`edited facts[0] of ${victim.path}\n$ director verify      # exits 1`);
  say(director(["verify"], 1));
  fs.writeFileSync(join(repo, victim.path), original);
  say(`restored the file\n$ director verify\n${director(["verify"]).trim()}`);

  if (opts.clean) {
    fs.rmSync(root, { recursive: true, force: true });
    process.stdout.write("\nengram demo: ok (scratch repository removed)\n");
    return;
  }
  const [directorBin, workerBin] = [shellWord(BINS.director), shellWord(BINS.worker)];
  process.stdout.write(`
engram demo: ok. The scratch repository is kept at
  ${repo}
Try next (the envelopes it ingested are in ${busDir}):
  cd ${shellWord(repo)}
  git log --stat --oneline                 # one commit of memory changes per round
  node ${directorBin} status --json
  node ${workerBin} recall "token bucket"
  node ${workerBin} emit --worker me --kind lesson --text "What you learned"
  node ${directorBin} run --flush && git diff --stat   # --flush: the newest events too
  node ${workerBin} recall "what you learned"
`);
}

/** A path as one word for a POSIX shell: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

try {
  main();
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`engram demo failed: ${message}\n(scratch files: ${root})\n`);
  process.exitCode = 1;
}
