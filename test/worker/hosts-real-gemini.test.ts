import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, ENGRAM_BIN } from "../support/bins.js";
import { DeadEndProxy } from "../support/dead-end-proxy.js";
import {
  declaredFunctions,
  FakeGemini,
  functionResponses,
  type GeminiScript,
  type GenerateRequest,
} from "../support/fake-gemini.js";
import { findHost, hostsRequired } from "../support/hosts.js";
import { memoryRepoSetUp, proxiedThrough, runHost, startForHost } from "../support/real-host.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

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

/** Runs `gemini` in the repository, its environment built from nothing (no engram on PATH). */
function gemini(args: readonly string[]): Promise<BinResult> {
  return runHost((host as { argv: string[] }).argv, args, repo.dir, {
    HOME: home,
    TMPDIR: dirs.dir("engram-gemini-tmp-"),
    GEMINI_API_KEY: "engram-test-key",
    GOOGLE_GEMINI_BASE_URL: model.url,
    // Headless runs need the folder trusted for its .gemini/settings.json servers and hooks.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    ...proxiedThrough(proxy.url),
  });
}

/** Everything the model was shown in a request: its system instruction and contents. */
function shown(request: GenerateRequest): string {
  return JSON.stringify([request.systemInstruction ?? "", request.contents]);
}

describe.skipIf("missing" in host && !hostsRequired())("the real Gemini CLI, offline", () => {
  beforeAll(async () => {
    await startForHost(host, [model, proxy]);
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
    repo = await memoryRepoSetUp(dirs, "gemini", DECISION, { HOME: home });
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
