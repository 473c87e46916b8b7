import { spawn } from "node:child_process";
import { expect } from "vitest";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  diagnoseAndKill,
  director,
  ENGRAM_BIN,
  GIT_IDENTITY,
  runBin,
  worker,
} from "./bins.js";
import { type HostLookup, hostsInstallCommand } from "./hosts.js";
import { git, type TempDirs, type TempRepo } from "./repo.js";

/** The proxy variables that send every call a host makes beyond loopback to the recording proxy. */
export function proxiedThrough(proxyUrl: string): Record<string, string> {
  return { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl, NO_PROXY: "127.0.0.1" };
}

/**
 * A real-host test's start: a missing host fails it (the describe skips it unless CI is set),
 * the bins must be built, and the stand-ins (model API, proxy) start.
 */
export async function startForHost(
  host: HostLookup,
  standIns: readonly { start(): Promise<unknown> }[],
): Promise<void> {
  if ("missing" in host)
    throw new Error(`${host.missing}, and CI is set: ${hostsInstallCommand()}`);
  assertBuilt();
  await Promise.all(standIns.map((s) => s.start()));
}

/** A real host's safety net: far beyond a run's few seconds, below the test's timeout. */
const HOST_SAFETY_MS = 180_000;

/**
 * Runs a real host (`argv` from findHost, then `args`) in `cwd` with exactly `env`: an
 * environment built from nothing (no engram on PATH, no user's keys), plus the git identity.
 * Resolves on exit; a host still running after the safety net is diagnosed and killed.
 */
export function runHost(
  argv: readonly string[],
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<BinResult> {
  const startedAt = Date.now();
  const [command, ...prefix] = argv;
  const child = spawn(command as string, [...prefix, ...args], {
    cwd,
    env: { PATH: "/usr/bin:/bin", ...GIT_IDENTITY, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => {
    void diagnoseAndKill(child).then((d) => {
      stderr += d;
    });
  }, HOST_SAFETY_MS);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - startedAt });
    });
  });
}

/**
 * A repository whose memory holds `decision` (init, the note emitted, `director run --flush`,
 * all committed), then `worker setup HOST` in it with `env` (its HOME, CODEX_HOME).
 */
export async function memoryRepoSetUp(
  dirs: TempDirs,
  host: string,
  decision: string,
  env: Record<string, string>,
): Promise<TempRepo> {
  const repo = dirs.repo(`engram-${host}-`);
  const clock = { SOURCE_DATE_EPOCH: "1790000000" };
  expect((await director(["init"], { cwd: repo.dir, env: clock })).code).toBe(0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: init"]);
  const emit = ["emit", "--kind", "decision", "--text", decision, "--topic", "schema"];
  expect((await worker(emit, { cwd: repo.dir, env: clock })).code).toBe(0);
  expect((await director(["run", "--flush"], { cwd: repo.dir, env: clock })).code).toBe(0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: memory"]);
  const setup = await runBin(ENGRAM_BIN, ["worker", "setup", host], { cwd: repo.dir, env });
  expect(setup.code, describeResult(setup)).toBe(0);
  return repo;
}
