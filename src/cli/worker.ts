#!/usr/bin/env node
import { enableCompileCache } from "./compile-cache.js";

// First, so that the compile cache covers every module loaded after it.
enableCompileCache();
const [{ runMain }, { WORKER_COMMANDS }] = await Promise.all([
  import("./main.js"),
  import("./worker-commands.js"),
]);
await runMain("worker", WORKER_COMMANDS, process.argv.slice(2));
