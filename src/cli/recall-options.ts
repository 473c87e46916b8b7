import { UsageError } from "../errors.js";
import { numberOption, type OptionSpecs, type ParsedArgs } from "./args.js";

/** The flags of hybrid recall (local memory first, then the external stores). */
export const REMOTE_RECALL_OPTIONS: OptionSpecs = {
  confidence: {
    type: "string",
    value: "0..1",
    description:
      "how sure you already are: below 0.5 the sync stores are asked at once, 0.5-0.7 only when local memory finds nothing, 0.7+ checked in the background",
  },
  refresh: { type: "boolean", description: "with --confidence: ignore cached store answers" },
};

export interface RemoteRecallFlags {
  confidence: number;
  refresh: boolean;
}

/** The hybrid recall flags, or undefined when no confidence is stated (local memory only). */
export function remoteRecallOptions(args: ParsedArgs): RemoteRecallFlags | undefined {
  const confidence = numberOption(args, "confidence");
  const refresh = args.values.refresh === true;
  if (confidence === undefined) {
    if (refresh)
      throw new UsageError("--refresh goes with --confidence (it refreshes store answers)");
    return undefined;
  }
  if (!(confidence >= 0 && confidence <= 1)) {
    throw new UsageError(`--confidence: expected a number from 0 to 1, got ${confidence}`);
  }
  return { confidence, refresh };
}
