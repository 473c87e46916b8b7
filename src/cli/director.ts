#!/usr/bin/env node
import { DIRECTOR_COMMANDS } from "./director-commands.js";
import { runMain } from "./main.js";

await runMain("director", DIRECTOR_COMMANDS, process.argv.slice(2));
