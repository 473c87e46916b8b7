import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

/** `dist/bench`: where the compiled bench modules live. */
export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
/** `dist/`: the compiled tree (`dist/bin/*.js`, bundled from it, are the real command lines). */
export const DIST_DIR = join(BENCH_DIR, "..");
/** The bundled bins, as users run them (scripts/bundle.ts). */
export const DIRECTOR_CLI = join(DIST_DIR, "bin", "director.cjs");
export const WORKER_CLI = join(DIST_DIR, "bin", "worker.cjs");
export const STEP_SCRIPT = join(BENCH_DIR, "step.js");

const started = performance.now();

/** Progress goes to stderr; stdout carries only the final JSON document. */
export function log(message: string): void {
  const at = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${at}s] ${message}\n`);
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `engram-bench-${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Nearest-rank percentile of unsorted samples. */
/** What every agent-bus transport scenario reports against the shared target. */
export interface TransportFigures {
  events: number;
  writers: number;
  events_per_s: number;
  p50_ms: number;
  p99_ms: number;
  target_events_per_s: 20000;
  pass: boolean;
}

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => a + b, 0) / samples.length;
}

/** Rounds for the report: figures keep 3 significant decimals at most. */
export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function mb(bytes: number): number {
  return round(bytes / (1024 * 1024), 1);
}

export function maxRssMb(): number {
  // resourceUsage().maxRSS is in KiB.
  return round(process.resourceUsage().maxRSS / 1024, 1);
}

export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect) collect();
}

export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit, process start included. */
  ms: number;
}

/**
 * Runs `node args...` and measures it end to end. stderr is captured (and echoed when
 * `echoStderr`), stdout is returned whole.
 */
export function runNode(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; echoStderr?: boolean } = {},
): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      err.push(chunk);
      if (options.echoStderr) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: performance.now() - t0,
      });
    });
  });
}

/** Runs a bench step in a child of its own (so its peak memory is its own) and parses its JSON. */
export async function runStep<T>(step: string, args: readonly string[]): Promise<T> {
  const run = await runNode(["--expose-gc", STEP_SCRIPT, step, ...args], { echoStderr: true });
  if (run.code !== 0) {
    throw new Error(`bench step ${step} exited with ${run.code}: ${run.stderr.slice(-2000)}`);
  }
  return JSON.parse(run.stdout) as T;
}

/** Runs a real command line (`dist/bin/*.js`) and parses its `--json` output. */
export async function runCli<T>(
  cli: string,
  args: readonly string[],
): Promise<{ ms: number; json: T }> {
  const run = await runNode([cli, ...args]);
  if (run.code !== 0) {
    throw new Error(
      `${cli} ${args.join(" ")} exited with ${run.code}: ${run.stderr.slice(-2000)}${run.stdout.slice(-500)}`,
    );
  }
  return { ms: run.ms, json: JSON.parse(run.stdout) as T };
}

/** Engram files below a memory folder (every tier, every batch). */
export function countEngrams(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.startsWith("engram_")) n++;
  }
  return n;
}
