/**
 * `worker hook EVENT` speaks Claude Code's hook contract: the payloads are the Agent SDK's
 * hook input types (test/support/claude-hook-inputs.ts: `BaseHookInput`, SessionStart's
 * `source`, PreCompact's `trigger` and `custom_instructions`, SessionEnd's `reason`), sent on
 * stdin to exactly the command `worker setup claude-code` registered, run by a shell with a
 * PATH that holds no engram bin. A hook never fails its host: it exits 0
 * and says why.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branchTopic, CONTEXT_LIMIT, fitted } from "../../src/worker/hosts/hook.js";
import {
  assertBuilt,
  childEnv,
  describeResult,
  director,
  ENGRAM_BIN,
  jsonOf,
  runBin,
  worker,
} from "../support/bins.js";
import {
  type BaseHookInput,
  baseInput,
  type PreCompactHookInput,
  SESSION_START_SOURCES,
  type SessionEndHookInput,
  type SessionStartHookInput,
  sessionStartInput,
} from "../support/claude-hook-inputs.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const ENV = { SOURCE_DATE_EPOCH: "1790000000" };
const SESSION = "8a6f3c1e-5b2d-4e7f-9a10-c3d4e5f60718";
let repo: TempRepo;
let home: string;
/** The commands `worker setup claude-code` registered, by event. */
const commands = new Map<string, string>();

/** A repository whose main has memory committed, and a branch left behind before it. */
beforeAll(async () => {
  assertBuilt();
  home = dirs.dir("engram-hook-home-");
  repo = dirs.repo("engram-hook-");
  repo.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  expect((await director(["init"], { cwd: repo.dir, env: ENV })).code).toBe(0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: init"]);
  git(repo.dir, ["branch", "behind"]);
  const emit = ["emit", "--kind", "decision", "--text", "Use zod for every schema"];
  expect((await worker([...emit, "--topic", "schema"], { cwd: repo.dir, env: ENV })).code).toBe(0);
  expect((await director(["run", "--force"], { cwd: repo.dir, env: ENV })).code).toBe(0);
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-qm", "engram: memory"]);
  const r = await runBin(ENGRAM_BIN, ["worker", "setup", "claude-code"], {
    cwd: repo.dir,
    env: { HOME: home },
  });
  expect(r.code, describeResult(r)).toBe(0);
  const settings = JSON.parse(readFileSync(repo.path(".claude", "settings.json"), "utf8")) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  for (const [event, groups] of Object.entries(settings.hooks)) {
    commands.set(event, groups[0]?.hooks[0]?.command as string);
  }
});
afterAll(() => dirs.cleanup());

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a registered hook command as Claude Code does: a shell, the payload on stdin. */
function runHook(event: string, payload: string, cwd: string): Promise<Ran> {
  const command = commands.get(event);
  expect(command, event).toBeDefined();
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command as string], {
      cwd,
      env: childEnv({ PATH: "/usr/bin:/bin", HOME: home, CLAUDE_PROJECT_DIR: cwd }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(payload);
  });
}

function basePayload(cwd: string): BaseHookInput {
  return baseInput(cwd, SESSION, home);
}

const startPayload = (cwd: string, source: SessionStartHookInput["source"]) =>
  JSON.stringify(sessionStartInput(basePayload(cwd), source));

/** The additionalContext of a SessionStart answer, checking the answer's shape. */
function contextOf(r: Ran): string {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  const out = JSON.parse(r.stdout) as {
    hookSpecificOutput: { hookEventName: string; additionalContext: string };
  };
  expect(Object.keys(out)).toEqual(["hookSpecificOutput"]);
  expect(out.hookSpecificOutput.hookEventName).toBe("SessionStart");
  expect(out.hookSpecificOutput.additionalContext.length).toBeLessThanOrEqual(10_000);
  return out.hookSpecificOutput.additionalContext;
}

