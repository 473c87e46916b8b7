/**
 * One bench step in a process of its own: `node dist/bench/step.js STEP ARGS...` prints one
 * JSON document on stdout (with the process's peak RSS where it matters). Used by the
 * scenarios so that each heavy step is measured alone.
 */
import { compactionStep, prepareCompactionStep } from "./compaction.js";
import { ingestStep } from "./ingest.js";
import { floorStep } from "./ingest-cli.js";

const USAGE = `usage: node dist/bench/step.js ingest REPO FILE
       node dist/bench/step.js prepare-compaction REPO FILE LINES
       node dist/bench/step.js compaction REPO
       node dist/bench/step.js floor FILE OUT`;

async function main(argv: readonly string[]): Promise<unknown> {
  const [step, ...args] = argv;
  switch (step) {
    case "ingest":
      if (args.length !== 2) break;
      return ingestStep(args[0] as string, args[1] as string);
    case "prepare-compaction":
      if (args.length !== 3) break;
      return prepareCompactionStep(args[0] as string, args[1] as string, Number(args[2]));
    case "floor":
      if (args.length !== 2) break;
      return floorStep(args[0] as string, args[1] as string);
    case "compaction":
      if (args.length !== 1) break;
      return compactionStep(args[0] as string);
  }
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

try {
  const result = await main(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  process.stderr.write(`bench step failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
}
