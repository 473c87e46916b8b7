import type { RepoContext } from "../director/context.js";
import type { IngestCounts } from "../director/ingest.js";
import type { EventBuffer } from "../state/buffer.js";
import { type BusUrl, formatBusUrl, parseBusUrl } from "./url.js";

/** What one drain of a bus source brought into the buffer. */
export interface SourceDrain extends IngestCounts {
  source: string;
  /** Messages acknowledged to the source (or refs pruned) after the journal fsync. */
  acknowledged: number;
  /** Why the source could not be drained (`director run` goes on with its cycle). */
  error?: string;
}

/**
 * Drains a networked source (NATS JetStream, git refs) into the buffer. Every event is made
 * durable in the journal before the source is told it may forget it.
 */
export async function drainSource(
  ctx: RepoContext,
  buffer: EventBuffer,
  url: BusUrl,
): Promise<SourceDrain> {
  switch (url.kind) {
    case "nats":
      return (await import("./nats-source.js")).drainNats(ctx, buffer, url);
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

/** The sources `director run` drains besides the spool (`agent_bus.sources`). */
export function configuredSources(ctx: RepoContext): BusUrl[] {
  return ctx.config.agent_bus.sources.map((text, i) =>
    parseBusUrl(text, `${ctx.configPath}: agent_bus.sources[${i}]`),
  );
}
