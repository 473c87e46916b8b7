import { BUS_URL_FORMS, type BusUrl, parseBusUrl } from "../bus/url.js";
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
    description: `where to send: ${BUS_URL_FORMS} (default: spool)`,
  },
};

export function senderOf(args: ParsedArgs): SenderIdentity {
  return { worker: stringOption(args, "worker"), runId: stringOption(args, "run-id") };
}

export function busOption(args: ParsedArgs): BusUrl {
  return parseBusUrl(stringOption(args, "bus") ?? "spool");
}
