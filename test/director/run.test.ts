import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import {
  parseCatalogSummary,
  serializeCatalogSummary,
  summarizeCatalog,
} from "../../src/core/compaction/catalog-summary.js";
import { sha256Hex } from "../../src/core/model/canonical.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { runCycle } from "../../src/director/run.js";
import { readStatus } from "../../src/director/status.js";
import { verifyRepository } from "../../src/director/verify.js";
import type { Catalog } from "../../src/schema/engram.js";

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
  it("removes temp files a killed Director left in memory/ when it takes over its lock", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    await runCycle(ctx, { force: true });
    const batch = readdirSync(join(repo, "memory", "st")).find((d) => d !== ".gitkeep");
    const temp = join(repo, "memory", "st", batch as string, ".999999.1.tmp");
    writeFileSync(temp, "partial");
    // A clean release before: the memory tree is not listed, the temp stays.
    await runCycle(ctx);
    expect(existsSync(temp)).toBe(true);
    writeFileSync(ctx.paths.lock, "999999 deadbeef\n");
    await runCycle(ctx);
    expect(existsSync(temp)).toBe(false);
  });

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

  it("answers an idle cycle from the catalog summary cached for the catalog file's bytes", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    const first = await runCycle(ctx, { force: true });
    // The cycle that wrote the catalog cached its summary, keyed by the file's bytes.
    const catalogPath = join(repo, "memory", "catalog.json");
    const bytes = readFileSync(catalogPath);
    const key = sha256Hex(bytes);
    const catalog = JSON.parse(bytes.toString("utf8")) as Catalog;
    const cached = readFileSync(ctx.paths.catalogSummary, "utf8");
    expect(cached).toBe(serializeCatalogSummary(key, summarizeCatalog(catalog)));
    const idle = await runCycle(ctx);
    expect(idle.changed).toBe(false);
    expect(idle.tiers).toEqual(first.tiers);
    // Without the cache, the same answer, and the cache is written again.
    rmSync(ctx.paths.catalogSummary);
    expect(await runCycle(ctx)).toEqual(idle);
    expect(readFileSync(ctx.paths.catalogSummary, "utf8")).toBe(cached);
    // The summary is what an idle cycle reads: a (well-formed) one written for these bytes
    // is believed without parsing the catalog...
    const planted = { ...summarizeCatalog(catalog), catalog_version: 999 };
    writeFileSync(ctx.paths.catalogSummary, serializeCatalogSummary(key, planted));
    expect((await runCycle(ctx)).catalog_version).toBe(999);
    // ...and any change to the file's bytes misses it: the catalog is read again.
    writeFileSync(catalogPath, `${bytes.toString("utf8")}\n`);
    const reread = await runCycle(ctx);
    expect(reread.catalog_version).toBe(first.catalog_version);
    expect(reread.changed).toBe(false);
    expect(
      parseCatalogSummary(
        readFileSync(ctx.paths.catalogSummary, "utf8"),
        sha256Hex(readFileSync(catalogPath)),
      ),
    ).toEqual(summarizeCatalog(catalog));
  });

  it("director status reports from the summary and, read-only, never writes one", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    const forced = await runCycle(ctx, { force: true });
    const cached = await readStatus(ctx);
    expect(cached.catalog).toMatchObject({
      version: forced.catalog_version,
      hash: forced.catalog_hash,
      entries: forced.tiers.st.files + forced.tiers.lt.files,
    });
    expect(cached.tiers).toMatchObject(forced.tiers);
    rmSync(ctx.paths.catalogSummary);
    const parsed = await readStatus(ctx);
    expect(parsed.catalog).toEqual(cached.catalog);
    expect(parsed.tiers).toEqual(cached.tiers);
    expect(existsSync(ctx.paths.catalogSummary)).toBe(false);
  });

  it("finds a damaged catalog even with a summary cached for the old bytes", async () => {
    await feed(30);
    const ctx = await openContext({ repo });
    await runCycle(ctx, { force: true });
    expect(existsSync(ctx.paths.catalogSummary)).toBe(true);
    const catalogPath = join(repo, "memory", "catalog.json");
    const damaged = readFileSync(catalogPath, "utf8").replace(/"bytes": \d+/, '"bytes": -1');
    writeFileSync(catalogPath, damaged);
    await expect(runCycle(ctx)).rejects.toThrow(/memory\/catalog\.json: entries\.0\.bytes/);
    await expect(readStatus(ctx)).rejects.toThrow(/memory\/catalog\.json: entries\.0\.bytes/);
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
