import type { Command } from "./args.js";

/** Director commands of the agent bus (the TCP hub). */
export const BUS_COMMANDS: readonly Command[] = [];
