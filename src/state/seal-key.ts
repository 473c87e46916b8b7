import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { StateError } from "../errors.js";
import { writeFileAtomicSync } from "./atomic.js";

/**
 * The local secret for `sensitive` text: `ENGRAM_SEAL_KEY` (64 hex digits) or a key file in
 * the git-ignored state folder, created on first use with mode 0600. Never committed.
 */
export function loadSealKey(path: string, create: boolean): Uint8Array | undefined {
  const fromEnv = process.env.ENGRAM_SEAL_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!/^[0-9a-fA-F]{64}$/.test(fromEnv)) {
      throw new StateError("ENGRAM_SEAL_KEY: expected 64 hex digits (a 32-byte key)");
    }
    return Buffer.from(fromEnv, "hex");
  }
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8").trim();
    if (!/^[0-9a-f]{64}$/.test(text)) throw new StateError(`${path}: expected 64 hex digits`);
    return Buffer.from(text, "hex");
  }
  if (!create) return undefined;
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomicSync(path, `${randomBytes(32).toString("hex")}\n`, 0o600);
  return Buffer.from(readFileSync(path, "utf8").trim(), "hex");
}
