const UNITS = ["KiB", "MiB", "GiB", "TiB"] as const;

/**
 * A byte count for people: `812 B`, `22.7 KiB`, `4 MiB`. Binary units, as the config's
 * budgets are written (`buffer_max_bytes = 33554432`, 32 MiB); `--json` keeps the bytes.
 */
export function humanBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = "B";
  for (const next of UNITS) {
    if (value < 1023.95) break;
    value /= 1024;
    unit = next;
  }
  // One decimal, none when it is .0: "1.2 MiB", "4 MiB". What would round to 1024.0 moves up.
  return `${value.toFixed(1).replace(/\.0$/, "")} ${unit}`;
}

/** `used/max` of a byte budget for people: `3.7 KiB/1 MiB`. */
export function humanBudget(used: number, max: number): string {
  return `${humanBytes(used)}/${humanBytes(max)}`;
}
