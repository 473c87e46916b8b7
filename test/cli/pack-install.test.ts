/**
 * The package as a consumer meets it: `npm pack`, then `npm install <tarball>` into a fresh
 * project. The install prints no warning (no EBADENGINE, no deprecation, no script notice),
 * runs no build step, and every package it brings admits every Node line `engines` claims.
 * `overrides` apply only to the project that declares them, never to its consumers: the
 * pins in package.json are what a consumer gets (README.md, "Node versions and pinned
 * dependencies"). The install prefers the local npm cache and asks the registry only for what
 * the cache lacks. .ci/run runs this file on Node 22 and 24 as well.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, ROOT } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

interface Run {
  code: number | null;
  output: string;
}

/** npm settings a parent `npm run -s test` passes down (loglevel=silent would hide warnings). */
const NPM_KEPT = new Set(["cache", "registry", "userconfig", "proxy", "https_proxy", "noproxy"]);

function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const npmKey = /^npm_config_(.+)$/i.exec(key)?.[1]?.toLowerCase();
    if (npmKey === undefined || NPM_KEPT.has(npmKey)) env[key] = value;
  }
  return {
    ...env,
    npm_config_loglevel: "warn",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
}

/** Runs a command to its exit, stdout and stderr interleaved as a user sees them. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const take = (d: string) => {
      output += d;
    };
    child.stdout.setEncoding("utf8").on("data", take);
    child.stderr.setEncoding("utf8").on("data", take);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

function npm(args: readonly string[], cwd: string): Promise<Run> {
  return run("npm", args, cwd, npmEnv());
}

function node(args: readonly string[], cwd: string): Promise<Run> {
  return run(process.execPath, args, cwd);
}

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string } | string[];
  scripts?: Record<string, string>;
  overrides?: unknown;
}

/** npm's own engine check: prereleases count (npm-install-checks). */
function admits(range: string, version: string): boolean {
  return semver.satisfies(version, range, { includePrerelease: true });
}

describe("the packed package installed into a fresh project", () => {
  const dirs = new TempDirs();
  let consumer = "";
  let install: Run = { code: null, output: "" };
  let packed: Manifest = {};

  // Packing and installing take a few seconds to a few minutes on a loaded machine; the
  // hook waits for npm's exit, and this timeout only stops a hung npm.
  beforeAll(async () => {
    assertBuilt();
    const out = dirs.dir("engram-pack-");
    // --ignore-scripts: dist/ is built (the integration setup checks it is fresh); prepack
    // would only rebuild it.
    const pack = await npm(["pack", "--ignore-scripts", "--pack-destination", out], ROOT);
    expect(pack.code, pack.output).toBe(0);
    const [tarball] = readdirSync(out).filter((f) => f.endsWith(".tgz"));
    expect(tarball, pack.output).toBeDefined();
    consumer = dirs.dir("engram-consumer-");
    writeFileSync(
      join(consumer, "package.json"),
      `${JSON.stringify({ name: "consumer", version: "1.0.0", private: true })}\n`,
    );
    install = await npm(["install", "--prefer-offline", join(out, tarball ?? "")], consumer);
    packed = JSON.parse(
      readFileSync(join(consumer, "node_modules", "engram", "package.json"), "utf8"),
    ) as Manifest;
  }, 900_000);

  afterAll(() => dirs.cleanup());

  it(`installs on Node ${process.version} without a single npm warning`, () => {
    expect(install.code, install.output).toBe(0);
    expect(install.output).not.toMatch(/EBADENGINE/);
    expect(install.output.split("\n").filter((l) => /^npm (warn|WARN|ERR)/.test(l))).toEqual([]);
  });

  it("runs no script at install and needs no override of its own", () => {
    const scripts = Object.keys(packed.scripts ?? {});
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) {
      expect(scripts, `a ${hook} script runs at every consumer's install`).not.toContain(hook);
    }
    // npm announces each script it runs as "> engram@0.1.0 NAME".
    expect(install.output).not.toMatch(/^> engram@/m);
    expect(packed.overrides, "overrides never reach a consumer: pin instead").toBeUndefined();
  });

  it("brings the built commands, which start", async () => {
    for (const bin of ["director", "worker", "engram"]) {
      const help = await node([join(consumer, "node_modules", ".bin", bin), "--help"], consumer);
      expect(help.code, help.output).toBe(0);
      expect(help.output).toMatch(new RegExp(`^usage: ${bin} `, "m"));
    }
    // The umbrella bin runs both programs: what worker setup writes into agent hosts.
    for (const program of ["director", "worker"]) {
      const engram = join(consumer, "node_modules", ".bin", "engram");
      const help = await node([engram, program, "--help"], consumer);
      expect(help.code, help.output).toBe(0);
      expect(help.output).toMatch(new RegExp(`^usage: engram ${program} <command>`, "m"));
    }
    const worker = await node(
      [join(consumer, "node_modules", ".bin", "engram"), "worker", "help", "setup"],
      consumer,
    );
    expect(worker.output).toContain("worker setup claude-code|codex|cursor|gemini");
  });

  it("claims Node lines that every installed package admits: the oldest 20, 22 and 24", () => {
    const range = (packed.engines as { node?: string } | undefined)?.node ?? "";
    const oldest = semver.minVersion(range)?.version ?? "";
    const lines = [oldest, "22.0.0", "24.0.0"];
    expect(oldest).toMatch(/^20\./);
    for (const line of lines) expect(admits(range, line), `${range} admits ${line}`).toBe(true);
    // npm records every installed package's engines in the hidden lockfile.
    const lock = JSON.parse(
      readFileSync(join(consumer, "node_modules", ".package-lock.json"), "utf8"),
    ) as { packages: Record<string, Manifest> };
    const refused: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages)) {
      const wanted = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node;
      if (wanted === undefined) continue;
      for (const line of lines) {
        if (!admits(wanted, line)) refused.push(`${path}@${pkg.version} wants ${wanted}: ${line}`);
      }
    }
    expect(Object.keys(lock.packages).length).toBeGreaterThan(50);
    expect(refused).toEqual([]);
  });
});
