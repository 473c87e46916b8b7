#!/usr/bin/env node
import { enableCompileCache } from "./compile-cache.js";

// First, so that the compile cache covers every module loaded after it.
enableCompileCache();
const [{ runMain }, { DIRECTOR_COMMANDS }] = await Promise.all([
  import("./main.js"),
  import("./director-commands.js"),
]);
await runMain("director", DIRECTOR_COMMANDS, process.argv.slice(2));
