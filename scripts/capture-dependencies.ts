/**
 * `npm run build && node dist/scripts/capture-dependencies.js MIRRORS [NAME...]`: gives each
 * commit of the labelled histories (test/fixtures/history-corpus) the dependencies its
 * manifests added and removed, as `ingest --from-git` reads them (git/dependency-reads.ts):
 * the manifests it changed against its first parent, not a bot's, at most eight, compared by
 * core/history/dependencies.ts. MIRRORS holds a clone of each history's repository as
 * `<owner>+<name>/repo` (a bare clone will do). Prints only counts: a held-out history is
 * captured like the others, and nothing of it is shown.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyChange, isReadManifest } from "../src/core/history/dependencies.js";
import { MAX_MANIFEST_BYTES, MAX_MANIFESTS_PER_COMMIT } from "../src/git/dependency-reads.js";
import { writeFileAtomicSync } from "../src/state/atomic.js";
import { ROOT } from "../test/support/bins.js";
import { CORPUS_HISTORIES, type Corpus } from "../test/support/history-corpus.js";

const DIR = join(ROOT, "test", "fixtures", "history-corpus");

function git(repo: string, args: string[]): string {
  return execFileSync("git", ["-C", repo, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
    stdio: ["ignore", "pipe", "ignore"],
  });
}

/** A blob's text; null where the import would not read it (over its size bound). */
function blob(repo: string, id: string): string | undefined | null {
  if (/^0+$/.test(id)) return undefined;
  if (Number(git(repo, ["cat-file", "-s", id])) > MAX_MANIFEST_BYTES) return null;
  return git(repo, ["cat-file", "blob", id]);
}

function capture(name: string, mirrors: string): { commits: number; changed: number } {
  const file = join(DIR, `${name}.json`);
  const corpus = JSON.parse(readFileSync(file, "utf8")) as Corpus;
  const repo = join(mirrors, `${corpus.repository.replace("/", "+")}`, "repo");
  let changed = 0;
  for (const c of corpus.commits) {
    delete c.dependencies;
    // The import reads no bot's manifests: its commits are dependency bumps.
    if (c.bot) continue;
    const sha = git(repo, ["rev-parse", `${c.sha}^{commit}`]).trim();
    const parent = git(repo, ["rev-list", "--parents", "-n", "1", sha]).trim().split(" ")[1];
    const raw = parent
      ? git(repo, ["diff-tree", "-r", "--no-renames", "--no-abbrev", parent, sha])
      : git(repo, ["diff-tree", "-r", "--root", "--no-renames", "--no-abbrev", sha]);
    const manifests = raw
      .split("\n")
      .filter((l) => l.startsWith(":"))
      .map((l) => {
        const tab = l.indexOf("\t");
        const [, , before = "", after = ""] = l.slice(1, tab).split(" ");
        return { path: l.slice(tab + 1), before, after };
      })
      .filter((m) => isReadManifest(m.path));
    if (manifests.length === 0 || manifests.length > MAX_MANIFESTS_PER_COMMIT) continue;
    const read = manifests.map((m) => ({
      path: m.path,
      before: blob(repo, m.before),
      after: blob(repo, m.after),
    }));
    // As the import does, a manifest with a side too large to read is left out.
    const change = dependencyChange(
      read
        .filter((m) => m.before !== null && m.after !== null)
        .map((m) => ({
          path: m.path,
          ...(typeof m.before === "string" ? { before: m.before } : {}),
          ...(typeof m.after === "string" ? { after: m.after } : {}),
        })),
    );
    if (change === undefined) continue;
    c.dependencies = change;
    changed++;
  }
  writeFileAtomicSync(file, `${JSON.stringify(corpus, null, 2)}\n`, 0o644);
  return { commits: corpus.commits.length, changed };
}

const [mirrors, ...names] = process.argv.slice(2);
if (mirrors === undefined) {
  process.stderr.write("usage: capture-dependencies MIRRORS [NAME...]\n");
  process.exit(2);
}
for (const name of names.length > 0 ? names : CORPUS_HISTORIES) {
  const { commits, changed } = capture(name, mirrors);
  process.stdout.write(`${name}: ${commits} commits, ${changed} with dependencies changed\n`);
}
