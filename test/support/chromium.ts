import { accessSync, constants } from "node:fs";
import { natsRequired } from "./nats.js";

/** How to get the browser, for the message that says it is missing. */
export const CHROMIUM_INSTALL = "apt-get install chromium";

/**
 * The chromium the browser tests drive: `ENGRAM_CHROMIUM` when set (a path; one that is not
 * an executable stands for a machine without it), else Debian's. Undefined when there is none.
 */
export function chromiumBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates =
    env.ENGRAM_CHROMIUM !== undefined && env.ENGRAM_CHROMIUM !== ""
      ? [env.ENGRAM_CHROMIUM]
      : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  return undefined;
}

/** On CI (`CI` set) a missing chromium fails the browser tests, as a missing nats-server does. */
export const chromiumRequired = natsRequired;
