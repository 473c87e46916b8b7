/**
 * `worker heartbeat` sends the upstream WorkerState under `state` (stage, issue_number,
 * attempt, progress `{step, percent}`, repo with the main ancestor and catalog hash seen),
 * with engram's flat fields beside it as aliases.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HeartbeatPayload } from "../../src/schema/envelope.js";
import { listSpoolFiles } from "../../src/state/spool.js";
import { assertBuilt, director, jsonOf, worker } from "../support/bins.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

describe("worker heartbeat", () => {
  it("emits the upstream state, and the flat fields as aliases", async () => {
    const repo = dirs.repo("engram-heartbeat-");
    jsonOf(await director(["init", "--json"], { cwd: repo.dir }));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "engram init"]);
    const head = git(repo.dir, ["rev-parse", "HEAD"]).trim();
    const args = ["heartbeat", "--stage", "CODE", "--issue", "42", "--attempt", "2"];
    const sent = jsonOf<{ catalog_hash_seen: string }>(
      await worker([...args, "--progress", "0.4", "--worker", "hb", "--json"], { cwd: repo.dir }),
    );
    const [file] = listSpoolFiles(join(repo.dir, ".engram", "spool"));
    const envelope = JSON.parse(readFileSync(file as string, "utf8").trim()) as {
      payload: Record<string, unknown>;
    };
    expect(HeartbeatPayload.safeParse(envelope.payload).success).toBe(true);
    expect(envelope.payload).toMatchObject({
      state: {
        stage: "CODE",
        issue_number: 42,
        attempt: 2,
        progress: { step: "CODE", percent: 40 },
        repo: { main_ancestor_sha: head, catalog_hash_seen: sent.catalog_hash_seen },
        last_update_at: expect.stringMatching(/Z$/),
      },
      stage: "CODE",
      issue: "42",
      attempt: 2,
      progress: 0.4,
      main_ancestor_sha: head,
      catalog_hash_seen: sent.catalog_hash_seen,
    });
  });
});
