/**
 * The pull requests a history itself records: a merge commit `Merge pull request #N from x/y`
 * holds the request's title in its body, and brings in the commits of its branch. A terse
 * commit's decision takes its reason from that title: what the git history holds, never the
 * network. Pure.
 */

/** What the linking needs of a commit (oldest first in the lists given). */
export interface LinkedCommit {
  sha: string;
  message: string;
  /** Full shas of the parents, first parent first; absent when unknown. */
  parentShas?: readonly string[];
}

export interface PullRequestLinks {
  /** Pull request number -> its title, from the merge commits of the history. */
  titles: ReadonlyMap<number, string>;
  /** Commit sha -> the pull request whose merge brought it into the main line (branch commits). */
  member: ReadonlyMap<string, number>;
}

const MERGE_PR = /^Merge pull request #(\d+)\b/i;

/** The title of a `Merge pull request #N` commit's message: its body's first line. */
export function mergeTitle(message: string): { pr: number; title: string } | undefined {
  const text = message.replace(/\r\n?/g, "\n").trim();
  const subject = text.split("\n")[0] ?? "";
  const m = MERGE_PR.exec(subject);
  if (!m) return undefined;
  const title = text.slice(subject.length).trim().split("\n")[0]?.trim() ?? "";
  // "Merge rebased 4.x.x branch into master" names a merge, not a change.
  return title === "" || /^Merge\b/i.test(title) ? undefined : { pr: Number(m[1]), title };
}

/**
 * The titles of the merged pull requests, and which commits each merge brought into the
 * first-parent line of the history: walking from a merge's second parent until that line or
 * a commit already placed. Bounded: every commit is visited once.
 */
export function linkPullRequests(commits: readonly LinkedCommit[]): PullRequestLinks {
  const titles = new Map<number, string>();
  const member = new Map<string, number>();
  const bySha = new Map<string, LinkedCommit>();
  for (const c of commits) bySha.set(c.sha, c);
  // The first-parent line from the newest commit: what is on it was not brought by a branch.
  const mainline = new Set<string>();
  for (let c = commits.at(-1); c !== undefined && !mainline.has(c.sha); ) {
    mainline.add(c.sha);
    const first = c.parentShas?.[0];
    c = first === undefined ? undefined : bySha.get(first);
  }
  for (const c of commits) {
    const merged = mergeTitle(c.message);
    if (merged === undefined) continue;
    titles.set(merged.pr, merged.title);
    // Oldest first, main line only: a commit belongs to the first merge that brought it there
    // (stacked branches each keep their own), a pull request merged into another's branch to
    // the one that landed.
    if (!mainline.has(c.sha)) continue;
    const stack = [...(c.parentShas ?? []).slice(1)];
    while (stack.length > 0) {
      const sha = stack.pop() as string;
      if (mainline.has(sha) || member.has(sha)) continue;
      const branch = bySha.get(sha);
      if (branch === undefined) continue;
      member.set(sha, merged.pr);
      stack.push(...(branch.parentShas ?? []));
    }
  }
  return { titles, member };
}
