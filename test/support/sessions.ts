import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type BinResult, jsonOf, succeeded, worker } from "./bins.js";
import type { TempRepo } from "./repo.js";

/** The bins' clock in the session tests: every receipt time is this one. */
export const SESSION_ENV = { SOURCE_DATE_EPOCH: "1763856000" };

/** Runs `worker` or `director` in the repository under `SESSION_ENV`; its output on failure. */
export async function binIn(
  run: typeof worker,
  repo: TempRepo,
  args: string[],
): Promise<BinResult> {
  return succeeded(await run(args, { cwd: repo.dir, env: SESSION_ENV }));
}

/**
 * A session started, each `[kind, text]` written with confidence 0.9 (above every rule's
 * threshold), then ended through the spool: its id.
 */
export async function endedSession(
  repo: TempRepo,
  items: readonly [kind: string, text: string][],
): Promise<string> {
  const start = jsonOf<{ session_id: string }>(
    await binIn(worker, repo, ["session", "start", "--json"]),
  );
  const id = start.session_id;
  for (const [kind, text] of items) {
    const args = ["--kind", kind, "--text", text, "--confidence", "0.9"];
    await binIn(worker, repo, ["session", "write", "--session", id, ...args]);
  }
  await binIn(worker, repo, ["session", "end", id]);
  return id;
}

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
