import { z } from "zod";

/** `[quarantine]`: the disk budget of rejected input lines (docs/security.md). */
export const QuarantineConfig = z
  .object({
    max_bytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(8 * 1024 * 1024)
      .describe(
        "Most bytes the quarantine keeps on disk: two generations of half each; the older is dropped (and counted) when the newer is full.",
      ),
    max_records: z
      .number()
      .int()
      .min(16)
      .default(20_000)
      .describe(
        "Most records the quarantine keeps (a run of alike lines is one record), in two generations of half each.",
      ),
    sender_share: z
      .number()
      .gt(0)
      .max(1)
      .default(0.25)
      .describe(
        "Most of a generation one sender may hold (a TCP client by its address, otherwise the file or source); past it its lines are counted as dropped, not kept.",
      ),
  })
  .strict();
export type QuarantineConfig = z.infer<typeof QuarantineConfig>;
