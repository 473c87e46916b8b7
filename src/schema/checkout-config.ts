import { z } from "zod";

/** `[state]`: where this checkout keeps what is never committed. */
export const StateConfig = z
  .object({
    dir: z
      .string()
      .default(".engram")
      .describe("Git-ignored folder (relative to the repository) for the buffer, spool and keys."),
  })
  .strict();

/**
 * `[worker]`: what every checkout's workers share, from the repository's config. Its bus is a
 * team default, limited by the trust rules (src/bus/worker-bus.ts): the config may come from
 * anyone's pull request, so a network host is used only when the environment allows it.
 */
export const WorkerConfig = z
  .object({
    bus: z
      .string()
      .regex(
        /^(spool|git:\S+|(tcp|tls|nats):\/\/\S+)$/,
        "expected spool, git:REMOTE, tcp://HOST:PORT, tls://HOST:PORT or nats://HOST:PORT",
      )
      .optional()
      .meta({ examples: ["git:origin"] })
      .describe(
        "Where workers send notes, heartbeats and ended sessions when neither --bus nor ENGRAM_BUS says: spool, or git:REMOTE (a remote of this repository; director run drains it), or tcp://, tls://, nats:// HOST:PORT (only a host ENGRAM_ALLOW_HOSTS lists). Default: the local spool.",
      ),
  })
  .strict()
  .describe(
    "Workers in every checkout (clones, worktrees, CI): the team's default bus, so a note written anywhere reaches the Director.",
  );
export type WorkerConfig = z.infer<typeof WorkerConfig>;
