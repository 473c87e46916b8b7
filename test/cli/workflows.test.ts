import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  assertBuilt,
  childEnv,
  DIRECTOR_BIN,
  describeResult,
  ROOT,
  runBin,
  WORKER_BIN,
} from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const ACTION = join(ROOT, "action.yml");
const WORKFLOWS = join(ROOT, ".github", "workflows");
const STATE_SCRIPT = join(ROOT, "scripts", "action-state.sh");

// ---- YAML: parsed with the `yaml` package (YAML 1.2, as GitHub reads workflows) ----------

type Doc = Record<string, unknown>;

function loadYaml(file: string): Doc {
  return parseYaml(readFileSync(file, "utf8")) as Doc;
}

/** The `on:` key, a plain string key in YAML 1.2 (YAML 1.1 parsers read it as true). */
function triggers(doc: Doc): Doc {
  return doc.on as Doc;
}

function steps(job: unknown): Doc[] {
  return ((job as Doc).steps ?? []) as Doc[];
}

describe("workflow and action YAML", () => {
  it("director.yml: scheduled and manual, one at a time, least permissions, full history", () => {
    const doc = loadYaml(join(WORKFLOWS, "director.yml"));
    const on = triggers(doc);
    expect(Object.keys(on).sort()).toEqual(["schedule", "workflow_dispatch"]);
    expect((on.schedule as Doc[])[0]?.cron).toMatch(/^\d+ \* \* \* \*$/);
    expect(doc.permissions).toEqual({});
    expect(doc.concurrency).toEqual({ group: "engram-director", "cancel-in-progress": false });
    const job = (doc.jobs as Doc).director as Doc;
    expect(job.permissions).toEqual({
      contents: "write",
      "pull-requests": "write",
      issues: "write",
    });
    const [checkout, node, engram] = steps(job);
    expect(checkout?.uses).toMatch(/^actions\/checkout@v\d+$/);
    expect(checkout?.with).toEqual({ "fetch-depth": 0 });
    expect(node?.with).toEqual({ "node-version": 24 });
    expect(engram?.uses).toBe("./");
    expect(engram?.with).toMatchObject({ role: "director", "state-branch": "engram-state" });
  });

  it("guard.yml: pull_request only, read-only token, full history", () => {
    const doc = loadYaml(join(WORKFLOWS, "guard.yml"));
    expect(Object.keys(triggers(doc))).toEqual(["pull_request"]);
    expect(doc.permissions).toEqual({ contents: "read" });
    const job = (doc.jobs as Doc).guard as Doc;
    expect(job.permissions).toBeUndefined();
    const all = steps(job);
    expect(all[0]?.with).toEqual({ "fetch-depth": 0 });
    expect(all.find((s) => s.uses === "./")?.with).toEqual({ role: "guard" });
  });

  it("no workflow uses pull_request_target, and each limits its token", () => {
    for (const name of ["ci.yml", "director.yml", "guard.yml", "sync.yml"]) {
      const doc = loadYaml(join(WORKFLOWS, name));
      expect(Object.keys(triggers(doc)), name).not.toContain("pull_request_target");
      expect(doc.permissions, name).toBeDefined();
    }
    expect(loadYaml(join(WORKFLOWS, "ci.yml")).permissions).toEqual({ contents: "read" });
  });

  it("action.yml: a composite action whose outputs come from a step that exists", () => {
    const doc = loadYaml(ACTION);
    const inputs = doc.inputs as Record<string, Doc>;
    expect(inputs.role?.required).toBe(true);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, not a template
    expect(inputs.token?.default).toBe("${{ github.token }}");
    expect(inputs.config?.default).toBe("config/dev.toml");
    expect(inputs.args?.default).toBe("");
    const runs = doc.runs as Doc;
    expect(runs.using).toBe("composite");
    const ids = new Set(steps(runs).map((s) => s.id));
    const outputs = doc.outputs as Record<string, Doc>;
    for (const name of ["pr-number", "catalog-version", "catalog-hash"]) {
      expect(outputs[name]?.value, name).toMatch(/^\$\{\{ steps\.engram\.outputs\.[a-z-]+ \}\}$/);
    }
    expect(ids.has("engram")).toBe(true);
    for (const step of steps(runs)) {
      if (step.uses !== undefined) {
        // Another's action runs pinned to a commit, never to a tag that can move.
        expect(String(step.uses), String(step.name)).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
        continue;
      }
      expect(step.shell, String(step.name)).toBe("bash");
      // Inputs go through env: an expression in the script text would be script injection.
      expect(String(step.run), String(step.name)).not.toContain("${{");
    }
  });
});

// ---- the action's main script, run as the runner would run it -------------------------------

/** The `run: |` block of the step with `id: engram`, by indentation (no YAML parser needed). */
function engramStepScript(): string {
  const lines = readFileSync(ACTION, "utf8").split("\n");
  const id = lines.findIndex((l) => /^\s+id: engram$/.test(l));
  const start = lines.findIndex((l, i) => i > id && /^\s+run: \|$/.test(l));
  const indent = ((lines[start] as string).match(/^\s*/)?.[0].length ?? 0) + 2;
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() !== "" && (line.match(/^\s*/)?.[0].length ?? 0) < indent) break;
    body.push(line.slice(indent));
  }
  return body.join("\n");
}