describe("worker hook session-start", () => {
  it("gives the verdict and MEMORY.md for every source (startup, resume, clear, compact, fork)", async () => {
    for (const source of SESSION_START_SOURCES) {
      const context = contextOf(
        await runHook("SessionStart", startPayload(repo.dir, source), repo.dir),
      );
      expect(context).toMatch(/^engram: memory matches catalog version 1 /);
      expect(context).toContain("In sync with main");
      expect(context).toContain("# Memory: current focus");
      expect(context).toContain("Use zod for every schema");
    }
  });

  it("on a topic branch, adds what memory holds on the branch's topic", async () => {
    const topical = dirs.copy(repo, "engram-hook-topic-");
    git(topical.dir, ["checkout", "-q", "-b", "feat/schema-validation"]);
    const context = contextOf(
      await runHook("SessionStart", startPayload(topical.dir, "startup"), topical.dir),
    );
    expect(context).toContain('Memory on this branch\'s topic ("schema validation")');
    expect(context.split("Use zod for every schema").length).toBe(3);
  });

  it("fits MEMORY.md into Claude Code's 10,000 characters, cut at a line and saying so", () => {
    const focus = Array.from({ length: 400 }, (_, i) => `- item ${i}: ${"x".repeat(40)}`).join(
      "\n",
    );
    const fit = fitted(focus, CONTEXT_LIMIT - 200);
    expect(fit.length).toBeLessThanOrEqual(CONTEXT_LIMIT - 200);
    expect(fit).toMatch(/\n- item \d+: x+\n\[MEMORY\.md cut here at 9800 of \d+ characters/);
    expect(fitted("short\n", 100)).toBe("short\n");
    expect(branchTopic("feat/schema-validation")).toBe("schema validation");
    expect(branchTopic("fix/123")).toBeUndefined();
    expect(branchTopic("main")).toBeUndefined();
  });

  it("on a branch main left behind, says to sync, naming worker sync by absolute path", async () => {
    const behind = dirs.dir("engram-hook-behind-");
    git(behind, ["clone", "-q", repo.dir, "."]);
    git(behind, ["checkout", "-q", "behind"]);
    // The clone's main is origin/main: the branch is one memory commit behind it.
    const context = contextOf(
      await runHook("SessionStart", startPayload(behind, "startup"), behind),
    );
    expect(context).toContain("Sync required (catalog_mismatch)");
    expect(context).toContain(`${process.execPath} ${ENGRAM_BIN} worker sync`);
    expect(context).toContain("# Memory: current focus");
  });

  it("with memory edited by hand, reports it and does not load MEMORY.md", async () => {
    const broken = dirs.copy(repo, "engram-hook-broken-");
    const catalog = JSON.parse(readFileSync(broken.path("memory", "catalog.json"), "utf8")) as {
      entries: { path: string }[];
    };
    const engram = broken.path(catalog.entries[0]?.path as string);
    writeFileSync(engram, readFileSync(engram, "utf8").replace("zod", "yup"));
    const context = contextOf(
      await runHook("SessionStart", startPayload(broken.dir, "startup"), broken.dir),
    );
    expect(context).toContain("memory does NOT match its catalog");
    expect(context).toContain(`modified: ${catalog.entries[0]?.path}`);
    expect(context).not.toContain("# Memory: current focus");
  });

  it("outside a repository, and in one engram is not set up in, exits 0 and says why", async () => {
    const nowhere = dirs.dir("engram-hook-nowhere-");
    let context = contextOf(
      await runHook("SessionStart", startPayload(nowhere, "startup"), nowhere),
    );
    expect(context).toContain("no shared memory loaded");
    expect(context).toContain("not inside a git work tree");
    const bare = dirs.repo("engram-hook-bare-");
    context = contextOf(await runHook("SessionStart", startPayload(bare.dir, "startup"), bare.dir));
    expect(context).toContain("engram is not set up in this repository");
  });

  it("reads the host's cwd from the payload, and survives a payload that is not JSON", async () => {
    const elsewhere = dirs.dir("engram-hook-elsewhere-");
    const context = contextOf(
      await runHook("SessionStart", startPayload(repo.dir, "startup"), elsewhere),
    );
    expect(context).toContain("Use zod for every schema");
    const garbled = await runHook("SessionStart", "not json {", repo.dir);
    expect(contextOf(garbled)).toContain("Use zod for every schema");
    expect(garbled.stderr).toContain("not a JSON object");
  });
});

describe("worker hook pre-compact and session-end", () => {
  it("record the host session as heartbeats that director status shows", async () => {
    const own = dirs.copy(repo, "engram-hook-status-");
    const compact = await runHook(
      "PreCompact",
      JSON.stringify({
        ...basePayload(own.dir),
        hook_event_name: "PreCompact",
        trigger: "auto",
        custom_instructions: null,
      } satisfies PreCompactHookInput),
      own.dir,
    );
    expect(compact.code, compact.stderr).toBe(0);
    expect(JSON.parse(compact.stdout)).toEqual({ suppressOutput: true });
    const end = await runHook(
      "SessionEnd",
      JSON.stringify({
        ...basePayload(own.dir),
        hook_event_name: "SessionEnd",
        reason: "logout",
      } satisfies SessionEndHookInput),
      own.dir,
    );
    expect(end.code, end.stderr).toBe(0);
    expect((await director(["run"], { cwd: own.dir, env: ENV })).code).toBe(0);
    const status = jsonOf<{
      swarm: { workers: { worker: string; stage: string | null; heartbeats: number }[] };
    }>(await director(["status", "--json"], { cwd: own.dir }));
    const session = status.swarm.workers.find((w) => w.worker === `claude-code-${SESSION}`);
    expect(session, JSON.stringify(status.swarm)).toBeDefined();
    expect(session?.heartbeats).toBe(2);
    expect(session?.stage).toBe("claude-code session ended (logout)");
  });

  it("with the Director's hub unreachable, spools the heartbeat, exits 0 and says so", async () => {
    const own = dirs.copy(repo, "engram-hook-unreachable-");
    const command = `${commands.get("PreCompact")} --bus tcp://127.0.0.1:9`;
    const child = await new Promise<Ran>((resolve, reject) => {
      const c = spawn("/bin/sh", ["-c", command], {
        cwd: own.dir,
        env: childEnv({ PATH: "/usr/bin:/bin", HOME: home, ENGRAM_BUS_CONNECT_TIMEOUT_MS: "200" }),
      });
      let stdout = "";
      c.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      c.on("error", reject);
      c.on("close", (code) => resolve({ code, stdout, stderr: "" }));
      c.stdin.end(
        JSON.stringify({
          ...basePayload(own.dir),
          hook_event_name: "PreCompact",
          trigger: "manual",
          custom_instructions: "keep the schema decisions",
        } satisfies PreCompactHookInput),
      );
    });
    expect(child.code).toBe(0);
    const out = JSON.parse(child.stdout) as { systemMessage: string };
    expect(out.systemMessage).toMatch(/spooled \(tcp unavailable: /);
  });

  it("outside a repository, exit 0 with a systemMessage saying why", async () => {
    const nowhere = dirs.dir("engram-hook-nowhere-");
    const r = await runHook(
      "SessionEnd",
      JSON.stringify({
        ...basePayload(nowhere),
        hook_event_name: "SessionEnd",
        reason: "other",
      } satisfies SessionEndHookInput),
      nowhere,
    );
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { systemMessage: string }).systemMessage).toContain(
      "session not recorded",
    );
  });
});
