/**
 * Formats the zod schemas check, by hand, for the quick checks that run without zod
 * (`catalog-check.ts`, `src/worker/envelope-check.ts`).
 */

// zod's `z.iso.datetime()`: real calendar dates, seconds required, any fraction, UTC (`Z`).
const DATE =
  "(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))";
const UTC_TIME = new RegExp(`^${DATE}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$`);

/** What `UtcTime` (and, among its forms, `IsoTime`) accepts. */
export function isUtcTime(v: unknown): v is string {
  return typeof v === "string" && UTC_TIME.test(v);
}

/** A non-negative safe integer (zod's `int().nonnegative()`). */
export function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

const SHA256_REF = /^sha256:[0-9a-f]{64}$/;

/** What `Sha256Ref` accepts: `sha256:` and 64 lowercase hex digits. */
export function isSha256Ref(v: unknown): v is string {
  return typeof v === "string" && SHA256_REF.test(v);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Most entity ids one engram carries; the rest are left out (sorted order). Kept here, free of zod, for the core. */
export const MAX_ENGRAM_ENTITIES = 64;
