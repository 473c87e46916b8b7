/**
 * A newcomer's trial of the README's agent loop ("Memory at the start of an agent's
 * session"): an agent that knows only the snippet, taken from README.md, and what the commands
 * print, runs it in every checkout a user has: the Director's own right after `director run`,
 * a worker's branch after main moved, and a fresh clone. Each must end with `worker check`
 * exit 0 within a few steps; a loop (check asks for a sync, sync has nothing to do) fails.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, ROOT } from "../support/bins.js";
import { git, TempDirs } from "../support/repo.js";
import { linkBins, runShellSteps, type ShellStep } from "../support/shell-block.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

interface Rule {
  /** What `worker check` prints that the rule answers. */
  says: string;
  /** The command to run, or the start of the command the output prints. */
  run: string;
  printed: boolean;
}

/** The snippet's start command and its rules, read from README.md as an agent reads them. */
function readSnippet(): { start: string; rules: Rule[] } {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf("## Memory at the start of an agent's session");
  const open = readme.indexOf("```markdown\n", at);
  const close = readme.indexOf("\n```", open + 12);
  expect(at >= 0 && open > at && close > open, "README: the agent snippet").toBe(true);
  const text = readme.slice(open + 12, close).replace(/\n {2}/g, " ");
  const start = /run `([^`]+)`, and read what it prints/.exec(text)?.[1];
  expect(start, "README: the command an agent starts with").toBeDefined();
  const rules: Rule[] = [];
  for (const line of text.split("\n")) {
    const m = /^- If .*?says `([^`]+)`.*?, run (the )?`([^`]+)`( it prints)?/.exec(line);
    if (m) rules.push({ says: m[1] as string, run: m[3] as string, printed: m[4] !== undefined });
  }
  return { start: start as string, rules };
}

const SNIPPET = readSnippet();
let binDir: string;
let home: string;

function sh(cwd: string, command: string): ShellStep {
  const [step] = runShellSteps([command], { cwd, home, binDir });
  return step as ShellStep;
}

/**
 * The agent: runs the start command; on failure, the first rule whose words the output
 * shows, then the start command again. Returns the transcript; the last step is the start
 * command's last run.
 */
function agentSession(cwd: string): ShellStep[] {
  const transcript: ShellStep[] = [];
  for (let round = 0; round < 4; round++) {
    const check = sh(cwd, SNIPPET.start);
    transcript.push(check);
    if (check.status === 0) return transcript;
    const rule = SNIPPET.rules.find((r) => check.stdout.includes(r.says));
    if (rule === undefined) return transcript; // the README says: stop and report
    let command = rule.run;
    if (rule.printed) {
      const at = check.stdout.indexOf(rule.run);
      expect(at, `the output prints \`${rule.run}...\`:\n${check.stdout}`).toBeGreaterThan(-1);
      command = check.stdout.slice(at).split(/;|\n/)[0] as string;
    }
    const step = sh(cwd, command);
    transcript.push(step);
    // A sync that check asked for always does something.
    expect(step.stdout, `${command}\n${step.stderr}`).not.toMatch(/nothing to do/);
  }
  return transcript;
}

function expectEndsInSync(transcript: ShellStep[]): void {
  const last = transcript[transcript.length - 1] as ShellStep;
  const told = transcript.map((s) => `$ ${s.command}\n${s.status}\n${s.stdout}${s.stderr}`);
  expect(last.command, told.join("\n")).toBe(SNIPPET.start);
  expect(last.status, told.join("\n")).toBe(0);
  expect(last.stdout).toMatch(/^ok: memory matches catalog/);
  expect(last.stdout).toContain("# ");
}

describe("the README's agent loop, by a newcomer", () => {
  let director: string;
  let origin: string;

  beforeAll(() => {
    assertBuilt();
    binDir = linkBins(dirs.dir("engram-loop-bin-"));
    home = dirs.dir("engram-loop-home-");
    director = dirs.repo("engram-loop-director-").dir;
    origin = dirs.dir("engram-loop-origin-");
    git(origin, ["init", "-q", "--bare", "-b", "main"]);
    const setup = runShellSteps(
      [
        "director init",
        "printf '[memory]\\nbuffer_keep_recent_events = 0\\n' > config/dev.toml",
        'git add -A && git commit -qm "engram: init"',
        `git remote add origin ${origin} && git push -q origin main`,
      ],
      { cwd: director, home, binDir },
    );
    expect(
      setup.every((s) => s.status === 0),
      JSON.stringify(setup),
    ).toBe(true);
  });

  it("reads rules for a sync and for uncommitted memory in the snippet", () => {
    expect(SNIPPET.start).toBe("worker check && cat MEMORY.md");
    expect(SNIPPET.rules).toEqual([
      { says: "sync required", run: "worker sync", printed: false },
      {
        says: "memory not committed",
        run: "git add memory MEMORY.md && git commit",
        printed: true,
      },
    ]);
  });

  it("ends in sync in the Director's checkout right after director run", () => {
    for (const command of [
      'worker emit --kind lesson --text "Run the fs tests in forked workers" --topic testing',
      "director run --flush",
    ]) {
      expect(sh(director, command).status, command).toBe(0);
    }
    const transcript = agentSession(director);
    expect(transcript[0]?.stdout).toContain("memory not committed (uncommitted_memory)");
    expect(transcript[1]?.command).toMatch(/^git add memory MEMORY\.md && git commit -m /);
    expectEndsInSync(transcript);
    expect(transcript[transcript.length - 1]?.stdout).toContain("forked workers");
    // Nothing is left to commit, and the snippet's sync, if run anyway, says "in sync" once.
    expect(git(director, ["status", "--porcelain", "--", "memory", "MEMORY.md"])).toBe("");
    const sync = sh(director, "worker sync");
    expect(sync.status).toBe(0);
    expect(sync.stdout.match(/in sync/g) ?? []).toHaveLength(1);
  });

  it("ends in sync in a worker's branch after main moved", () => {
    expect(sh(director, "git push -q origin main").status).toBe(0);
    const workerDir = dirs.dir("engram-loop-worker-");
    git(workerDir, ["clone", "-q", origin, "."]);
    git(workerDir, ["checkout", "-q", "-b", "feature"]);
    expect(
      sh(workerDir, "echo work > feature.txt && git add -A && git commit -qm work").status,
    ).toBe(0);
    expect(agentSession(workerDir)).toHaveLength(1);

    for (const command of [
      'worker emit --kind decision --text "Use zod for every schema" --topic schema',
      "director run --flush",
      'git add memory MEMORY.md && git commit -qm "engram: memory" && git push -q origin main',
    ]) {
      expect(sh(director, command).status, command).toBe(0);
    }
    const transcript = agentSession(workerDir);
    expect(transcript[0]?.stdout).toContain("sync required (catalog_mismatch)");
    expect(transcript[1]?.command).toBe("worker sync");
    expect(transcript[1]?.stdout).toMatch(/^synced with origin\/main/);
    expectEndsInSync(transcript);
    expect(transcript[transcript.length - 1]?.stdout).toContain("Use zod for every schema");
  });

  it("ends in sync in a fresh clone", () => {
    const fresh = dirs.dir("engram-loop-clone-");
    git(fresh, ["clone", "-q", origin, "."]);
    const transcript = agentSession(fresh);
    expect(transcript).toHaveLength(1);
    expectEndsInSync(transcript);
  });
});
