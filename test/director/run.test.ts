import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { runCycle } from "../../src/director/run.js";
import { verifyRepository } from "../../src/director/verify.js";

let repo: string;
const CONFIG = (extra = "") =>
  `[memory]\nbuffer_keep_recent_events = 0\nst_max_files = 50\n${extra}\n`;

function notes(count: number, from = 0): string {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_note.v1",
      sent_at: "2026-11-22T10:00:00Z",
      sender: { role: "worker", id: "w1" },
      seq: i,
      event_id: `n-${from + i}`,
      payload: {
        kind: "fact",
        text: `fact ${from + i} about topic ${(from + i) % 7}`,
        topics: [`t${(from + i) % 7}`],
      },
    }),
  ).join("\n");
}

async function feed(count: number, from = 0) {
  const file = join(repo, `in-${from}.ndjson`);
  writeFileSync(file, notes(count, from));
  const ctx = await openContext({ repo });
  return ingestSource(ctx, { path: file });
}

beforeEach(async () => {
  repo = mkdtempSync(join(tmpdir(), "engram-run-"));
  process.env.SOURCE_DATE_EPOCH = "1795000000";
  const ctx = await openContext({ repo });
  initRepository(ctx);
  writeFileSync(join(repo, "config", "dev.toml"), CONFIG());
});
afterEach(() => {
  delete process.env.SOURCE_DATE_EPOCH;
  rmSync(repo, { recursive: true, force: true });
});

describe("runCycle", () => {
  it("plans without writing on --dry-run, then writes the same plan", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    const dry = await runCycle(ctx, { force: true, dryRun: true });
    expect(dry.dry_run).toBe(true);
    expect(dry.engrams_written).toBeGreaterThan(0);
    expect(readdirSync(join(repo, "memory", "st"))).toEqual([".gitkeep"]);
    const real = await runCycle(ctx, { force: true });
    expect(real.written).toEqual(dry.written);
    expect(real.catalog_hash).toBe(dry.catalog_hash);
    expect(await verifyRepository(ctx)).toEqual([]);
  });

  it("is a no-op when nothing changed", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    const first = await runCycle(ctx, { force: true });
    const again = await runCycle(ctx);
    expect(again.changed).toBe(false);
    expect(again.focus).toBeNull();
    expect(again.catalog_hash).toBe(first.catalog_hash);
  });

  it("evicts on an idle cycle after the budget is lowered in the config", async () => {
    await feed(60);
    let ctx = await openContext({ repo });
    const first = await runCycle(ctx, { force: true });
    expect(first.tiers.st.files).toBeGreaterThan(3);
    writeFileSync(
      join(repo, "config", "dev.toml"),
      CONFIG().replace("st_max_files = 50", "st_max_files = 3"),
    );
    ctx = await openContext({ repo });
    const second = await runCycle(ctx);
    expect(second.tiers.st.files).toBe(3);
    expect(second.engrams_evicted).toBe(first.tiers.st.files - 3);
    for (const path of second.evicted) expect(existsSync(join(repo, path))).toBe(false);
    expect(await verifyRepository(ctx)).toEqual([]);
  });

  it("keeps a resend out after its event was compacted", async () => {
    await feed(20);
    const ctx = await openContext({ repo });
    await runCycle(ctx, { force: true });
    const resend = await feed(20);
    expect(resend.accepted).toBe(0);
    expect(resend.duplicates).toBe(20);
    const catalog = JSON.parse(readFileSync(join(repo, "memory", "catalog.json"), "utf8"));
    expect(catalog.catalog_version).toBe(1);
  });

  it("quarantines a line that never ends without holding it, and reads on after it", async () => {
    const huge = `{"schema_version":"agentbus-envelope/v1","payload":{"text":"${"y".repeat(3_000_000)}`;
    const file = join(repo, "hostile.ndjson");
    writeFileSync(file, `${notes(2)}\n${huge}\n${notes(2, 10)}\n`);
    const ctx = await openContext({ repo });
    const counts = await ingestSource(ctx, { path: file, name: "hostile.ndjson" });
    expect(counts).toMatchObject({ accepted: 4, quarantined: 1 });
    const record = JSON.parse(readFileSync(join(repo, ".engram", "quarantine.ndjson"), "utf8"));
    expect(record).toMatchObject({ source: "hostile.ndjson", line: 3, reason: "oversized" });
    expect(record.excerpt.length).toBeLessThanOrEqual(300);
  });
});
