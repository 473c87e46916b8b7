/**
 * `npm run build`, last step (scripts/bundle.ts starts it in a process of its own): runs the
 * frequent commands once, in process, in a scratch repository, then writes the code cache of
 * the bundle's hot script (src/cli/hot-load.ts) with the bytecode of every function they ran.
 * A command then starts from that bytecode instead of compiling it (start-up, issue 39).
 *
 * Arguments: the bundle's folder, then the numbers of cli/main.js, cli/worker-commands.js and
 * cli/director-commands.js in the hot script. Prints one JSON line: the cache's size and the
 * commands run.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type RunMain = (program: string, commands: unknown, argv: string[]) => Promise<void>;

const [binDir, mainIndex, workerIndex, directorIndex] = process.argv.slice(2);
if (binDir === undefined || directorIndex === undefined) {
  throw new Error("usage: hot-train BIN_DIR MAIN_INDEX WORKER_INDEX DIRECTOR_INDEX");
}
const loader = (await import(pathToFileURL(join(binDir, "hot-load.js")).href)) as {
  hotModule(index: number): Record<string, unknown>;
  writeHotCache(): number;
};
const runMain = loader.hotModule(Number(mainIndex)).runMain as RunMain;
const worker = loader.hotModule(Number(workerIndex)).WORKER_COMMANDS;
const director = loader.hotModule(Number(directorIndex)).DIRECTOR_COMMANDS;

const scratch = mkdtempSync(join(tmpdir(), "engram-hot-train-"));
const repo = join(scratch, "repo");
const ran: string[] = [];
try {
  execFileSync("git", ["init", "-q", "-b", "main", repo]);
  process.chdir(repo);
  process.env.SOURCE_DATE_EPOCH ??= "1767225600";
  const step = async (program: "worker" | "director", argv: string[]) => {
    await runMain(program, program === "worker" ? worker : director, argv);
    process.exitCode = undefined;
    ran.push(`${program} ${argv[0]}`);
  };
  await step("director", ["init"]);
  // Before any memory: what a fresh repository's first commands run.
  await step("worker", ["recall", "retry with jitter"]);
  await step("worker", ["check", "--offline"]);
  await step("director", ["status"]);
  await step("worker", [
    "emit",
    "--kind",
    "lesson",
    "--text",
    "The API returns 429 under load; retry with jitter",
    "--topic",
    "payments",
  ]);
  await step("worker", [
    "emit",
    "--kind",
    "decision",
    "--text",
    "Store money as integer cents",
    "--rationale",
    "floats lose precision",
    "--topic",
    "payments",
  ]);
  await step("worker", [
    "emit",
    "--kind",
    "fact",
    "--text",
    "token=ghp_0123456789abcdefghijABCDEFGHIJ012345 was rotated",
  ]);
  await step("director", ["run", "--flush"]);
  // With memory: hits, their signal, the context of a topic, a run with nothing to do.
  await step("worker", ["recall", "retry with jitter"]);
  await step("worker", ["recall", "integer cents", "--json"]);
  await step("worker", ["context", "payments"]);
  await step("worker", ["check", "--offline"]);
  await step("director", ["status"]);
  await step("director", ["run"]);
  await step("worker", ["--help"]);
  await step("director", ["--help"]);
  const bytes = loader.writeHotCache();
  process.stdout.write(`${JSON.stringify({ cache_bytes: bytes, commands: ran })}\n`);
} finally {
  process.chdir(tmpdir());
  rmSync(scratch, { recursive: true, force: true });
}
