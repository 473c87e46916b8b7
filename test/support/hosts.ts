import { accessSync, constants, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./bins.js";
import { natsRequired } from "./nats.js";

/** The pinned host packages, one `name@version` a line: what CI installs (.ci/run). */
export const HOST_PACKAGES_FILE = join(ROOT, ".ci", "host-packages");

/** Test files that run a real host (their skipped tests are counted in the banner). */
export const HOST_TEST_FILE = /(^|[\\/])hosts-real-[^\\/]*\.test\.ts$/;

/**
 * The hosts the real-host tests run, by engram's name: their npm package, bin, and whether
 * the bin is a script for node (run with this node: a `PATH` of /usr/bin:/bin may hold none).
 */
const HOSTS = {
  "claude-code": { pkg: "@anthropic-ai/claude-code", bin: "claude", script: false },
  gemini: { pkg: "@google/gemini-cli", bin: "gemini", script: true },
  codex: { pkg: "@openai/codex", bin: "codex", script: true },
} as const;
export type RealHost = keyof typeof HOSTS;
export const REAL_HOSTS = Object.keys(HOSTS) as RealHost[];

/** The pinned `name@version` lines of `.ci/host-packages`. */
export function pinnedPackages(): string[] {
  return readFileSync(HOST_PACKAGES_FILE, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** The pinned version of a host's package. */
export function pinnedVersion(host: RealHost): string {
  const { pkg } = HOSTS[host];
  const line = pinnedPackages().find((l) => l.startsWith(`${pkg}@`));
  if (line === undefined) throw new Error(`${HOST_PACKAGES_FILE} pins no ${pkg}`);
  return line.slice(pkg.length + 1);
}

/**
 * Where the hosts are installed: `ENGRAM_HOSTS_DIR` (an npm prefix, as `.ci/run` makes it),
 * else `~/.cache/engram-hosts`.
 */
export function hostsDir(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.ENGRAM_HOSTS_DIR;
  return chosen !== undefined && chosen !== "" ? chosen : join(homedir(), ".cache", "engram-hosts");
}

/** The command that installs the pinned hosts where the tests look for them. */
export function hostsInstallCommand(env: NodeJS.ProcessEnv = process.env): string {
  return `npm install --prefix ${hostsDir(env)} --no-save ${pinnedPackages().join(" ")}`;
}

/** A host found (the command that runs it: `argv` then the host's own arguments), or why not. */
export type HostLookup = { argv: string[]; version: string } | { missing: string };

/**
 * The host's executable in `hostsDir()`, at exactly the pinned version: another version is
 * reported as missing (the tests know the pinned version's requests), naming both.
 */
export function findHost(host: RealHost, env: NodeJS.ProcessEnv = process.env): HostLookup {
  const { pkg, bin, script } = HOSTS[host];
  const dir = hostsDir(env);
  const pinned = pinnedVersion(host);
  let version: string;
  try {
    const manifest = readFileSync(join(dir, "node_modules", pkg, "package.json"), "utf8");
    version = (JSON.parse(manifest) as { version: string }).version;
  } catch {
    return { missing: `${pkg} is not installed in ${dir}` };
  }
  if (version !== pinned) {
    return { missing: `${dir} holds ${pkg}@${version}, the tests pin ${pinned}` };
  }
  const path = join(dir, "node_modules", ".bin", bin);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { missing: `${path} is not an executable (was the install run with --ignore-scripts?)` };
  }
  return { argv: script ? [process.execPath, path] : [path], version };
}

/** On CI (`CI` set) a missing host fails the real-host tests, as a missing nats-server does. */
export const hostsRequired = natsRequired;

/** The pinned hosts that are not installed, with why. */
export function missingHosts(env: NodeJS.ProcessEnv = process.env): string[] {
  return REAL_HOSTS.flatMap((h) => {
    const found = findHost(h, env);
    return "missing" in found ? [found.missing] : [];
  });
}

/** The banner printed at the end of a run whose real-host tests did not run. */
export function hostsSkippedBanner(
  skipped: number,
  required: boolean,
  missing: readonly string[],
): string {
  const rule = "=".repeat(78);
  return [
    "",
    rule,
    required
      ? `  HOSTS: ${skipped} test(s) NOT RUN and the run FAILS: the pinned agent hosts are missing`
      : `  HOSTS: ${skipped} test(s) SKIPPED: the pinned agent hosts are not installed.`,
    ...missing.map((why) => `  - ${why}`),
    "  Not every real host was run against engram. Install them (outside the project):",
    `  ${hostsInstallCommand()}`,
    "  (or set ENGRAM_HOSTS_DIR to the prefix that holds them) and run npm test again.",
    required
      ? "  CI is set, so missing hosts are a failure."
      : "  With CI=true missing hosts fail the run instead.",
    rule,
    "",
  ].join("\n");
}
