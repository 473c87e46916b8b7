/**
 * The git-ref transport under parallel writers: fifty `worker emit --bus git:origin` processes
 * (five clones, ten writers each, as jobs on five CI runners) push to one bare repository at
 * once; then one `director ingest --bus git:origin` drains them all in one cycle. Every
 * emitted event id must be in the journal exactly once, and no writer may fall back to the
 * spool.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { eventIdKey } from "../src/core/ingest/event-keys.js";
import { DIRECTOR_CLI, log, removeDir, round, runNode, tempDir, WORKER_CLI } from "./util.js";

export interface GitTransportScenarioResult {
  writers: number;
  events: number;
  /** Wall time from the first writer's spawn to the last writer's exit (process start included). */
  push_seconds: number;
  /** Wall time of the one `director ingest --bus git:origin` (fetch, ingest, fsync, prune). */
  drain_seconds: number;
  /** Events over push and drain time together: end to end, writer processes included. */
  events_per_s: number;
  lost: number;
  duplicated: number;
  pass: boolean;
}

const WRITERS = 50;
const CLONES = 5;

/** Git and the CLIs without the user's or the system's config, with a fixed identity. */
function benchEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "engram bench",
    GIT_AUTHOR_EMAIL: "bench@engram.invalid",
    GIT_COMMITTER_NAME: "engram bench",
    GIT_COMMITTER_EMAIL: "bench@engram.invalid",
  };
}

function git(cwd: string, args: readonly string[]): string {
  return execFileSync("git", [...args], { cwd, env: benchEnv(), encoding: "utf8" });
}

async function cli(bin: string, args: readonly string[], cwd: string) {
  const run = await runNode([bin, ...args], { cwd, env: benchEnv() });
  if (run.code !== 0) {
    throw new Error(`${args.join(" ")} exited with ${run.code}: ${run.stderr.slice(-1000)}`);
  }
  return { ...run, json: JSON.parse(run.stdout) as Record<string, unknown> };
}

export async function runGitTransportScenario(): Promise<GitTransportScenarioResult> {
  const root = tempDir("transport-git");
  try {
    const template = join(root, "template");
    const origin = join(root, "origin.git");
    git(root, ["init", "-q", "-b", "main", template]);
    await cli(DIRECTOR_CLI, ["init", "--json"], template);
    git(template, ["add", "-A"]);
    git(template, ["commit", "-q", "-m", "engram init"]);
    git(root, ["init", "-q", "--bare", "-b", "main", origin]);
    git(template, ["push", "-q", origin, "main"]);
    const clones = Array.from({ length: CLONES }, (_, i) => join(root, `runner-${i}`));
    for (const dir of clones) git(root, ["clone", "-q", origin, dir]);
    const directorDir = join(root, "director");
    git(root, ["clone", "-q", origin, directorDir]);
    await cli(DIRECTOR_CLI, ["init", "--json"], directorDir);

    log(`transport-git: ${WRITERS} writers push to one bare repository`);
    const t0 = performance.now();
    const emitted = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        cli(
          WORKER_CLI,
          [
            "emit",
            "--kind",
            "fact",
            "--text",
            `parallel writer ${i} finished its job`,
            "--worker",
            `job-${i}`,
            "--bus",
            "git:origin",
            "--json",
          ],
          clones[i % CLONES] as string,
        ),
      ),
    );
    const pushSeconds = (performance.now() - t0) / 1000;
    const spooled = emitted.filter((e) => e.json.spooled !== false).length;
    const ids = emitted.map((e) => String(e.json.event_id));

    log("transport-git: one Director drain");
    const t1 = performance.now();
    const drained = await cli(
      DIRECTOR_CLI,
      ["ingest", "--bus", "git:origin", "--json"],
      directorDir,
    );
    const drainSeconds = (performance.now() - t1) / 1000;

    const journalPath = join(directorDir, ".engram", "buffer", "journal.ndjson");
    const keys = existsSync(journalPath)
      ? readFileSync(journalPath, "utf8")
          .split("\n")
          .filter((l) => l.length > 0)
          .map((l) => String((JSON.parse(l) as { key: string }).key))
      : [];
    const present = new Set(keys);
    // Keys are the digests of the writers' event ids (`ih:...`).
    const lost = ids.filter((id) => !present.has(eventIdKey(id))).length;
    const duplicated = keys.length - present.size;
    const remaining = git(origin, ["for-each-ref", "refs/engram/events/"]).trim();
    const pass =
      spooled === 0 &&
      lost === 0 &&
      duplicated === 0 &&
      drained.json.accepted === WRITERS &&
      remaining === "";
    return {
      writers: WRITERS,
      events: keys.length,
      push_seconds: round(pushSeconds),
      drain_seconds: round(drainSeconds),
      events_per_s: round(WRITERS / (pushSeconds + drainSeconds), 1),
      lost,
      duplicated,
      pass,
    };
  } finally {
    removeDir(root);
  }
}
