/**
 * Random bytes for ids and file names, read from the kernel's /dev/urandom: loading
 * `node:crypto` is 3 to 5 ms of a `worker emit`, which needs no more than these. Where the
 * device cannot be read (Windows), `node:crypto`. Keys never come from here.
 */
function randomBytes(count: number): Buffer {
  const { closeSync, openSync, readSync } = process.getBuiltinModule("node:fs");
  const bytes = Buffer.allocUnsafe(count);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      for (let got = 0; got < count; ) {
        const read = readSync(fd, bytes, got, count - got, null);
        if (read === 0) throw new Error("/dev/urandom: end of file");
        got += read;
      }
    } finally {
      closeSync(fd);
    }
    return bytes;
  } catch {
    return process.getBuiltinModule("node:crypto").randomBytes(count);
  }
}

/** `count` random bytes as hex. */
export function randomHex(count: number): string {
  return randomBytes(count).toString("hex");
}

/**
 * A new envelope's `event_id`: `ev_` and a random (version 4) UUID as 32 hex digits, as
 * `crypto.randomUUID()` without its dashes.
 */
export function newEventId(): string {
  const bytes = randomBytes(16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  return `ev_${bytes.toString("hex")}`;
}
