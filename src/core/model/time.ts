/** Batch ids are UTC stamps `YYYYMMDD-HHMMSSZ`, derived from receipt times, never from a clock. */
export function batchIdFromIso(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new RangeError(`not an ISO-8601 time: ${iso}`);
  const full = date.toISOString(); // 2026-11-22T14:16:51.123Z
  return `${full.slice(0, 4)}${full.slice(5, 7)}${full.slice(8, 10)}-${full.slice(11, 13)}${full.slice(14, 16)}${full.slice(17, 19)}Z`;
}

export function isoFromBatchId(batchId: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})Z$/.exec(batchId);
  if (!m) throw new RangeError(`not a batch id: ${batchId}`);
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z`;
}

export function secondsBetween(earlierIso: string, laterIso: string): number {
  return (Date.parse(laterIso) - Date.parse(earlierIso)) / 1000;
}
