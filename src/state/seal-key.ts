import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { StateError } from "../errors.js";
import { STATE_DIR_MODE, STATE_FILE_MODE, writeFileAtomicSync } from "./atomic.js";

/**
 * The local secret for `sensitive` text: `ENGRAM_SEAL_KEY` (64 hex digits) or a key file in
 * the git-ignored state folder, created on first use with mode 0600. Never committed.
 *
 * A key file is used only when it is the user's own: a regular file (not a link), owned by
 * this user, readable by nobody else. (The state folder's own checks, run when the context
 * opens, make sure git neither tracks nor would commit it.) A key that others could read, or
 * that came from someone else, may be known to them: sealing under it would protect nothing.
 */
export function loadSealKey(path: string, create: boolean): Uint8Array | undefined {
  const fromEnv = process.env.ENGRAM_SEAL_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!/^[0-9a-fA-F]{64}$/.test(fromEnv)) {
      throw new StateError("ENGRAM_SEAL_KEY: expected 64 hex digits (a 32-byte key)");
    }
    return Buffer.from(fromEnv, "hex");
  }
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st !== undefined) {
    const problem = sealKeyProblem(st);
    if (problem !== undefined) {
      throw new StateError(
        `${path}: ${problem}; nothing was sealed with it. If you made this key and only you could ever read it, fix it (chmod 600 ${path}); otherwise remove it and a new key is made on first use (text sealed under the old key then stays sealed)`,
      );
    }
    const text = readFileSync(path, "utf8").trim();
    if (!/^[0-9a-f]{64}$/.test(text)) throw new StateError(`${path}: expected 64 hex digits`);
    return Buffer.from(text, "hex");
  }
  if (!create) return undefined;
  mkdirSync(dirname(path), { recursive: true, mode: STATE_DIR_MODE });
  writeFileAtomicSync(
    path,
    `${process.getBuiltinModule("node:crypto").randomBytes(32).toString("hex")}\n`,
    STATE_FILE_MODE,
  );
  return Buffer.from(readFileSync(path, "utf8").trim(), "hex");
}

/** Why a key file is not the user's own secret; undefined when it is. */
export function sealKeyProblem(st: {
  isSymbolicLink(): boolean;
  isFile(): boolean;
  uid: number;
  mode: number;
}): string | undefined {
  if (st.isSymbolicLink()) return "is a symbolic link, not the key file itself";
  if (!st.isFile()) return "is not a regular file";
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `is owned by uid ${st.uid}, not by you (${uid})`;
  if ((st.mode & 0o077) !== 0) {
    return `is readable or writable by others (mode ${(st.mode & 0o777).toString(8).padStart(3, "0")})`;
  }
  return undefined;
}
