import { expect } from "vitest";
import { type BinResult, describeResult, director, worker } from "./bins.js";
import type { TempDirs, TempRepo } from "./repo.js";

/** The token the local Notion server accepts, and the Director's clock of sync bin tests. */
export const SYNC_TOKEN = "secret_cli_token";
export const SYNC_EPOCH = 1_767_607_200; // 2026-01-05T10:00:00Z

/** The environment of a sync bin: the token, and the clock moved `seconds` on. */
export function syncEnv(seconds = 0): Record<string, string> {
  return { NOTION_TOKEN: SYNC_TOKEN, SOURCE_DATE_EPOCH: String(SYNC_EPOCH + seconds) };
}

export function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

export const json = <T>(r: BinResult): T => JSON.parse(ok(r).stdout) as T;

/** A repository whose memory holds the given notes, compacted, with Notion's databases made. */
export async function notionSyncRepo(
  dirs: TempDirs,
  notes: readonly Record<string, unknown>[],
  url: string,
  perSecond = 50,
  /** More config lines: in `[sync]`, and after the `[sync.notion]` keys. */
  extra: {
    sync?: readonly string[];
    notion?: readonly string[];
    memory?: readonly string[];
    /** `[sync.notion] parent_page_id` (default "parent-page"). */
    parent?: string;
  } = {},
): Promise<TempRepo> {
  const repo = dirs.repo("engram-sync-");
  ok(await director(["init"], { cwd: repo.dir }));
  repo.writeConfig(
    [
      "[memory]",
      "buffer_keep_recent_events = 0",
      ...(extra.memory ?? []),
      "[sync]",
      'project = "demo"',
      ...(extra.sync ?? []),
      "[sync.notion]",
      `base_url = "${url}"`,
      `parent_page_id = "${extra.parent ?? "parent-page"}"`,
      `requests_per_second = ${perSecond}`,
      // The stand-in answers in milliseconds; a loaded machine may take seconds. 10 s is also
      // the most a recall waits for a store (src/sync/remote-search.ts).
      "timeout_seconds = 10",
      ...(extra.notion ?? []),
      "",
    ].join("\n"),
  );
  // An engram keeps at most 32 episodes: more notes are compacted 30 at a time.
  for (let i = 0; i < notes.length; i += 30) {
    const chunk = notes.slice(i, i + 30);
    const file = repo.write("notes.ndjson", `${chunk.map((n) => JSON.stringify(n)).join("\n")}\n`);
    ok(await worker(["emit", "--from", file], { cwd: repo.dir, env: syncEnv() }));
    ok(await director(["run", "--force"], { cwd: repo.dir, env: syncEnv() }));
  }
  ok(await director(["sync", "init", "--target", "notion"], { cwd: repo.dir, env: syncEnv() }));
  return repo;
}

/** A lesson note with an outcome (an episode), public unless said otherwise. */
export const episodeNote = (
  text: string,
  confidence: number,
  outcome: string,
  privacy = "public",
  topics = ["sync-test"],
) => ({ kind: "lesson", text, confidence, outcome, privacy, topics });
