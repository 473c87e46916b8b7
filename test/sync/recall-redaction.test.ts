/**
 * A secret pasted into a recall query leaves neither for a store nor for the recall cache
 * (issue 40): `worker recall QUERY --confidence 0.3` against the Graphiti stand-in.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { outboundQuery } from "../../src/core/sync/remote-recall.js";
import { assertBuilt, director, succeeded, worker } from "../support/bins.js";
import { fakeGithubToken } from "../support/envelopes.js";
import { FakeGraphiti } from "../support/fake-graphiti.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
let server: FakeGraphiti | undefined;
const env = { SOURCE_DATE_EPOCH: "1767607200" };

beforeAll(() => assertBuilt());
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dirs.cleanup());

describe("recall queries are redacted before they leave", () => {
  it("keeps the words of a query and drops its secrets", () => {
    const token = fakeGithubToken("recall-1");
    const redactor = createRedactor();
    expect(outboundQuery(`why did ${token} fail`, redactor)).toBe("why did fail");
    expect(outboundQuery("password=hunter2 rotation", redactor)).toBe("password= rotation");
    expect(outboundQuery("retry the deploy", redactor)).toBe("retry the deploy");
  });

  it("sends no secret to the graph and caches none", async () => {
    server = new FakeGraphiti();
    await server.start();
    const repo = dirs.repo("engram-recall-secret-");
    succeeded(await director(["init"], { cwd: repo.dir }));
    repo.writeConfig(`[sync.graphiti]\nurl = "${server.url}"\nbackend = "neo4j"\n`);
    const token = fakeGithubToken("recall-2");
    const r = await worker(
      ["recall", `deploy ${token} rejected`, "--confidence", "0.3", "--no-signal", "--json"],
      { cwd: repo.dir, env, timeoutMs: 60_000 },
    );
    succeeded(r);
    expect(server.searches.length).toBeGreaterThan(0);
    for (const search of server.searches) {
      expect(search.query).not.toContain(token);
      expect(search.query).toContain("deploy");
    }
    const cache = readFileSync(join(repo.dir, ".engram", "sync", "recall-cache.json"), "utf8");
    expect(cache).toContain("deploy");
    expect(cache).not.toContain(token);
    expect(cache.toLowerCase()).not.toContain(token.slice(4).toLowerCase());
  });
});
