import { Readable } from "node:stream";
import type { RepoContext } from "../context/repo-context.js";
import { type GitCommitInfo, gitHistoryNdjson } from "../core/history/git-events.js";
import { changedPaths, commitsInRange, openRepo } from "../git/history.js";
import type { IngestCounts } from "../ingest/ingest.js";
import { ingestSource } from "./ingest.js";

export interface FromGitResult extends IngestCounts {
  range: string;
  commits: number;
  /** Envelopes built: one per commit plus one per trailer note. */
  events: number;
  buffer: { events: number; bytes: number };
}

/** The commits of a range, oldest first, with the files each changed against its first parent. */
export async function readGitRange(repoDir: string, range: string): Promise<GitCommitInfo[]> {
  const repo = await openRepo(repoDir);
  const commits = await commitsInRange(repo, range);
  const out: GitCommitInfo[] = [];
  for (const { oid, commit } of commits) {
    out.push({
      sha: oid,
      message: commit.message,
      committedAt: commit.committer.timestamp,
      files: await changedPaths(repo, commit.parent[0], oid),
    });
  }
  return out;
}

/**
 * `director ingest --from-git RANGE`: commit history as envelopes, through the normal ingest
 * path (validated, redacted, journalled, deduplicated by `git:<sha>` event ids).
 */
export async function ingestGitRange(ctx: RepoContext, range: string): Promise<FromGitResult> {
  const commits = await readGitRange(ctx.repoDir, range);
  const { text, events } = gitHistoryNdjson(commits);
  const counts = await ingestSource(ctx, { stream: Readable.from([text]), name: `git:${range}` });
  return { range, commits: commits.length, events, ...counts };
}
