/** A real repository for the dashboard's tests: init, notes (one hostile), heartbeats, run. */
import { expect } from "vitest";
import { describeResult, director, worker } from "./bins.js";
import type { TempDirs, TempRepo } from "./repo.js";

export const HOSTILE_IMG = `<img src=x onerror="window.__pwned=1;document.title='pwned'">`;
export const HOSTILE_SCRIPT = `<script>window.__pwned=2;document.title='pwned'</script>`;

async function ok(p: ReturnType<typeof director>) {
  const r = await p;
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

/** A repository with one cycle's memory: a decision, a hostile fact, a worker's heartbeat. */
export async function dashboardRepo(d: TempDirs): Promise<TempRepo> {
  const repo = d.repo("engram-dashboard-");
  const cwd = repo.dir;
  const env = { ENGRAM_WORKER_ID: "worker-api", SOURCE_DATE_EPOCH: "1790000000" };
  await ok(director(["init"], { cwd }));
  await ok(
    worker(
      [
        "emit",
        "--kind",
        "decision",
        "--text",
        "Pin Node 20 in CI",
        "--rationale",
        "users run 20",
        "--topic",
        "ci",
      ],
      { cwd, env },
    ),
  );
  await ok(
    worker(["emit", "--kind", "fact", "--text", `note ${HOSTILE_IMG}`, "--topic", "web"], {
      cwd,
      env,
    }),
  );
  await ok(
    worker(["emit", "--kind", "lesson", "--text", `lesson ${HOSTILE_SCRIPT}`, "--topic", "web"], {
      cwd,
      env,
    }),
  );
  await ok(worker(["heartbeat", "--stage", "test", "--issue", "42"], { cwd, env }));
  await ok(director(["run", "--flush"], { cwd, env }));
  await ok(
    worker(["heartbeat", "--stage", "review"], {
      cwd,
      env: { ...env, ENGRAM_WORKER_ID: "worker-web" },
    }),
  );
  await ok(director(["run"], { cwd, env }));
  return repo;
}
