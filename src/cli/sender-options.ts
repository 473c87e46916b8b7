import { BUS_URL_FORMS, type BusUrl, parseBusUrl } from "../bus/url.js";
import type { RepoContext } from "../context/repo-context.js";
import type { SenderIdentity } from "../worker/emit.js";
import { type OptionSpecs, type ParsedArgs, stringOption } from "./args.js";

/** Who is speaking on the bus: every command that sends an envelope takes these. */
export const SENDER_OPTIONS: OptionSpecs = {
  worker: {
    type: "string",
    value: "ID",
    description: "worker id (default: $ENGRAM_WORKER_ID or worker-<host>)",
  },
  "run-id": { type: "string", value: "ID", description: "run id (default: $GITHUB_RUN_ID)" },
  bus: {
    type: "string",
    value: "URL",
    description: `where to send: ${BUS_URL_FORMS} (default: $ENGRAM_BUS, else [worker] bus, else spool)`,
  },
};

export function senderOf(args: ParsedArgs): SenderIdentity {
  return { worker: stringOption(args, "worker"), runId: stringOption(args, "run-id") };
}

/** Checks a `--bus` value before any work starts (a typo is exit 2, nothing sent). */
export function checkBusOption(args: ParsedArgs): void {
  const flag = stringOption(args, "bus");
  if (flag !== undefined) parseBusUrl(flag);
}

/** The bus to send over: `--bus`, else `ENGRAM_BUS`, else `[worker] bus`, else the spool. */
export async function busOption(args: ParsedArgs, ctx: RepoContext): Promise<BusUrl> {
  const { workerBus } = await import("../bus/worker-bus.js");
  return workerBus(ctx, stringOption(args, "bus")).url;
}
