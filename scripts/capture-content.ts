/**
 * `npm run build && node dist/scripts/capture-content.js MIRRORS [NAME...]`: gives each commit
 * of the labelled histories (test/fixtures/history-corpus) what its files say beyond their
 * paths, as `ingest --from-git` reads them (git/content-reads.ts): the dependencies its
 * manifests added and removed (core/history/dependencies.ts) and the settings its CI,
 * deployment and install files changed (core/history/settings.ts), against its first parent,
 * not a bot's, at most eight files of a kind. MIRRORS holds a clone of each history's
 * repository as `<owner>+<name>/repo` (a bare clone will do). Prints only counts: a held-out
 * history is captured like the others, and nothing of it is shown.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyChange } from "../src/core/history/dependencies.js";
import { settingChanges } from "../src/core/history/settings.js";
import { filesRead, MAX_READ_BYTES, readableTexts } from "../src/git/content-reads.js";
import { rawChanges } from "../src/git/log.js";
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

/** A blob's text; undefined for none, null where the import would not read it (over its bound). */
function blob(repo: string, id: string): string | undefined | null {
  if (/^0+$/.test(id)) return undefined;
  if (Number(git(repo, ["cat-file", "-s", id])) > MAX_READ_BYTES) return null;
  return git(repo, ["cat-file", "blob", id]);
}

function capture(name: string, mirrors: string) {
  const file = join(DIR, `${name}.json`);
  const corpus = JSON.parse(readFileSync(file, "utf8")) as Corpus;
  const repo = join(mirrors, `${corpus.repository.replace("/", "+")}`, "repo");
  const counts = { commits: corpus.commits.length, dependencies: 0, settings: 0 };
  for (const c of corpus.commits) {
    delete c.dependencies;
    delete c.settings;
    // The import reads no bot's files: its commits are dependency bumps.
    if (c.bot) continue;
    const sha = git(repo, ["rev-parse", `${c.sha}^{commit}`]).trim();
    const parent = git(repo, ["rev-list", "--parents", "-n", "1", sha]).trim().split(" ")[1];
    const raw = parent
      ? git(repo, ["diff-tree", "-r", "--no-renames", "--no-abbrev", parent, sha])
      : git(repo, ["diff-tree", "-r", "--root", "--no-renames", "--no-abbrev", sha]);
    // The same `--raw` lines the import's log gives, read by the same code.
    const reads = rawChanges(raw).reads;
    if (reads === undefined) continue;
    const files = filesRead(reads);
    const textOf = (id: string) => blob(repo, id);
    const dependencies = dependencyChange(readableTexts(files.manifests, textOf));
    const settings = settingChanges(readableTexts(files.settings, textOf));
    if (dependencies !== undefined) {
      c.dependencies = dependencies;
      counts.dependencies++;
    }
    if (settings !== undefined) {
      c.settings = settings;
      counts.settings++;
    }
  }
  writeFileAtomicSync(file, `${JSON.stringify(corpus, null, 2)}\n`, 0o644);
  return counts;
}

const [mirrors, ...names] = process.argv.slice(2);
if (mirrors === undefined) {
  process.stderr.write("usage: capture-content MIRRORS [NAME...]\n");
  process.exit(2);
}
for (const name of names.length > 0 ? names : CORPUS_HISTORIES) {
  const { commits, dependencies, settings } = capture(name, mirrors);
  process.stdout.write(
    `${name}: ${commits} commits, ${dependencies} with dependencies changed, ${settings} with settings changed\n`,
  );
}
