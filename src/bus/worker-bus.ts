/**
 * Which bus a worker command sends over: `--bus`, else `ENGRAM_BUS`, else the repository's
 * `[worker] bus`, else the local spool. The flag and the environment are the user's own
 * choice; the repository's config may come from anyone's pull request, so it may name only
 * the spool, a remote of this repository, or a host the environment allows
 * (`ENGRAM_ALLOW_HOSTS`, as for every other destination: docs/security.md).
 */

import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import {
  ALLOW_HOSTS_VAR,
  allowEntryFor,
  type Env,
  hostAllowed,
} from "../core/trust/destinations.js";
import { ConfigError } from "../errors.js";
import { type BusUrl, formatBusUrl, parseBusUrl } from "./url.js";

/** The environment variable naming a worker's bus (trusted: the user's own). */
export const BUS_VAR = "ENGRAM_BUS";

export interface BusChoice {
  url: BusUrl;
  /** Where it came from, for messages: `--bus`, `ENGRAM_BUS`, the config file, or the default. */
  from: "flag" | "environment" | "config" | "default";
}

/** A remote's name as `git remote add` takes it: no path, no URL. */
const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function workerBus(
  ctx: Pick<RepoContext, "repoDir" | "configPath" | "config">,
  flag: string | undefined,
  env: Env = process.env,
): BusChoice {
  if (flag !== undefined) return { url: parseBusUrl(flag, "--bus"), from: "flag" };
  const fromEnv = env[BUS_VAR]?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    return { url: parseBusUrl(fromEnv, BUS_VAR), from: "environment" };
  }
  const configured = ctx.config.worker.bus;
  if (configured === undefined) return { url: { kind: "spool" }, from: "default" };
  const trust = trustOf(ctx, env);
  const key = `${trust.file}: [worker] bus`;
  const url = parseBusUrl(configured, key);
  if (trust.userConfig) return { url, from: "config" };
  const refuse = (message: string): never => {
    throw new ConfigError(`${key}: ${message}`, trust.file, [{ key: "worker.bus", message }]);
  };
  switch (url.kind) {
    case "spool":
      break;
    case "git":
      if (!REMOTE_NAME.test(url.remote)) {
        refuse(
          `names ${JSON.stringify(url.remote)}, not a remote of this repository: the repository's config cannot choose where notes are pushed. Name a remote (git:origin), or set ${BUS_VAR}=${configured} to push there`,
        );
      }
      break;
    default: {
      const where = new URL(formatBusUrl(url));
      if (!hostAllowed(where, env)) {
        refuse(
          `names ${where.host}, a host the environment does not allow: the repository's config cannot choose where notes are sent. Set ${BUS_VAR}=${configured} to send there, or add ${allowEntryFor(where)} to ${ALLOW_HOSTS_VAR}, or use git:REMOTE`,
        );
      }
    }
  }
  return { url, from: "config" };
}