describe("the action's run step", () => {
  const temp = new TempDirs();
  let repo: TempRepo;
  let script: string;

  beforeAll(async () => {
    assertBuilt();
    script = join(temp.dir(), "engram-step.sh");
    writeFileSync(script, engramStepScript());
    repo = temp.repo();
    const init = await runBin(DIRECTOR_BIN, ["init", "--json"], { cwd: repo.dir });
    if (init.code !== 0) throw new Error(describeResult(init));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "init"]);
    git(repo.dir, ["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(repo.dir, ["checkout", "-qb", "feature"]);
    repo.write("MEMORY.md", "edited by hand\n");
    git(repo.dir, ["commit", "-qam", "a worker edits memory"]);
  });
  afterAll(() => temp.cleanup());

  function runStep(
    role: string,
    headRepo = "octo/repo",
    headRef = "feature",
    args = "",
    payload: unknown = { pull_request: { head: { repo: { full_name: headRepo } } } },
  ) {
    const dir = temp.dir();
    const event = join(dir, "event.json");
    writeFileSync(event, JSON.stringify(payload));
    const output = join(dir, "output");
    writeFileSync(output, "");
    const r = spawnSync("bash", [script], {
      cwd: repo.dir,
      encoding: "utf8",
      env: childEnv({
        GITHUB_ACTION_PATH: ROOT,
        GITHUB_WORKSPACE: repo.dir,
        GITHUB_REPOSITORY: "octo/repo",
        GITHUB_EVENT_PATH: event,
        GITHUB_BASE_REF: "main",
        GITHUB_HEAD_REF: headRef,
        GITHUB_OUTPUT: output,
        GITHUB_STEP_SUMMARY: join(dir, "summary"),
        RUNNER_TEMP: dir,
        ENGRAM_ROLE: role,
        ENGRAM_CONFIG: "config/dev.toml",
        ENGRAM_ARGS: args,
        GITHUB_ACTIONS: undefined,
      }),
    });
    const result = join(dir, "engram-result.json");
    return {
      code: r.status,
      stderr: r.stderr,
      stdout: r.stdout,
      outputs: readFileSync(output, "utf8"),
      summary: existsSync(join(dir, "summary")) ? readFileSync(join(dir, "summary"), "utf8") : "",
      result: existsSync(result) ? (JSON.parse(readFileSync(result, "utf8")) as Doc) : undefined,
    };
  }

  it("worker-check writes the catalog outputs", () => {
    const r = runStep("worker-check");
    expect(r.outputs, r.stderr).toContain("catalog-version=0\n");
    expect(r.outputs).toMatch(/catalog-hash=sha256:[0-9a-f]{64}\n/);
    expect(r.result?.catalog_version).toBe(0);
  });

  it("guard fails a worker branch that edits memory, with ok=false and the command's exit code", () => {
    const r = runStep("guard");
    expect(r.code, r.stderr).toBe(1);
    expect(r.outputs).toContain("ok=false\n");
    expect(r.result).toMatchObject({ ok: false, head_branch: "feature", director_branch: false });
  });

  it("guard does not take a fork's engram/* branch for the Director's", () => {
    const own = runStep("guard", "octo/repo", "engram/main");
    expect(own.result).toMatchObject({ head_branch: "engram/main", director_branch: true });
    const fork = runStep("guard", "mallory/repo", "engram/main");
    expect(fork.code).toBe(1);
    expect(fork.result).toMatchObject({
      head_branch: "fork:mallory/repo:engram/main",
      director_branch: false,
      ok: false,
    });
  });

  it("director runs run --pr: the branch is committed, the outputs and the budget table written", async () => {
    const note = await runBin(
      WORKER_BIN,
      ["emit", "--kind", "fact", "--text", "the action proposes memory"],
      { cwd: repo.dir },
    );
    expect(note.code, describeResult(note)).toBe(0);
    const second = await runBin(
      WORKER_BIN,
      ["emit", "--kind", "fact", "--text", "a reviewer rejects one item by a comment"],
      { cwd: repo.dir },
    );
    expect(second.code, describeResult(second)).toBe(0);
    repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
    const r = runStep("director", "octo/repo", "feature", "--force");
    expect(r.code, r.stderr).toBe(0);
    expect(r.result?.proposal).toMatchObject({ status: "created", branch: "engram/memory" });
    expect(r.outputs).toMatch(/catalog-version=[1-9]\d*\n/);
    expect(r.outputs).toMatch(/catalog-hash=sha256:[0-9a-f]{64}\n/);
    expect(r.outputs).toContain("pr-number=\n");
    expect(r.summary).toMatch(/\| short-term \(ST\) \| 0 → 1 of/);
    // Knowledge first in the job summary too: the pull request's title line.
    expect(r.summary).toContain("**memory: +2 facts**");
    expect(git(repo.dir, ["rev-parse", "--verify", "engram/memory"]).trim()).toMatch(
      /^[0-9a-f]{40}$/,
    );

    // role review: a collaborator's `/engram reject ID` comment takes the item off the branch.
    const review = r.result?.proposal as { review: { knowledge: { id: string }[] } };
    const id = review.review.knowledge[0]?.id as string;
    const comment = {
      action: "created",
      issue: { number: 3, pull_request: { url: "https://api.github.com/repos/octo/repo/pulls/3" } },
      comment: {
        body: `/engram reject ${id}`,
        user: { login: "octo" },
        author_association: "COLLABORATOR",
      },
    };
    const rejected = runStep("review", "octo/repo", "", "", comment);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.result?.item).toEqual({ action: "reject", ids: [id], user: "octo", pull: 3 });
    expect(rejected.summary).toContain("**memory: +1 fact**");
  });

  it("refuses an unknown role", () => {
    const r = runStep("janitor");
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      "::error title=engram::input role must be director, review, guard, worker-check or sync",
    );
  });
});

