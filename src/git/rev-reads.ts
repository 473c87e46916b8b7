/**
 * The few reads drift needs (a ref's commit and its time, the merge base, a range's length),
 * through the user's own `git`: `worker check` and `director status` start in a fraction of
 * the time loading the in-process git library takes. Every call runs in the engram repository
 * folder; a folder outside any git repository reads as "nothing there".
 */
import { EngramError } from "../errors.js";
import { gitText, runGitChild } from "./git-child.js";
import { hasNoRefs } from "./refs.js";

/** A revision that could be an abbreviated object id: git would look it up as one. */
const OBJECT_ID_LIKE = /^[0-9a-f]{4,64}$/i;

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
  return (await commitsWithFile(cwd, revs))?.map((c) =>
    c === undefined ? undefined : { sha: c.sha, time: c.time },
  );
}

/** A revision's commit, its committer time, and the text of one file in it (if it has it). */
export interface CommitWithFile extends CommitTime {
  text: string | undefined;
}

/** A file to read in some of the revisions: `path` relative to the folder git runs in. */
export interface FileInRevs {
  path: string;
  revs: readonly string[];
}

/**
 * `commitTimes`, and the text of `file.path` in each commit of `file.revs`, read in the same
 * `git cat-file --batch`: one git process where two were.
 */
export async function commitsWithFile(
  cwd: string,
  revs: readonly string[],
  file?: FileInRevs,
): Promise<(CommitWithFile | undefined)[] | undefined> {
  // A revision git could misread is not asked: it names nothing.
  const asked = revs.filter(plainRev);
  // A new repository: no name resolves, and no id could (there is no commit to name).
  if (asked.every((r) => !OBJECT_ID_LIKE.test(r)) && hasNoRefs(cwd))
    return revs.map(() => undefined);
  const wants = (r: string) => file?.revs.includes(r) === true;
  const lines = asked.flatMap((r) => [
    `${r}^{commit}`,
    ...(wants(r) ? [`${r}^{commit}:./${file?.path}`] : []),
  ]);
  const objects = await batchObjects(cwd, lines);
  if (objects === undefined) return undefined;
  let at = 0;
  const found = asked.map((r): CommitWithFile | undefined => {
    const commit = objects[at++];
    const blob = wants(r) ? objects[at++] : undefined;
    const time = commit?.type === "commit" ? committerTime(commit.body) : undefined;
    if (commit === undefined || time === undefined) return undefined;
    const text = blob?.type === "blob" ? blob.body.toString("utf8") : undefined;
    return { sha: commit.sha, time, text };
  });
  return revs.map((r) => (plainRev(r) ? found[asked.indexOf(r)] : undefined));
}

interface BatchObject {
  sha: string;
  type: string;
  body: Buffer;
}

/**
 * Each line's object as `git cat-file --batch` gives it; undefined where it names none. The
 * whole answer is undefined when git cannot run there.
 */
export async function batchObjects(
  cwd: string,
  lines: readonly string[],
): Promise<(BatchObject | undefined)[] | undefined> {
  let answer: Awaited<ReturnType<typeof runGitChild>>;
  try {
    answer = await runGitChild(cwd, ["cat-file", "--batch"], {
      input: lines.length > 0 ? `${lines.join("\n")}\n` : "",
    });
  } catch (error) {
    if (error instanceof EngramError) throw error;
    return undefined;
  }
  return answer.code === 0 ? parseBatch(answer.stdout, lines.length) : undefined;
}

function parseBatch(all: Buffer, count: number): (BatchObject | undefined)[] {
  const out: (BatchObject | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const eol = all.indexOf(10, at);
    if (eol < 0) break;
    const header = all.subarray(at, eol).toString("utf8").split(" ");
    const size = Number(header[2]);
    if (header.length !== 3 || !Number.isSafeInteger(size)) {
      // "<rev> missing" or "<rev> ambiguous": a one-line answer.
      out.push(undefined);
      at = eol + 1;
      continue;
    }
    const body = all.subarray(eol + 1, eol + 1 + size);
    out.push({ sha: header[0] as string, type: header[1] as string, body });
    at = eol + 1 + size + 1;
  }
  while (out.length < count) out.push(undefined);
  return out;
}

/** The committer time (seconds) of a commit object's text. */
function committerTime(body: Buffer): number | undefined {
  const time = /^committer .* (-?\d+) [+-]\d{4}$/m.exec(body.toString("utf8"))?.[1];
  return time === undefined ? undefined : Number(time);
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
