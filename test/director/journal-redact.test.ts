/**
 * What a compaction checks again of the events it takes (`redactedEvents`): every line loaded
 * from the journal, never those its own process appended after opening the buffer.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { initRepository } from "../../src/director/init.js";
import { redactedEvents } from "../../src/director/journal-redact.js";
import { memoryEvent } from "../core/engine-fixtures.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

// Built from parts so that no scanner takes this file for a leak.
const TOKEN = ["gh", "p_", "R8x2Kq9LmN4vB7cT1zY6wH3jF5dS0aPeGu2i"].join("");

async function context() {
  const repo = dirs.dir("engram-journal-redact-");
  git(repo, ["init", "-q", "-b", "main"]);
  initRepository(await openContext({ repo }));
  return openContext({ repo });
}

describe("redactedEvents", () => {
  it("checks and redacts the loaded events, and keeps as they are those appended after seq checkedAfterSeq", async () => {
    const ctx = await context();
    const loaded = memoryEvent(3, { text: `deploy with ${TOKEN}` });
    const broken = { ...memoryEvent(4), kind: "" };
    const fresh = memoryEvent(5, { text: `deploy with ${TOKEN}` });
    const out = redactedEvents(ctx, [loaded, broken, fresh], 4);
    expect(out).toHaveLength(2);
    expect(out[0]?.text).toMatch(/^deploy with \[REDACTED:/);
    expect(out[1]).toBe(fresh);
    const quarantine = readFileSync(ctx.paths.quarantine, "utf8");
    expect(quarantine).toContain("journal-invalid");
    expect(quarantine).toContain("seq 4: kind");
  });

  it("checks every event when no seq is given", async () => {
    const ctx = await context();
    const out = redactedEvents(ctx, [memoryEvent(1, { text: `deploy with ${TOKEN}` })]);
    expect(out[0]?.text).not.toContain(TOKEN);
  });
});