// ---- the state branch -------------------------------------------------------------------------

describe("scripts/action-state.sh", () => {
  const temp = new TempDirs();
  let origin: string;
  afterAll(() => temp.cleanup());

  beforeAll(() => {
    origin = temp.dir("engram-origin-");
    git(origin, ["init", "-q", "--bare", "-b", "main"]);
    const seed = temp.repo();
    seed.write("README.md", "x\n");
    git(seed.dir, ["add", "-A"]);
    git(seed.dir, ["commit", "-qm", "seed"]);
    git(seed.dir, ["push", "-q", origin, "main"]);
  });

  function clone(): { dir: string; runnerTemp: string } {
    const dir = join(temp.dir(), "work");
    git(ROOT, ["clone", "-q", origin, dir]);
    return { dir, runnerTemp: temp.dir() };
  }

  function state(c: { dir: string; runnerTemp: string }, action: string, branch = "engram-state") {
    const r = spawnSync("bash", [STATE_SCRIPT, action, branch, ".engram"], {
      cwd: c.dir,
      encoding: "utf8",
      env: childEnv({ RUNNER_TEMP: c.runnerTemp, GIT_CONFIG_GLOBAL: "/dev/null" }),
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  }

  function writeState(dir: string, journal: string): void {
    mkdirSync(join(dir, ".engram", "buffer"), { recursive: true });
    writeFileSync(join(dir, ".engram", "buffer", "journal.ndjson"), journal);
    writeFileSync(join(dir, ".engram", "buffer", "meta.json"), "{}\n");
    writeFileSync(join(dir, ".engram", "seal.key"), `${"ab".repeat(32)}\n`);
    writeFileSync(join(dir, ".engram", "director.lock"), "123\n");
  }

  it("round-trips the buffer through its own branch, without the seal key or the lock", () => {
    const a = clone();
    expect(state(a, "restore").out).toContain("no branch engram-state on origin yet");
    writeState(a.dir, '{"seq":1}\n');
    const saved = state(a, "save");
    expect(saved.code, saved.out).toBe(0);
    const files = git(origin, ["ls-tree", "-r", "--name-only", "engram-state"]).trim().split("\n");
    expect(files.sort()).toEqual(["buffer/journal.ndjson", "buffer/meta.json"]);
    // Parentless: the branch holds the latest state, not a history of it.
    expect(git(origin, ["rev-list", "--count", "engram-state"]).trim()).toBe("1");
    expect(git(origin, ["rev-parse", "main"])).not.toBe(git(origin, ["rev-parse", "engram-state"]));

    const b = clone();
    const restored = state(b, "restore");
    expect(restored.code, restored.out).toBe(0);
    expect(readFileSync(join(b.dir, ".engram", "buffer", "journal.ndjson"), "utf8")).toBe(
      '{"seq":1}\n',
    );
    expect(existsSync(join(b.dir, ".engram", "seal.key"))).toBe(false);
    expect(state(b, "save").out).toContain("unchanged");

    // b moves on; a still holds the lease of the commit b replaced: its push is refused.
    writeFileSync(join(b.dir, ".engram", "buffer", "journal.ndjson"), '{"seq":1}\n{"seq":2}\n');
    expect(state(b, "save").code).toBe(0);
    writeFileSync(join(a.dir, ".engram", "buffer", "journal.ndjson"), '{"seq":1}\n{"seq":9}\n');
    const stale = state(a, "save");
    expect(stale.code).not.toBe(0);
    expect(git(origin, ["show", "engram-state:buffer/journal.ndjson"])).toBe(
      '{"seq":1}\n{"seq":2}\n',
    );
  });

  it("keeps a local buffer over the branch, and refuses odd branch names", () => {
    const c = clone();
    writeState(c.dir, '{"local":true}\n');
    const r = state(c, "restore");
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("already holds a buffer");
    expect(readFileSync(join(c.dir, ".engram", "buffer", "journal.ndjson"), "utf8")).toBe(
      '{"local":true}\n',
    );
    for (const bad of ["../x", "-f", "refs/heads/x", ""]) {
      expect(state(c, "restore", bad).code, bad).toBe(2);
    }
  });
});
