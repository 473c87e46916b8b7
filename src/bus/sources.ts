import type { RepoContext } from "../context/repo-context.js";
import { EngramError } from "../errors.js";
import { type SourceDrain, zeroCounts } from "../ingest/counts.js";
import type { EventBuffer } from "../state/buffer.js";
import { type BusUrl, formatBusUrl, parseBusUrl } from "./url.js";

/**
 * Drains a networked source (NATS JetStream, git refs) into the buffer. Every event is made
 * durable in the journal before the source is told it may forget it.
 */
export async function drainSource(
  ctx: RepoContext,
  buffer: EventBuffer,
  url: BusUrl,
  /** `userChosen`: named by the user (`--bus`), not the config: it gets the NATS credential. */
  options: { userChosen?: boolean } = {},
): Promise<SourceDrain> {
  switch (url.kind) {
    case "nats":
      return (await import("./nats-source.js")).drainNats(ctx, buffer, url, options);
    case "git": {
      const { drainGitRefs } = await import("./git-ref-source.js");
      return drainGitRefs(ctx, buffer, url);
    }
    default:
      throw new Error(
        `${formatBusUrl(url)} is not a source to drain: the spool is drained by director run and the TCP hub by director serve`,
      );
  }
}

/** Messages a source dropped before the Director took them: lost, so never said quietly. */
export function droppedWarnings(drains: readonly SourceDrain[]): string[] {
  return drains
    .filter((d) => (d.dropped ?? 0) > 0)
    .map(
      (d) =>
        `${d.source}: ${d.dropped} message(s) were dropped by the stream (its max_age) before this Director took them; drain more often than agent_bus.nats.max_age_seconds`,
    );
}

/**
 * The sources `director run` drains besides the spool: `agent_bus.sources`, and the team's
 * `[worker] bus` when it is one a Director drains (git:REMOTE, nats://), so that what
 * workers send by default always arrives.
 */
export function configuredSources(ctx: RepoContext): BusUrl[] {
  const out = ctx.config.agent_bus.sources.map((text, i) =>
    parseBusUrl(text, `${ctx.configPath}: agent_bus.sources[${i}]`),
  );
  const team = ctx.config.worker.bus;
  if (team === undefined) return out;
  const url = parseBusUrl(team, `${ctx.configPath}: worker.bus`);
  const drained = url.kind === "git" || url.kind === "nats";
  if (drained && !out.some((u) => formatBusUrl(u) === formatBusUrl(url))) out.push(url);
  return out;
}

/**
 * Drains every source of `agent_bus.sources` after the spool, for `director run` and the hub.
 * An unreachable source does not stop the cycle: what it holds waits there for the next one.
 */
export async function drainConfiguredSources(
  ctx: RepoContext,
  buffer: EventBuffer,
): Promise<SourceDrain[]> {
  const drains: SourceDrain[] = [];
  for (const url of configuredSources(ctx)) {
    try {
      drains.push(await drainSource(ctx, buffer, url));
    } catch (error) {
      if (!(error instanceof EngramError)) throw error;
      drains.push({
        ...zeroCounts(),
        source: formatBusUrl(url),
        acknowledged: 0,
        error: error.message,
      });
    }
  }
  return drains;
}
