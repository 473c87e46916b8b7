/**
 * The real Gemini CLI (the pinned `@google/gemini-cli`, .ci/host-packages), run offline in a
 * repository `worker setup gemini` set up, against a stand-in for the Gemini API on loopback
 * (`GOOGLE_GEMINI_BASE_URL`): the SessionStart hook's context (the verdict and MEMORY.md) and
 * the memory block of GEMINI.md reach the model's request, the `engram` server's tools are
 * declared to it, the session's end is a heartbeat, and a `memory_recall` the model asks for is
 * answered by engram's MCP server with the note. Every other way out goes through a proxy
 * that forwards nothing. Without the host installed the test is skipped; on CI it fails.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  diagnoseAndKill,
  director,
  ENGRAM_BIN,
  GIT_IDENTITY,
  runBin,
  worker,
} from "../support/bins.js";
import { DeadEndProxy } from "../support/dead-end-proxy.js";
import {
  declaredFunctions,
  FakeGemini,
  functionResponses,
  type GeminiScript,
  type GenerateRequest,
} from "../support/fake-gemini.js";
import { findHost, hostsInstallCommand, hostsRequired } from "../support/hosts.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const host = findHost("gemini");
const dirs = new TempDirs();
/** The note the repository's memory holds: a word no model or host would say by itself. */
const DECISION = "Validate every schema with quillwort before merging";
/** Gemini CLI names an MCP tool `mcp_<server>_<tool>`. */
const RECALL_TOOL = "mcp_engram_memory_recall";

/** The model: it calls engram's recall tool when offered, then answers with what came back. */
const script: GeminiScript = (request) => {
  if (!declaredFunctions(request).includes(RECALL_TOOL)) return [{ text: "ok" }];
  if (functionResponses(request).has(RECALL_TOOL)) {
    return [{ text: "Memory says: validate schemas before merging." }];
  }
  return [{ functionCall: { name: RECALL_TOOL, args: { query: "schema" } } }];
};

const model = new FakeGemini(script);
const proxy = new DeadEndProxy();
let repo: TempRepo;
let home: string;

/** Runs `gemini -p` in the repository, its environment built from nothing (no engram on PATH). */
function gemini(args: readonly string[]): Promise<BinResult> {
  const startedAt = Date.now();
  const [command, ...prefix] = (host as { argv: string[] }).argv;
  const child = spawn(command as string, [...prefix, ...args], {
    cwd: repo.dir,
    env: {
      PATH: "/usr/bin:/bin",
      HOME: home,
      TMPDIR: dirs.dir("engram-gemini-tmp-"),
      ...GIT_IDENTITY,
      GEMINI_API_KEY: "engram-test-key",
      GOOGLE_GEMINI_BASE_URL: model.url,
      // Headless runs need the folder trusted for its .gemini/settings.json servers to start.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      NO_PROXY: "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  // A safety net against a hung host (a prompt it waits on), not a test device.
  const timer = setTimeout(() => {
    void diagnoseAndKill(child).then((d) => {
      stderr += d;
    });
  }, 180_000);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - startedAt });
    });
  });
}

/** Everything the model was shown in a request: its system instruction and contents. */
function shown(request: GenerateRequest): string {
  return JSON.stringify([request.systemInstruction ?? "", request.contents]);
}

describe.skipIf("missing" in host && !hostsRequired())("the real Gemini CLI, offline", () => {
  beforeAll(async () => {
    if ("missing" in host) {
      throw new Error(`${host.missing}, and CI is set: ${hostsInstallCommand()}`);
    }
    assertBuilt();
    await Promise.all([model.start(), proxy.start()]);
    home = dirs.dir("engram-gemini-home-");
    // The user's choice of an API key, no usage statistics, no update check.
    mkdirSync(join(home, ".gemini"));
    writeFileSync(
      join(home, ".gemini", "settings.json"),
      JSON.stringify({
        security: { auth: { selectedType: "gemini-api-key" } },
        privacy: { usageStatisticsEnabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      }),
    );
    repo = dirs.repo("engram-gemini-");
    const env = { SOURCE_DATE_EPOCH: "1790000000" };
    expect((await director(["init"], { cwd: repo.dir, env })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "engram: init"]);
    const emit = ["emit", "--kind", "decision", "--text", DECISION, "--topic", "schema"];
    expect((await worker(emit, { cwd: repo.dir, env })).code).toBe(0);
    expect((await director(["run", "--flush"], { cwd: repo.dir, env })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "engram: memory"]);
    const setup = await runBin(ENGRAM_BIN, ["worker", "setup", "gemini"], {
      cwd: repo.dir,
      env: { HOME: home },
    });
    expect(setup.code, describeResult(setup)).toBe(0);
  });
  afterAll(async () => {
    await Promise.all([model.stop(), proxy.stop()]);
    dirs.cleanup();
  });

  it("sends the session-start memory and GEMINI.md's block to the model, and answers its memory_recall with the note", async () => {
    const r = await gemini([
      "-p",
      "What do we use to validate schemas?",
      "--model",
      "gemini-2.5-flash",
      "--output-format",
      "json",
      // A person approves the tool when asked; `-p` cannot ask.
      "--allowed-tools",
      RECALL_TOOL,
    ]);
    expect(r.code, describeResult(r)).toBe(0);
    const result = JSON.parse(r.stdout) as { response: string; session_id: string };
    expect(result.response).toBe("Memory says: validate schemas before merging.");

    const [first, second, ...rest] = model.generated();
    expect(rest, "two turns: the tool call, then the answer").toEqual([]);
    if (first === undefined || second === undefined) throw new Error("no model request");
    // The SessionStart hook's context (the verdict, then MEMORY.md with the note), and
    // GEMINI.md's block (the agent loop, with the check spelled by absolute path).
    for (const text of [
      "engram: memory matches catalog version 1 ",
      "# Memory: current focus",
      DECISION,
      "Shared memory (engram)",
      `${ENGRAM_BIN} worker check && cat MEMORY.md`,
    ]) {
      expect(shown(first).includes(text), `the model's first request shows "${text}"`).toBe(true);
    }
    expect(declaredFunctions(first)).toContain(RECALL_TOOL);

    const answer = functionResponses(second).get(RECALL_TOOL)?.functionResponse?.response;
    expect(answer, "the host sends the recall's result back").toBeDefined();
    const output = String((answer as { output?: unknown }).output ?? JSON.stringify(answer));
    expect(output).toContain('"status":"found"');
    expect(output).toContain(DECISION);

    // Offline: only the stand-in's streaming route was asked, and nothing went anywhere else.
    expect(model.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([
      "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent 200",
      "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent 200",
    ]);
    expect(proxy.tried).toEqual([]);

    // The SessionEnd hook (reason "exit") is a heartbeat of the host's session.
    expect((await director(["run"], { cwd: repo.dir })).code).toBe(0);
    const status = JSON.parse((await director(["status", "--json"], { cwd: repo.dir })).stdout) as {
      swarm: { workers: { worker: string; stage: string | null }[] };
    };
    const session = status.swarm.workers.find((w) => w.worker === `gemini-${result.session_id}`);
    expect(session?.stage, JSON.stringify(status.swarm.workers)).toBe(
      "gemini session ended (exit)",
    );
  });
});
