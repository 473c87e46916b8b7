import { gitOutput, gitText } from "./git-child.js";

/** One commit of the history, with the paths it changed. */
export interface LoggedCommit {
  sha: string;
  /** Committer time, seconds since 1970. */
  at: number;
  email: string;
  name: string;
  files: string[];
}

// Fields separated by a unit separator; each commit starts with a record separator.
const FORMAT = "%x1e%H%x1f%ct%x1f%ae%x1f%an";

/**
 * Commits reachable from HEAD, newest first, with the files each changed (merges omitted:
 * their changes are counted on the commits that made them). The user's git is used because
 * a full `--name-only` log is far faster there than through in-process object reads.
 */
export async function logWithFiles(repoDir: string, maxCount: number): Promise<LoggedCommit[]> {
  if (!(await hasHead(repoDir))) return [];
  const stdout = await gitOutput(repoDir, [
    "log",
    "--no-merges",
    "--name-only",
    `--max-count=${maxCount}`,
    `--format=${FORMAT}`,
    "HEAD",
  ]);
  return parse(stdout);
}

/**
 * When each file under `prefix` first reached the current branch's first-parent history:
 * for a merged PR that is the merge, for a direct commit the commit itself.
 */
export async function firstAdded(
  repoDir: string,
  prefix: string,
  ref = "HEAD",
): Promise<Map<string, number>> {
  const added = new Map<string, number>();
  if (!(await hasHead(repoDir))) return added;
  const stdout = await gitOutput(repoDir, [
    "log",
    "--first-parent",
    "-m",
    "--diff-filter=A",
    "--name-only",
    `--format=${FORMAT}`,
    ref,
    "--",
    prefix,
  ]);
  // Newest first: the last time seen for a path is its first addition.
  for (const commit of parse(stdout)) for (const file of commit.files) added.set(file, commit.at);
  return added;
}

export async function headSha(repoDir: string): Promise<string | null> {
  const stdout = await gitText(repoDir, ["rev-parse", "--verify", "-q", "HEAD"]);
  return stdout?.trim() || null;
}

async function hasHead(repoDir: string): Promise<boolean> {
  return (await headSha(repoDir)) !== null;
}

function parse(stdout: string): LoggedCommit[] {
  const commits: LoggedCommit[] = [];
  for (const record of stdout.split("\x1e")) {
    if (record.trim() === "") continue;
    const [header, ...rest] = record.split("\n");
    const [sha, at, email, name] = (header ?? "").split("\x1f");
    if (!sha || !at) continue;
    commits.push({
      sha,
      at: Number(at),
      email: (email ?? "").toLowerCase(),
      name: name ?? "",
      files: rest.filter((line) => line.trim() !== ""),
    });
  }
  return commits;
}
