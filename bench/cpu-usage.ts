/**
 * Loaded with `node --import` into a command the bench runs: at exit, the process's CPU time
 * (user and system, every thread) goes to the file `ENGRAM_BENCH_CPU_FILE` names. On a busy
 * machine the wall time of a process says as much about its neighbours as about it.
 */
import { writeFileSync } from "node:fs";

const file = process.env.ENGRAM_BENCH_CPU_FILE;
if (file !== undefined && file !== "") {
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, `${JSON.stringify({ user_us: user, system_us: system })}\n`);
  });
}
