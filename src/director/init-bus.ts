/**
 * `director init --bus URL`: the team's default bus, written as `[worker] bus` into the
 * repository's config, so that every checkout's workers (clones, worktrees, CI) send there.
 */
import { readFileSync } from "node:fs";
import { formatBusUrl, parseBusUrl } from "../bus/url.js";
import { workerBus } from "../bus/worker-bus.js";
import { configOfText } from "../config/load.js";
import type { RepoContext } from "../context/repo-context.js";
import { ConfigError, UsageError } from "../errors.js";
import { writeFileAtomicSync } from "../state/atomic.js";

export interface InitBusResult {
  bus: string;
  /** Whether the config file was changed (false: it already said so). */
  written: boolean;
  /** Why a worker will not use it as it is (a host the environment must allow). */
  warning?: string;
}

/** Sets `[worker] bus` in the config file of `ctx` (read again from disk: init may have made it). */
export async function setTeamBus(ctx: RepoContext, value: string): Promise<InitBusResult> {
  const bus = formatBusUrl(parseBusUrl(value, "--bus"));
  const text = readFileSync(ctx.configPath, "utf8");
  const file = ctx.configPath;
  const current = (await configOfText(text, file)).worker.bus;
  const warning = trustWarning(ctx, bus);
  if (current === bus) return { bus, written: false, ...(warning ? { warning } : {}) };
  if (current !== undefined) {
    throw new UsageError(
      `--bus ${bus}: ${file} already sets [worker] bus = ${JSON.stringify(current)}; edit it there to change the team's bus`,
    );
  }
  const next = withWorkerBus(text, bus);
  await configOfText(next, file); // never write a config that does not load
  writeFileAtomicSync(file, next, 0o644);
  return { bus, written: true, ...(warning ? { warning } : {}) };
}

/** `text` with `bus = "<bus>"` in its `[worker]` table (in place of the commented example). */
export function withWorkerBus(text: string, bus: string): string {
  const line = `bus = ${JSON.stringify(bus)}`;
  const lines = text.split("\n");
  const header = lines.findIndex((l) => l.trim() === "[worker]");
  if (header === -1) {
    const sep = text === "" || text.endsWith("\n") ? "" : "\n";
    return `${text}${sep}\n[worker]\n${line}\n`;
  }
  let end = lines.findIndex((l, i) => i > header && /^\s*\[/.test(l));
  if (end === -1) end = lines.length;
  const example = lines.findIndex((l, i) => i > header && i < end && /^#\s*bus\s*=/.test(l));
  if (example !== -1) lines[example] = line;
  else lines.splice(header + 1, 0, line);
  return lines.join("\n");
}

/** What a worker without a say of its own in the environment would refuse, as a warning. */
function trustWarning(ctx: RepoContext, bus: string): string | undefined {
  const config = { ...ctx.config, worker: { ...ctx.config.worker, bus } };
  try {
    workerBus({ ...ctx, config }, undefined, {});
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return `workers will refuse it unless their environment allows it: ${error.message}`;
  }
}
