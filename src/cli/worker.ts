#!/usr/bin/env node
import { runMain } from "./main.js";
import { WORKER_COMMANDS } from "./worker-commands.js";

await runMain("worker", WORKER_COMMANDS, process.argv.slice(2));
