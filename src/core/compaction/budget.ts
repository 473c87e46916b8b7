import type { MemoryConfig } from "../../schema/config.js";
import type { CatalogEntry, Scope } from "../../schema/engram.js";

export interface TierBudget {
  maxBytes: number;
  maxFiles: number;
}
export interface TierUsage {
  files: number;
  bytes: number;
}

export function tierUsage(entries: readonly CatalogEntry[]): Record<Scope, TierUsage> {
  const usage: Record<Scope, TierUsage> = {
    st: { files: 0, bytes: 0 },
    lt: { files: 0, bytes: 0 },
  };
  for (const entry of entries) {
    usage[entry.scope].files++;
    usage[entry.scope].bytes += entry.bytes;
  }
  return usage;
}

/**
 * Whether a tier is over its byte or file budget. A budget lowered in the config makes the
 * next cycle evict, even an otherwise idle one.
 */
export function overBudget(usage: Record<Scope, TierUsage>, memory: MemoryConfig): boolean {
  return (
    usage.st.files > memory.st_max_files ||
    usage.st.bytes > memory.st_max_total_bytes ||
    usage.lt.files > memory.lt_max_files ||
    usage.lt.bytes > memory.lt_max_total_bytes
  );
}

/** Oldest first: by batch version, then engram id, so the order is total and deterministic. */
export function compareAge(a: CatalogEntry, b: CatalogEntry): number {
  if (a.version !== b.version) return a.version < b.version ? -1 : 1;
  return a.engram_id < b.engram_id ? -1 : a.engram_id > b.engram_id ? 1 : 0;
}

/**
 * The entries to evict so that each tier is within its byte and file budgets: oldest first
 * within a tier, ST before LT (invariant 3 and 4).
 */
export function planEviction(
  entries: readonly CatalogEntry[],
  budgets: Record<Scope, TierBudget>,
): CatalogEntry[] {
  const evicted: CatalogEntry[] = [];
  for (const scope of ["st", "lt"] as const) {
    const tier = entries.filter((e) => e.scope === scope).sort(compareAge);
    let files = tier.length;
    let bytes = tier.reduce((sum, e) => sum + e.bytes, 0);
    const budget = budgets[scope];
    for (const entry of tier) {
      if (files <= budget.maxFiles && bytes <= budget.maxBytes) break;
      evicted.push(entry);
      files--;
      bytes -= entry.bytes;
    }
  }
  return evicted;
}
