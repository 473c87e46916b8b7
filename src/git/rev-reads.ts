/**
 * The few reads drift needs (a ref's commit and its time, the merge base, a range's length),
 * through the user's own `git`: `worker check` and `director status` start in a fraction of
 * the time loading the in-process git library takes. Every call runs in the engram repository
 * folder; a folder outside any git repository reads as "nothing there".
 */
import { EngramError } from "../errors.js";
import { gitText, runGitChild } from "./git-child.js";

/** A revision's commit and its committer time (seconds). */
export interface CommitTime {
  sha: string;
  time: number;
}

/** A revision fit for git's stdin or argument list: no option, no line break, no space. */
function plainRev(rev: string): boolean {
  return rev !== "" && !rev.startsWith("-") && !/\s/.test(rev);
}

/** Trimmed stdout of a git command, or undefined when it fails (or git is missing). */
async function gitLine(cwd: string, args: readonly string[]): Promise<string | undefined> {
  return (await gitText(cwd, args))?.trim();
}

/**
 * The commit of each revision (tags peeled) with its committer time, in one `git cat-file
 * --batch`; an entry is undefined when its revision names no commit. The whole answer is
 * undefined when `cwd` is not in a git repository.
 */
export async function commitTimes(
  cwd: string,
  revs: readonly string[],
): Promise<(CommitTime | undefined)[] | undefined> {
  // A revision git could misread is not asked: it names nothing.
  const asked = revs.filter(plainRev);
  const found = await batchCommits(cwd, asked);
  if (found === undefined) return undefined;
  return revs.map((r) => (plainRev(r) ? found[asked.indexOf(r)] : undefined));
}

async function batchCommits(
  cwd: string,
  revs: readonly string[],
): Promise<(CommitTime | undefined)[] | undefined> {
  const lines = revs.map((r) => `${r}^{commit}`);
  let answer: Awaited<ReturnType<typeof runGitChild>>;
  try {
    answer = await runGitChild(cwd, ["cat-file", "--batch"], {
      input: lines.length > 0 ? `${lines.join("\n")}\n` : "",
    });
  } catch (error) {
    if (error instanceof EngramError) throw error;
    return undefined;
  }
  return answer.code === 0 ? parseBatch(answer.stdout, revs.length) : undefined;
}

function parseBatch(all: Buffer, count: number): (CommitTime | undefined)[] {
  const out: (CommitTime | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const eol = all.indexOf(10, at);
    if (eol < 0) break;
    const header = all.subarray(at, eol).toString("utf8").split(" ");
    if (header[1] !== "commit") {
      // "<rev> missing" or "<rev> ambiguous": a one-line answer.
      out.push(undefined);
      at = eol + 1;
      continue;
    }
    const size = Number(header[2]);
    const body = all.subarray(eol + 1, eol + 1 + size).toString("utf8");
    const time = /^committer .* (-?\d+) [+-]\d{4}$/m.exec(body)?.[1];
    out.push(time === undefined ? undefined : { sha: header[0] as string, time: Number(time) });
    at = eol + 1 + size + 1;
  }
  while (out.length < count) out.push(undefined);
  return out;
}

/** One file's text at a commit, the path relative to `cwd`; undefined when absent. */
export async function textAt(cwd: string, sha: string, path: string): Promise<string | undefined> {
  if (!plainRev(sha)) return undefined;
  return gitText(cwd, ["cat-file", "blob", `${sha}:./${path}`]);
}

/** The best common ancestor of two commits (the least id of several), or undefined. */
export async function mergeBaseOf(cwd: string, a: string, b: string): Promise<string | undefined> {
  if (!plainRev(a) || !plainRev(b)) return undefined;
  const out = await gitLine(cwd, ["merge-base", "--all", a, b]);
  return out?.split("\n").filter(Boolean).sort()[0];
}

/** How many commits `to` has that `from` has not; undefined when either is unknown. */
export async function countBetween(
  cwd: string,
  from: string,
  to: string,
): Promise<number | undefined> {
  if (!plainRev(from) || !plainRev(to)) return undefined;
  const out = await gitLine(cwd, ["rev-list", "--count", `${from}..${to}`, "--"]);
  return out === undefined || !/^\d+$/.test(out) ? undefined : Number(out);
}
