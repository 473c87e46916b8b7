/**
 * The write paths of the one-memory matrices (one-memory.test.ts, one-memory-sync.test.ts):
 * each records a decision (or, where the path has no decisions, a learning) holding a word of
 * its own, as a user of that path would.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { expect } from "vitest";
import { jsonOf } from "../support/bins.js";
import { note } from "../support/envelopes.js";
import { git, type TempRepo } from "../support/repo.js";
import { dir, expectExit, inputFile, wrk } from "./cli-harness.js";

/** Write path -> the word only its decision holds. */
export const WORDS = {
  "worker emit": "quokka",
  "director ingest (envelopes)": "axolotl",
  "worker session": "wombat",
  "MCP memory_emit": "pangolin",
  "director ingest --from-git": "narwhal",
  "director ingest --from-seed": "okapi",
} as const;
export type WritePath = keyof typeof WORDS;

/** The paths that say where their note may go (every one of them: private by default). */
export const STATES_PRIVACY: ReadonlySet<WritePath> = new Set([
  "worker emit",
  "director ingest (envelopes)",
  "worker session",
  "MCP memory_emit",
  "director ingest --from-git",
  "director ingest --from-seed",
]);

const seed = (word: string) => ({
  version: "1.0.0",
  identity: { principalName: "Ada", aiName: "Helper" },
  learned: {
    patterns: [
      {
        id: `pat_${word}`,
        content: `${word[0]?.toUpperCase()}${word.slice(1)} reviews happen before every release`,
        source: "session_2026-03-02",
        extractedAt: "2026-03-02T10:30:00Z",
        confirmedAt: "2026-03-02T10:35:00Z",
        confirmed: true,
        tags: ["release"],
      },
    ],
    insights: [],
    selfKnowledge: [],
  },
  state: { proposals: [] },
});

export interface WriteOptions {
  /** The word (default: the path's own, `WORDS`). */
  word?: string;
  /** Passed where the path takes one (`STATES_PRIVACY`); else the path's default. */
  privacy?: "public" | "private";
}

/** Records the path's decision in `repo`; durable once the caller runs the Director. */
export async function writeDecision(
  repo: TempRepo,
  mcp: Client,
  path: WritePath,
  options: WriteOptions = {},
): Promise<void> {
  const word = options.word ?? WORDS[path];
  const text = `Use ${word} builds for the release`;
  const privacy = options.privacy === undefined ? [] : ["--privacy", options.privacy];
  switch (path) {
    case "worker emit": {
      const args = ["emit", "--kind", "decision", "--text", text, "--rationale", "fast"];
      expectExit(await wrk(repo, [...args, ...privacy]), 0);
      return;
    }
    case "director ingest (envelopes)": {
      const file = inputFile(`notes-${word}.ndjson`, [
        note("decision", text, {
          rationale: "cheap",
          eventId: `ev-${word}`,
          ...(options.privacy !== undefined ? { privacy: options.privacy } : {}),
        }),
      ]);
      expectExit(await dir(repo, ["ingest", file, "--json"]), 0);
      return;
    }
    case "worker session": {
      const started = jsonOf<{ session_id: string }>(
        await wrk(repo, ["session", "start", "--name", `matrix-${word}`, "--json"]),
      );
      const id = started.session_id;
      const args = ["--kind", "decision", "--text", text, "--rationale", "weekly", ...privacy];
      expectExit(
        await wrk(repo, ["session", "write", "--session", id, ...args, "--confidence", "0.95"]),
        0,
      );
      expectExit(await wrk(repo, ["session", "end", id]), 0);
      return;
    }
    case "MCP memory_emit": {
      const r = await mcp.callTool({
        name: "memory_emit",
        arguments: {
          kind: "decision",
          text,
          rationale: "agents",
          ...(options.privacy !== undefined ? { privacy: options.privacy } : {}),
        },
      });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      return;
    }
    case "director ingest --from-git": {
      writeFileSync(join(repo.dir, `build-${word}.txt`), `${word}\n`);
      git(repo.dir, ["add", `build-${word}.txt`]);
      git(repo.dir, ["commit", "-qm", `Adopt ${word} builds instead of make`]);
      expectExit(await dir(repo, ["ingest", "--from-git", "main", "--json", ...privacy]), 0);
      return;
    }
    case "director ingest --from-seed": {
      const file = join(repo.dir, "..", `seed-${word}.json`);
      writeFileSync(file, JSON.stringify(seed(word)));
      expectExit(await dir(repo, ["ingest", "--from-seed", file, "--json", ...privacy]), 0);
      return;
    }
  }
}
