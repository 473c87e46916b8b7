import type { HubLog, HubOptions, HubSummary } from "../bus/hub-ports.js";
import { drainConfiguredSources, droppedWarnings } from "../bus/sources.js";
import { TcpHub } from "../bus/tcp-hub.js";
import type { RepoContext } from "../context/repo-context.js";
import { StateError } from "../errors.js";
import { ingestorFor } from "../ingest/ingest.js";
import { withDirectorState } from "./director-state.js";
import { runCycleOn } from "./run.js";

/**
 * `director serve`: holds the Director state for its lifetime and runs the hub until `stop`
 * aborts (SIGTERM) or the hub fails. The hub is lent the Director's intake (the Ingestor on
 * the held buffer) and its cycle; `log` is where both say what they could not do.
 * `onListening` is called once connections are accepted.
 */
export async function serveHub(
  ctx: RepoContext,
  options: HubOptions,
  hooks: { onListening(address: string): void; stop: AbortSignal; log: HubLog },
): Promise<HubSummary> {
  const { log } = hooks;
  return withDirectorState(
    ctx,
    async (buffer) => {
      const cycles = {
        async run(options?: { makeRoom: boolean }) {
          const result = await runCycleOn(ctx, buffer, {
            drainSources: drainConfiguredSources,
            force: options?.makeRoom === true,
          });
          // What `director run` prints for its sources, the hub's log says.
          for (const s of result.sources) {
            if (s.error !== undefined) log.warn(`could not drain ${s.source}: ${s.error}`);
          }
          for (const warning of droppedWarnings(result.sources)) log.warn(`warning: ${warning}`);
          return result;
        },
      };
      const hub = new TcpHub(ctx, options, { intake: ingestorFor(ctx, buffer), cycles, log });
      await hub.start();
      hooks.onListening(hub.address);
      const aborted = new Promise<void>((resolve) => {
        if (hooks.stop.aborted) resolve();
        else hooks.stop.addEventListener("abort", () => resolve(), { once: true });
      });
      await Promise.race([aborted, hub.failedOnItsOwn]);
      await hub.stop();
      if (hub.error !== undefined) {
        const error = hub.error as Error;
        throw new StateError(`the hub stopped: ${error.message}`, { cause: error });
      }
      return hub.summary(String(hooks.stop.reason ?? "stop"));
    },
    // A cycle needs the events in memory; a hub that only ingests does not. Held for the
    // hub's life: other Director commands fail at once instead of waiting for it.
    { retainEvents: options.cycleSeconds > 0, longLived: true },
  );
}
