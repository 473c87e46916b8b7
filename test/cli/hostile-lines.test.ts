/**
 * Lines made to stall the secret scan (issue 40): a key word followed by a long run of blanks
 * once made every scan quadratic, and a rejected line was redacted whole before it was cut.
 * Through the bin: `director ingest` takes them and goes on, with no timing asserted.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { jsonOf } from "../support/bins.js";
import { note } from "../support/envelopes.js";
import { listFiles } from "../support/memory.js";
import {
  dir,
  expectExit,
  type IngestJson,
  initRepo,
  inputFile,
  useCliHarness,
} from "./cli-harness.js";

useCliHarness();

describe("director ingest and lines made to stall the scan", () => {
  it("quarantines a 1 MiB line and a 60 KB one, redacted, and goes on", async () => {
    const repo = await initRepo();
    const blanks = (n: number) => " ".repeat(n);
    const file = inputFile("hostile.ndjson", [
      // Over agent_bus.max_message_bytes: quarantined, its excerpt redacted.
      `{"text": "password=hunter2 password${blanks(1 << 20)}."}`,
      // Longer than a note's text may be: quarantined too, after a scan of its head.
      note("fact", `password=hunter2 password${blanks(60_000)}.`),
      note("fact", `password=hunter2 passphrase${blanks(7_000)}.`),
      note("lesson", "the scan goes on after them"),
    ]);
    const r = await dir(repo, ["ingest", file, "--json"], { timeoutMs: 120_000 });
    expectExit(r, 0);
    const counts = jsonOf<IngestJson>(r);
    expect(counts).toMatchObject({ accepted: 2, quarantined: 2 });
    const buffer = readFileSync(repo.path(".engram", "buffer", "journal.ndjson"), "utf8");
    expect(buffer).toContain("the scan goes on after them");
    for (const file of listFiles(repo.path(".engram"), repo.dir)) {
      expect(readFileSync(repo.path(file), "utf8"), file).not.toContain("hunter2");
    }
  }, 180_000);
});
