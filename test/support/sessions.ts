import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TempRepo } from "./repo.js";

/**
 * Appends items to a session's buffer in its documented format (docs/formats.md): a fast way
 * to fill one with many items, where one `worker session write` per item would take minutes.
 */
export function fillBuffer(repo: TempRepo, id: string, items: Record<string, unknown>[]): void {
  const lines = items.map(
    (item) =>
      `${JSON.stringify({ type: "item", written_at: "2025-11-23T00:00:00.000Z", redactions: 0, ...item })}\n`,
  );
  appendFileSync(join(repo.dir, ".engram", "sessions", `${id}.ndjson`), lines.join(""));
}

/** Every file under memory/ and MEMORY.md: path -> text. */
export function memoryTree(repo: TempRepo): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, rel: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(join(dir, entry.name), path);
      else out.set(path, readFileSync(join(dir, entry.name), "utf8"));
    }
  };
  walk(join(repo.dir, "memory"), "memory");
  out.set("MEMORY.md", readFileSync(join(repo.dir, "MEMORY.md"), "utf8"));
  return out;
}
