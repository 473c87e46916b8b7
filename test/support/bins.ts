import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root: this file is test/support/bins.ts, or dist/test/support/bins.js when the
 * bench uses the local GitHub server.
 */
export const ROOT = packageRoot(fileURLToPath(new URL(".", import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "src", "cli"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package root above ${from}`);
  }
}
/** The bins as users run them: bundled by `npm run build` (scripts/bundle.ts). */
export const BUNDLE_DIR = join(ROOT, "dist", "bin");
export const DIRECTOR_BIN = join(BUNDLE_DIR, "director.cjs");
export const WORKER_BIN = join(BUNDLE_DIR, "worker.cjs");
export const ENGRAM_BIN = join(BUNDLE_DIR, "engram.js");

/** A fixed git identity: tests never rely on the global one. */
export const GIT_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: "engram tests",
  GIT_AUTHOR_EMAIL: "tests@engram.invalid",
  GIT_COMMITTER_NAME: "engram tests",
  GIT_COMMITTER_EMAIL: "tests@engram.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** Environment variables the bins read: removed from the inherited environment. */
const SCRUBBED = [
  "SOURCE_DATE_EPOCH",
  "ENGRAM_SEAL_KEY",
  "ENGRAM_WORKER_ID",
  "ENGRAM_BUS",
  "ENGRAM_NATS_USER",
  "ENGRAM_NATS_PASSWORD",
  "ENGRAM_NATS_TOKEN",
  "ENGRAM_NATS_CREDS",
  "GITHUB_RUN_ID",
  "TZ",
  "NODE_OPTIONS",
];

/** Throws a readable error when the bins were not built (`npm test` builds them first). */
export function assertBuilt(): void {
  for (const bin of [DIRECTOR_BIN, WORKER_BIN]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` first`);
  }
}

export type Env = Record<string, string | undefined>;

/**
 * The stand-in servers listen on 127.0.0.1 and the test repositories' configs name them, as
 * a user's config names their own servers: the user allows the host in the environment
 * (docs/security.md). Attack tests remove this (`ENGRAM_ALLOW_HOSTS: undefined`).
 */
export const STAND_IN_HOSTS: Record<string, string> = {
  ENGRAM_ALLOW_HOSTS: "http://127.0.0.1:*,tcp://127.0.0.1:*,nats://127.0.0.1:*",
};

/** The environment of a child: the inherited one, scrubbed, plus the git identity and `extra`. */
export function childEnv(extra: Env = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of SCRUBBED) delete env[key];
  Object.assign(env, GIT_IDENTITY, STAND_IN_HOSTS);
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export interface BinResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

export interface BinOptions {
  cwd: string;
  env?: Env;
  /** Written to stdin, which is then closed; without it stdin is empty. */
  input?: string;
  /**
   * Kills the child (SIGKILL) after this long, or after `CHILD_SAFETY_MS` if that is longer:
   * a safety net against a hung child, not a test device (a loaded machine is slow, not hung).
   */
  timeoutMs?: number;
}

export interface Spawned {
  child: ChildProcess;
  /** Resolves when the child has exited and its output is complete. */
  done: Promise<BinResult>;
  /** Wall-clock time of the spawn (Date.now()). */
  startedAt: number;
}

/** Starts a bin with `node`; the caller may kill it. */
export function spawnBin(bin: string, args: readonly string[], options: BinOptions): Spawned {
  const startedAt = Date.now();
  const child = spawn(process.execPath, [...REPORT_FLAGS(), bin, ...args], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.on("data", (d: string) => {
    stderr += d;
  });
  // A child killed before it reads stdin makes writes fail with EPIPE: not a test failure.
  child.stdin?.on("error", () => {});
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  let diagnosis = "";
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(
          () =>
            diagnoseAndKill(child).then((d) => {
              diagnosis = d;
            }),
          Math.max(options.timeoutMs, CHILD_SAFETY_MS),
        );
  const done = new Promise<BinResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr: stderr + diagnosis, ms: Date.now() - startedAt });
    });
  });
  return { child, done, startedAt };
}

let reportDir: string | undefined;

/** Node writes a diagnostic report (its JavaScript stack, its open handles) on SIGUSR2. */
function REPORT_FLAGS(): string[] {
  reportDir ??= mkdtempSync(join(tmpdir(), "engram-hung-"));
  return ["--report-on-signal", "--report-signal=SIGUSR2", `--report-directory=${reportDir}`];
}

/**
 * A child past its safety net: asks it where it is (a diagnostic report; the kernel's wait
 * channel when it is stuck outside JavaScript), then kills it. The answer goes to its stderr,
 * so that a hang seen once on a loaded machine says what it waited for.
 */
export async function diagnoseAndKill(child: ChildProcess, graceMs = 3000): Promise<string> {
  const pid = child.pid;
  child.kill("SIGUSR2");
  await new Promise((resolve) => setTimeout(resolve, graceMs));
  let text = `\n[hung: killed by the test's safety net (pid ${pid})]`;
  try {
    const wchan = readFileSync(`/proc/${pid}/wchan`, "utf8");
    text += `\n[kernel wait channel: ${wchan === "0" || wchan === "" ? "none, running on a CPU (a loop, not a wait)" : wchan}]`;
  } catch {}
  const tree = pid === undefined ? { text: "", pids: [] } : processTree(pid);
  text += tree.text;
  const file = readdirSync(reportDir ?? ".").find((f) => f.includes(`.${pid}.`));
  if (file !== undefined && reportDir !== undefined) {
    try {
      const report = JSON.parse(readFileSync(join(reportDir, file), "utf8")) as {
        javascriptStack?: { message?: string; stack?: string[] };
        libuv?: { type: string; is_active?: boolean }[];
      };
      const stack = report.javascriptStack?.stack?.slice(0, 25).join("\n") ?? "";
      const handles = (report.libuv ?? []).filter((h) => h.is_active).map((h) => h.type);
      text += `\n[JavaScript stack: ${report.javascriptStack?.message ?? ""}\n${stack}]`;
      text += `\n[active handles: ${handles.join(", ")}]`;
    } catch {}
  } else {
    text += "\n[no diagnostic report: the signal was not taken (a busy loop or a blocking call)]";
  }
  child.kill("SIGKILL");
  // Its own children (a git it waited for) would outlive it, orphaned: they go too.
  for (const descendant of tree.pids) {
    try {
      process.kill(descendant, "SIGKILL");
    } catch {}
  }
  return text;
}

/**
 * The hung child's state (R running, S waiting, D in the kernel's I/O, T stopped by a
 * signal) and those of its descendants (a git it waits for), each with its wait channel and
 * command line: what the child was waiting for, when it waited on another process.
 */
function processTree(root: number): { text: string; pids: number[] } {
  const lines: string[] = [];
  const pids: number[] = [];
  const visit = (pid: number, depth: number): void => {
    let state = "?";
    let wchan = "?";
    let command = "?";
    try {
      // The state follows the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "?";
      wchan = readFileSync(`/proc/${pid}/wchan`, "utf8") || "0";
      command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      return;
    }
    lines.push(`${"  ".repeat(depth)}${pid} ${state} ${wchan} ${command.slice(0, 200)}`);
    if (depth > 0) pids.push(pid);
    if (depth >= 4) return;
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
    } catch {}
    for (const child of children) if (child !== "") visit(Number(child), depth + 1);
  };
  visit(root, 0);
  const text =
    lines.length > 0
      ? `\n[processes (pid, state, wait channel, command):\n${lines.join("\n")}]`
      : "";
  return { text, pids };
}

/**
 * The shortest life a child's safety net allows: above the waits' deadline
 * (test/support/wait.ts), below the integration tests' timeout (vitest.config.ts), so a hung
 * child fails its test with its own output. A bin that takes 2 s on a quiet machine takes
 * 10 s on one five times slower; 30 s nets killed such bins on busy machines.
 */
export const CHILD_SAFETY_MS = 270_000;

export function runBin(
  bin: string,
  args: readonly string[],
  options: BinOptions,
): Promise<BinResult> {
  return spawnBin(bin, args, { timeoutMs: CHILD_SAFETY_MS, ...options }).done;
}

export function director(args: readonly string[], options: BinOptions): Promise<BinResult> {
  return runBin(DIRECTOR_BIN, args, options);
}

export function worker(args: readonly string[], options: BinOptions): Promise<BinResult> {
  return runBin(WORKER_BIN, args, options);
}

/** What a command printed, for assertion messages. */
export function describeResult(r: BinResult): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

/** The result of a command that must succeed; throws with its output otherwise. */
export function succeeded(r: BinResult): BinResult {
  if (r.code !== 0) throw new Error(`command failed: ${describeResult(r)}`);
  return r;
}

/** The JSON a successful `--json` command printed; throws with the output otherwise. */
export function jsonOf<T>(r: BinResult): T {
  if (r.code !== 0) throw new Error(`command failed: ${describeResult(r)}`);
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON: ${describeResult(r)}`);
  }
}

/** Runs the built director (checking first that it was built). */
export function runDirector(args: readonly string[], options: BinOptions): Promise<BinResult> {
  assertBuilt();
  return runBin(DIRECTOR_BIN, args, options);
}
