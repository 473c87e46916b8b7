import { z } from "zod";

const PositiveInt = z.number().int().positive();
/** Seconds to wait: at most an hour. */
export const Seconds = z.number().positive().max(3600);

/** `[agent_bus.nats]`: the JetStream stream, its subjects and the Director's durable consumer. */
export const NatsConfig = z
  .object({
    stream: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "expected letters, digits, _ or - (at most 64)")
      .default("ENGRAM")
      .describe("JetStream stream holding the envelopes; created if missing."),
    subject_prefix: z
      .string()
      .regex(
        /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/,
        "expected dot-separated tokens of letters, digits, _ or -",
      )
      .max(128)
      .default("engram.events")
      .describe("Workers publish to PREFIX.<worker-id>; the stream takes PREFIX.>."),
    consumer: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "expected letters, digits, _ or - (at most 64)")
      .default("engram-director")
      .describe("Durable pull consumer the Director drains."),
    duplicate_window_seconds: PositiveInt.max(86_400)
      .default(120)
      .describe("The same send again (same event ids) within this window is dropped by JetStream."),
    max_age_seconds: PositiveInt.max(31_536_000)
      .default(604_800)
      .describe("How long the stream keeps a message (ingested or not); older ones are discarded."),
    ack_wait_seconds: PositiveInt.max(3600)
      .default(30)
      .describe("A message not acknowledged this long after delivery is delivered again."),
    connect_timeout_seconds: Seconds.default(2).describe(
      "A worker that cannot reach the server this fast writes to the local spool instead.",
    ),
    publish_timeout_seconds: Seconds.default(5).describe(
      "How long a worker waits for JetStream to acknowledge a publish before spooling.",
    ),
    fetch_batch: PositiveInt.max(10_000)
      .default(1000)
      .describe("Most messages the Director commits in one group (one journal fsync)."),
  })
  .strict();
export type NatsConfig = z.infer<typeof NatsConfig>;
