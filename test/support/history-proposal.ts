import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  classifyHistory,
  commitEnvelopes,
  routedHistory,
} from "../../src/core/history/git-events.js";
import { logRange } from "../../src/git/log.js";
import { director, type Env, succeeded } from "./bins.js";
import { git, type TempRepo } from "./repo.js";

/** The title of the one decision `importWithProposal` leaves proposed. */
export const PROPOSED_TITLE = "Switch the lockfile format to v3 by default";

/**
 * A three-commit history imported and compacted through the bins, with the classifier's
 * confidence of one decision (`PROPOSED_TITLE`) set low, as the classifier states it: what
 * `ingest --from-git` writes for such a history. Returns the proposed commit's full sha.
 */
export async function importWithProposal(repo: TempRepo, env: Env): Promise<string> {
  const commit = (message: string, file: string) => {
    repo.write(file, `${message}\n`);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", message]);
  };
  commit("Start the parser", "src/parse.ts");
  commit("Use zod for every schema instead of hand-written checks", "src/schema.ts");
  commit(PROPOSED_TITLE, "package.json");
  const commits = await logRange(repo.dir, "main");
  const read = classifyHistory(commits).map((r) =>
    r.cls.decision && r.subject === PROPOSED_TITLE
      ? { ...r, cls: { ...r.cls, decision: { ...r.cls.decision, confidence: 0.3 } } }
      : r,
  );
  const routed = routedHistory(commits, read, 0.6);
  const lines: string[] = [];
  commits.forEach((c, i) => {
    for (const env of commitEnvelopes(c, lines.length, undefined, routed[i])) {
      lines.push(JSON.stringify(env));
    }
  });
  const file = join(repo.dir, "..", `${repo.dir.split("/").pop()}-import.ndjson`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  succeeded(await director(["init"], { cwd: repo.dir, env }));
  succeeded(await director(["ingest", file], { cwd: repo.dir, env }));
  succeeded(await director(["run"], { cwd: repo.dir, env }));
  return git(repo.dir, ["rev-parse", "HEAD"]).trim();
}
