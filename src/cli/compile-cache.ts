/**
 * Start-up on Node 22.1 and later: the bins ask Node to keep the code it compiles for them on
 * disk (`module.enableCompileCache`, in the folder Node chooses under the temporary folder,
 * or `NODE_COMPILE_CACHE`), so a second run of a command does not compile its modules again.
 * Node 20 has no such cache: nothing happens there. `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 * The bins import this module alone, then the rest, which the cache then covers.
 */
type WithCompileCache = { enableCompileCache?: () => unknown };

/** Turns the compile cache on where this Node.js has one; never fails a command. */
export function enableCompileCache(): void {
  try {
    (process.getBuiltinModule("node:module") as WithCompileCache).enableCompileCache?.();
  } catch {
    // A cache folder that cannot be made only costs the time it would have saved.
  }
}
