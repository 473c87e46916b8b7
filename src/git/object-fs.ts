/**
 * The file system isomorphic-git is given. It writes loose objects in place (open, truncate,
 * write); through this each write is a temp file renamed into place, so a process killed
 * mid-write never leaves an empty or torn object that git then refuses ("object file is
 * empty"). Objects are immutable: renaming over an equal one is harmless. Reads pass through.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { dirname } from "node:path";

export const objectFs = {
  ...fs,
  promises: {
    ...fs.promises,
    async writeFile(path: string, data: Uint8Array | string, options?: fs.WriteFileOptions) {
      const temp = `${dirname(path)}/.tmp-engram-${process.pid}-${randomBytes(6).toString("hex")}`;
      try {
        await fs.promises.writeFile(temp, data, options);
        await fs.promises.rename(temp, path);
      } catch (error) {
        await fs.promises.unlink(temp).catch(() => {});
        throw error;
      }
    },
  },
};
