import { UsageError } from "../errors.js";

/**
 * The sync targets by name. Kept apart from `service.ts` (which loads every store's client),
 * so that `sync run --hook` starts its detached run without loading any of them.
 */
export const TARGETS = ["notion", "graphiti", "tana"] as const;
export type TargetName = (typeof TARGETS)[number];

export function parseTarget(name: string | undefined): TargetName {
  const target = name ?? "notion";
  if (!(TARGETS as readonly string[]).includes(target)) {
    throw new UsageError(`--target: expected one of ${TARGETS.join(", ")}, got "${target}"`);
  }
  return target as TargetName;
}
