import { UsageError } from "./errors.js";

/**
 * The Director's receipt clock: `SOURCE_DATE_EPOCH` (seconds) when set, for reproducible
 * runs, else the system clock. Only adapters call it; the core takes times as input.
 */
export function receiptTime(): string {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  if (epoch !== undefined && epoch !== "") {
    const seconds = Number(epoch);
    if (!Number.isFinite(seconds) || !/^\s*-?\d+(\.\d+)?\s*$/.test(epoch)) {
      throw new UsageError(`SOURCE_DATE_EPOCH: expected seconds since 1970, got "${epoch}"`);
    }
    return new Date(seconds * 1000).toISOString();
  }
  return new Date().toISOString();
}
