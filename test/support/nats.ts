import { accessSync, constants } from "node:fs";
import { findNatsServer } from "../../bench/nats-server.js";

/** How to get the server, for the messages that say it is missing. */
export const NATS_INSTALL = "apt-get install nats-server";

/** Test files that need a nats-server (their skipped tests are counted in the banner). */
export const NATS_TEST_FILE = /(^|[\\/])nats[^\\/]*\.test\.ts$/;

/**
 * The nats-server the tests start: `ENGRAM_NATS_SERVER` when set (a path; a path that is not
 * an executable, such as /nonexistent, stands for a machine without the server), else the
 * one on PATH or where Debian's package puts it. Undefined when there is none.
 */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env.ENGRAM_NATS_SERVER;
  if (chosen === undefined || chosen === "") return findNatsServer();
  try {
    accessSync(chosen, constants.X_OK);
    return chosen;
  } catch {
    return undefined;
  }
}

/** On CI (`CI` set, as every CI service does) a missing nats-server fails the run. */
export function natsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}

/**
 * The banner printed at the end of a run whose NATS tests did not run: skipped, or, on CI
 * (`required`), failed.
 */
export function natsSkippedBanner(skipped: number, required: boolean): string {
  const rule = "=".repeat(78);
  const outcome = required
    ? [`  NATS: ${skipped} test(s) NOT RUN and the run FAILS: nats-server is not installed`]
    : [`  NATS: ${skipped} test(s) SKIPPED: nats-server is not installed.`];
  return [
    "",
    rule,
    ...outcome,
    "  The NATS JetStream transport was not tested. Install the server (Debian, Ubuntu:",
    `  sudo ${NATS_INSTALL}; elsewhere https://nats.io) and run npm test again.`,
    required
      ? "  CI is set, so a missing nats-server is a failure."
      : "  With CI=true a missing nats-server fails the run instead.",
    rule,
    "",
  ].join("\n");
}
