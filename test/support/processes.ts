import { spawn } from "node:child_process";

/**
 * The pid of a process that has exited and been reaped: a pid no process holds now (the
 * system could hand it out again, but not within a test's few milliseconds in practice).
 * Better than a large literal, which some systems (pid_max above it) may have running.
 */
export async function reapedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid;
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", () => resolve());
  });
  if (pid === undefined) throw new Error("the child had no pid");
  return pid;
}
