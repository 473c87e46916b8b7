import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import { ingestSource } from "../../src/director/ingest.js";
import { initRepository } from "../../src/director/init.js";
import { git } from "../support/repo.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "engram-chunks-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function repo(name: string): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q"]);
  initRepository(await openContext({ repo: dir }));
  return dir;
}

/** Every 500th line is not JSON; blank lines and CRLF here and there; some 1,000 bytes each. */
function lines(count: number): string[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    if (i % 500 === 0) return `not json ${i}`;
    if (i % 777 === 0) return "";
    const note = JSON.stringify({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_note.v1",
      sent_at: "2026-11-29T10:00:00.000Z",
      sender: { role: "worker", id: "w-1" },
      seq: i,
      event_id: `e-${i}`,
      payload: { kind: "fact", text: `fact ${i} ${"y".repeat(900)}` },
    });
    return i % 3 === 0 ? `${note}\r` : note;
  });
}

describe("a stream read in chunks", () => {
  it("numbers and stores its lines alike however its reads are cut", async () => {
    process.env.SOURCE_DATE_EPOCH = "1795000000";
    try {
      const text = `${lines(5_000).join("\n")}\n`;
      const file = join(root, "in.ndjson");
      writeFileSync(file, text);
      const whole = await repo("whole");
      await ingestSource(await openContext({ repo: whole }), { path: file, name: "in" });
      // Reads shorter than a chunk (joined until one is full), a line cut across reads, and
      // reads that end exactly at a line end.
      const cuts = [700_000, 1_300_000, 1_300_001, 2_600_000, 2_600_123, 4_000_000];
      const firstEnd = text.indexOf("\n", 3_000_000) + 1;
      cuts.push(firstEnd, text.indexOf("\n", firstEnd + 1_100_000) + 1);
      cuts.sort((a, b) => a - b);
      const pieces = [0, ...cuts].map((from, i) => text.slice(from, cuts[i] ?? text.length));
      const cut = await repo("cut");
      await ingestSource(await openContext({ repo: cut }), {
        stream: Readable.from(pieces.filter((p) => p.length > 0)),
        name: "in",
      });
      const read = (dir: string, file: string) => readFileSync(join(dir, ".engram", file), "utf8");
      expect(read(cut, "buffer/journal.ndjson")).toBe(read(whole, "buffer/journal.ndjson"));
      const quarantined = (dir: string) =>
        read(dir, "quarantine.ndjson")
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { line: number }).line);
      const expected = Array.from({ length: 10 }, (_, k) => 500 * (k + 1));
      expect(quarantined(whole)).toEqual(expected);
      expect(quarantined(cut)).toEqual(expected);
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
  });
});
