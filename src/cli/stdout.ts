/**
 * A command's output, written to standard output's file descriptor: `process.stdout` is a
 * stream whose set-up loads Node's stream modules (1.5 to 2.5 ms of every command's start).
 * Standard output is synchronous on Linux and macOS either way (files, pipes, terminals), so
 * the order of what is written does not change. A pipe left non-blocking by its reader
 * (EAGAIN) gets the rest through the stream, which waits for room; Windows, whose pipes are
 * asynchronous, always does.
 */
export function writeStdout(text: string): void {
  if (process.platform === "win32") {
    process.stdout.write(text);
    return;
  }
  const { writeSync } = process.getBuiltinModule("node:fs");
  let rest = Buffer.from(text, "utf8");
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(1, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      process.stdout.write(rest);
      return;
    }
  }
}
