import { setTimeout as sleep } from "node:timers/promises";

/**
 * How long a wait for an event may last before the test gives up: a safety net against a
 * hang, far beyond what a loaded machine needs (an event a quiet machine sees in a second),
 * and below the integration tests' timeout (vitest.config.ts) so the failure says what was
 * awaited. Never a test device: no test passes or fails by how fast the machine is.
 */
export const WAIT_SAFETY_MS = 240_000;

/**
 * Resolves once `ready()` holds (a file appeared or went away, a server answered, a state
 * was reached), checking every `intervalMs`; throws naming `what` after `WAIT_SAFETY_MS`.
 */
export async function waitUntil(
  ready: () => boolean | Promise<boolean>,
  what: string,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + WAIT_SAFETY_MS;
  while (!(await ready())) {
    if (Date.now() > deadline)
      throw new Error(`still waiting, after ${WAIT_SAFETY_MS} ms: ${what}`);
    await sleep(intervalMs);
  }
}
