/**
 * Review in a minute (issue 37): an insight the knowledge graph holds that a later note
 * replaces is withdrawn (its episodes deleted, once), through the path a removed markdown file
 * takes; the new side is sent as an item of its own. Through the bins, against the stand-in.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, director, succeeded, worker } from "../support/bins.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
let server: FakeGraphiti | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

const OLD = "Use Postgres advisory locks for the job queue";
const NEW = "Use Redis locks for the job queue";

describe("a replaced insight in the knowledge graph", () => {
  it("is withdrawn once: its episodes deleted, the new side sent", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = dirs.repo("engram-graphiti-withdraw-");
    succeeded(await director(["init"], { cwd: repo.dir }));
    repo.writeConfig(
      [
        "[memory]",
        "buffer_keep_recent_events = 0",
        "[sync]",
        "insight_pending_min_confidence = 0.5",
        "insight_pending_min_evidence = 1",
        "insight_validated_min_evidence = 1",
        "[sync.graphiti]",
        `url = "${server.url}"`,
        "confirm_wait_seconds = 5",
        "",
      ].join("\n"),
    );
    let epoch = 1_767_607_200;
    const env = () => ({ SOURCE_DATE_EPOCH: String(epoch++) });
    const decide = async (text: string, extra: string[] = []) => {
      const args = ["emit", "--kind", "decision", "--text", text, "--rationale", "load test"];
      const more = ["--privacy", "public", "--confidence", "0.9", "--topic", "jobs", ...extra];
      succeeded(await worker([...args, ...more], { cwd: repo.dir, env: env() }));
      succeeded(await director(["run", "--force"], { cwd: repo.dir, env: env() }));
    };
    const sync = async () =>
      JSON.parse(
        succeeded(
          await director(["sync", "run", "--target", "graphiti", "--force", "--json"], {
            cwd: repo.dir,
            env: env(),
          }),
        ).stdout,
      ) as { sent: { created_or_updated: number; failed: number } };
    const bodies = () => server?.episodes.map((e) => `${e.name}\n${e.content}`).join("\n") ?? "";

    await decide(OLD);
    const first = await sync();
    expect(first.sent.failed).toBe(0);
    expect(bodies()).toContain(OLD);

    const catalog = JSON.parse(readFileSync(join(repo.dir, "memory/catalog.json"), "utf8")) as {
      entries: { engram_id: string }[];
    };
    const engramId = catalog.entries[0]?.engram_id as string;
    await decide(NEW, ["--supersedes", `${engramId}#d0`]);
    const second = await sync();
    expect(second.sent.failed).toBe(0);
    expect(bodies()).toContain(NEW);
    expect(bodies()).not.toContain(OLD);

    // Sent once: the next run has nothing to withdraw again.
    const calls = server.calls.length;
    const third = await sync();
    expect(third.sent.created_or_updated).toBe(0);
    expect(server.calls.length).toBe(calls);
  }, 120_000);
});
