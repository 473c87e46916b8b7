/**
 * The repositories the retrieval benchmark asks, each built through the real command lines:
 * the notes set as agent-bus envelopes ingested and compacted, and each labelled history as a
 * real git repository imported with `ingest --from-git`. Then `worker recall` per question.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
// The bins by the package root, not by this module's folder: the tests import it from source.
import { DIRECTOR_BIN as DIRECTOR_CLI, WORKER_BIN as WORKER_CLI } from "../test/support/bins.js";
import { loadCorpus, writeCorpusRepo } from "../test/support/history-corpus.js";
import type { BenchNote, HistoryName } from "./retrieval-sets.js";
import { runNode } from "./util.js";

/** Receipt time of every Director command here (2026-11-18T11:06:40Z), for identical runs. */
const EPOCH = 1_795_000_000;
/** The notes were written over ~6 weeks before it, one every 100 minutes. */
const NOTES_FROM = Date.UTC(2026, 9, 1);
const NOTE_EVERY_MS = 100 * 60 * 1000;

const GIT_ENV: NodeJS.ProcessEnv = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Bench Maintainer",
  GIT_AUTHOR_EMAIL: "bench@engram.invalid",
  GIT_COMMITTER_NAME: "Bench Maintainer",
  GIT_COMMITTER_EMAIL: "bench@engram.invalid",
  GIT_AUTHOR_DATE: `@${EPOCH} +0000`,
  GIT_COMMITTER_DATE: `@${EPOCH} +0000`,
};

export const BENCH_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  ...GIT_ENV,
  SOURCE_DATE_EPOCH: String(EPOCH),
};

function git(repo: string, args: readonly string[]): string {
  return execFileSync("git", [...args], { cwd: repo, env: BENCH_ENV, encoding: "utf8" });
}

/** What the Director's commands reported while the repository was built. */
export interface BuildReport {
  events: number;
  compacted_events: number;
  engrams_written: number;
  engrams_evicted: number;
  quarantined: number;
}

async function director<T>(repo: string, args: readonly string[]): Promise<T> {
  const run = await runNode([DIRECTOR_CLI, ...args, "--repo", repo, "--json"], { env: BENCH_ENV });
  if (run.code !== 0) {
    throw new Error(
      `director ${args.join(" ")} exited with ${run.code}: ${run.stderr.slice(-2000)}`,
    );
  }
  return JSON.parse(run.stdout) as T;
}

interface IngestJson {
  accepted?: number;
  events?: number;
  quarantined?: number;
}
interface RunJson {
  compacted_events: number;
  engrams_written: number;
  engrams_evicted: number;
}

async function initRepo(repo: string): Promise<void> {
  execFileSync("git", ["init", "-q", "-b", "main", repo], { env: BENCH_ENV });
  await director(repo, ["init"]);
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", "engram: init"]);
}

async function ingestAndRun(repo: string, ingestArgs: readonly string[]): Promise<BuildReport> {
  const ingested = await director<IngestJson>(repo, ["ingest", ...ingestArgs]);
  const ran = await director<RunJson>(repo, ["run", "--flush"]);
  git(repo, ["add", "-A", "memory", "MEMORY.md"]);
  git(repo, ["commit", "-q", "-m", "engram: memory"]);
  return {
    events: ingested.accepted ?? ingested.events ?? 0,
    compacted_events: ran.compacted_events,
    engrams_written: ran.engrams_written,
    engrams_evicted: ran.engrams_evicted,
    quarantined: ingested.quarantined ?? 0,
  };
}

/** The `memory_note.v1` envelope lines of the notes, in the (hashed) order they were sent. */
export function noteEnvelopes(notes: readonly BenchNote[]): string[] {
  const digest = (id: string) => createHash("sha256").update(id).digest("hex");
  const order = [...notes].sort((a, b) => (digest(a.id) < digest(b.id) ? -1 : 1));
  return order.map((n, i) =>
    JSON.stringify({
      schema_version: "agentbus-envelope/v1",
      message_type: "memory_note.v1",
      sent_at: new Date(NOTES_FROM + i * NOTE_EVERY_MS).toISOString(),
      sender: { role: "worker", id: n.sender },
      seq: i + 1,
      event_id: `retrieval-${n.id}`,
      payload: {
        kind: n.kind,
        text: n.text,
        ...(n.rationale === undefined ? {} : { rationale: n.rationale }),
        topics: n.topic === null ? [] : [n.topic],
      },
    }),
  );
}

/** A fresh repository at `repo` holding the notes as memory: init, ingest FILE, run --flush. */
export async function buildNotesRepo(
  repo: string,
  notes: readonly BenchNote[],
): Promise<BuildReport> {
  await initRepo(repo);
  const file = join(repo, "..", "notes.ndjson");
  writeFileSync(file, `${noteEnvelopes(notes).join("\n")}\n`);
  return ingestAndRun(repo, [file]);
}

/**
 * A labelled history as a real repository at `repo` (its commits oldest first, messages
 * verbatim, each touching a small file), then init, `ingest --from-git main`, run --flush.
 * Returns what was built and each corpus sha's full sha in the new repository.
 */
export async function buildHistoryRepo(
  repo: string,
  name: HistoryName,
): Promise<{ report: BuildReport; shas: Map<string, string> }> {
  execFileSync("git", ["init", "-q", "-b", "main", repo], { env: BENCH_ENV });
  // The set's figures were measured on these repositories as first written: a file per commit.
  const written = writeCorpusRepo(repo, loadCorpus(name), { paths: "synthetic" });
  // Each commit was given its own time: the time tells the new sha of each corpus commit.
  const byTime = new Map<number, string>();
  for (const line of git(repo, ["log", "--format=%H %at", "main"]).trim().split("\n")) {
    const [sha, at] = line.split(" ");
    if (sha && at) byTime.set(Number(at), sha);
  }
  const shas = new Map<string, string>();
  for (const { commit, at } of written) {
    const sha = byTime.get(at);
    if (sha) shas.set(commit.sha, sha);
  }
  await director(repo, ["init"]);
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", "engram: init"]);
  return { report: await ingestAndRun(repo, ["--from-git", "main"]), shas };
}

let maxTokensFlag: boolean | undefined;

/** Whether this build's `worker recall` takes `--max-tokens` (the note-level recall adds it). */
export async function recallTakesMaxTokens(): Promise<boolean> {
  if (maxTokensFlag === undefined) {
    const help = await runNode([WORKER_CLI, "recall", "--help"]);
    maxTokensFlag = `${help.stdout}${help.stderr}`.includes("--max-tokens");
  }
  return maxTokensFlag;
}

/** `worker recall QUESTION --json --limit 5 --no-signal [--max-tokens 512]`, its JSON. */
export async function askEngram(
  repo: string,
  question: string,
  maxTokens: number,
): Promise<unknown> {
  const args = [WORKER_CLI, "recall", question, "--json", "--limit", "5", "--no-signal"];
  if (await recallTakesMaxTokens()) args.push("--max-tokens", String(maxTokens));
  const run = await runNode([...args, "--repo", repo], { env: BENCH_ENV });
  if (run.code !== 0) {
    throw new Error(
      `worker recall "${question}" exited with ${run.code}: ${run.stderr.slice(-1000)}`,
    );
  }
  return JSON.parse(run.stdout) as unknown;
}

/** Runs `work` over `items`, at most `limit` at a time, results in the items' order. */
export async function inPool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
