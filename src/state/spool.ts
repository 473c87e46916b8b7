import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { StateError } from "../errors.js";
import { fsyncDirSync, writeFileAtomicSync } from "./atomic.js";

/**
 * The local spool, the embedded bus: every `worker emit` writes its own file (temp, fsync,
 * rename), so concurrent writers never contend for a lock and a crash leaves either a whole
 * file or none. The Director drains files in name order and removes each only after the
 * journal holds its events.
 */
export function writeSpoolFile(spoolDir: string, lines: readonly string[], now: number): string {
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const name = `${String(now).padStart(15, "0")}-${process.pid}-${randomBytes(6).toString("hex")}.ndjson`;
  const path = join(spoolDir, name);
  // Only this user reads what its workers wrote: 0600, like the quarantine.
  writeFileAtomicSync(path, lines.map((l) => `${l}\n`).join(""), 0o600);
  return path;
}

export function listSpoolFiles(spoolDir: string): string[] {
  if (!existsSync(spoolDir)) return [];
  const names: string[] = [];
  for (const entry of readdirSync(spoolDir, { withFileTypes: true })) {
    if (!entry.name.endsWith(".ndjson") || entry.name.startsWith(".")) continue;
    // Workers write regular files only: a link (a restored state folder) is never read.
    if (entry.isSymbolicLink()) {
      throw new StateError(
        `${join(spoolDir, entry.name)}: a symbolic link in the spool: never followed; remove it`,
      );
    }
    names.push(entry.name);
  }
  return names.sort().map((name) => join(spoolDir, name));
}

export function removeSpoolFiles(spoolDir: string, paths: readonly string[]): void {
  if (paths.length === 0) return;
  for (const path of paths) {
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  fsyncDirSync(spoolDir);
}
