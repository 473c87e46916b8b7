import { Readable } from "node:stream";
import type { RepoContext } from "../context/repo-context.js";
import { entityMatcher } from "../core/graph/entities.js";
import { type GitCommitInfo, gitHistoryNdjson } from "../core/history/git-events.js";
import { logRange } from "../git/log.js";
import { loadRegistry } from "../graph/registry.js";
import type { IngestCounts } from "../ingest/ingest.js";
import { ingestSource } from "./ingest.js";

export interface FromGitResult extends IngestCounts {
  range: string;
  commits: number;
  /** Envelopes built: one per commit, one per trailer note and one per inferred note. */
  events: number;
  buffer: { events: number; bytes: number };
  /** Lines that were worker notes rather than envelopes (snake_case: a `--json` key). */
  note_lines: number;
}

/** The commits of a range, oldest first, with the files each changed against its first parent. */
export async function readGitRange(repoDir: string, range: string): Promise<GitCommitInfo[]> {
  return logRange(repoDir, range);
}

/**
 * `director ingest --from-git RANGE`: commit history as envelopes, through the normal ingest
 * path (validated, redacted, journalled, deduplicated by `git:<sha>` event ids).
 */
export async function ingestGitRange(
  ctx: RepoContext,
  range: string,
  privacy: "public" | "private" = "private",
): Promise<FromGitResult> {
  const commits = await readGitRange(ctx.repoDir, range);
  // Areas are the registry's components where it names them, else top folders.
  const registry = loadRegistry(ctx.repoDir);
  const matcher =
    registry.components.length + registry.projects.length > 0 ? entityMatcher(registry) : undefined;
  const { text, events } = gitHistoryNdjson(
    commits,
    matcher?.areasOf,
    privacy,
    ctx.config.memory.history_min_confidence,
  );
  const { noteLines, ...counts } = await ingestSource(ctx, {
    stream: Readable.from([text]),
    name: `git:${range}`,
  });
  return { range, commits: commits.length, events, ...counts, note_lines: noteLines };
}
