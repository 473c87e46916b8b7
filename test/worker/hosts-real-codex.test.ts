import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, ENGRAM_BIN } from "../support/bins.js";
import { DeadEndProxy } from "../support/dead-end-proxy.js";
import {
  callOutputs,
  FakeOpenAI,
  offeredFunctions,
  type ResponsesRequest,
  type ResponsesScript,
} from "../support/fake-openai.js";
import { findHost, hostsRequired } from "../support/hosts.js";
import { memoryRepoSetUp, proxiedThrough, runHost, startForHost } from "../support/real-host.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const host = findHost("codex");
const dirs = new TempDirs();
/** The note the repository's memory holds: a word no model or host would say by itself. */
const DECISION = "Validate every schema with quillwort before merging";
const CALL_ID = "call_standin_recall";

/** The model: it calls engram's recall tool when offered, then answers. */
const script: ResponsesScript = (request) => {
  if (!offeredFunctions(request).includes("mcp__engram/memory_recall")) {
    return { type: "text", text: "ok" };
  }
  if (callOutputs(request).has(CALL_ID)) {
    return { type: "text", text: "Memory says: validate schemas before merging." };
  }
  return {
    type: "call",
    callId: CALL_ID,
    namespace: "mcp__engram",
    name: "memory_recall",
    args: { query: "schema" },
  };
};

const model = new FakeOpenAI(script);
const proxy = new DeadEndProxy();
let repo: TempRepo;
let home: string;
let codexHome: string;

/** Runs `codex` in the repository, its environment built from nothing (no engram on PATH). */
function codex(args: readonly string[]): Promise<BinResult> {
  return runHost((host as { argv: string[] }).argv, args, repo.dir, {
    HOME: home,
    CODEX_HOME: codexHome,
    TMPDIR: dirs.dir("engram-codex-tmp-"),
    STANDIN_API_KEY: "sk-engram-test-key",
    ...proxiedThrough(proxy.url),
  });
}

/** Everything the model was shown in a request: its instructions and input. */
function shown(request: ResponsesRequest): string {
  return JSON.stringify([request.instructions ?? "", request.input]);
}

describe.skipIf("missing" in host && !hostsRequired())("the real Codex, offline", () => {
  beforeAll(async () => {
    await startForHost(host, [model, proxy]);
    home = dirs.dir("engram-codex-home-");
    codexHome = join(home, ".codex");
    mkdirSync(codexHome);
    // The user's model provider: the stand-in, spoken to over the Responses API. No update
    // check, analytics or plugin marketplace (they fetch from GitHub and chatgpt.com).
    writeFileSync(
      join(codexHome, "config.toml"),
      [
        'model = "gpt-standin"',
        'model_provider = "standin"',
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[features]",
        "plugins = false",
        "",
        "[model_providers.standin]",
        'name = "stand-in"',
        `base_url = "${model.url}/v1"`,
        'env_key = "STANDIN_API_KEY"',
        'wire_api = "responses"',
        "",
      ].join("\n"),
    );
    repo = await memoryRepoSetUp(dirs, "codex", DECISION, { HOME: home, CODEX_HOME: codexHome });
  });
  afterAll(async () => {
    await Promise.all([model.stop(), proxy.stop()]);
    dirs.cleanup();
  });

  it("sends AGENTS.md's memory block to the model and answers its memory_recall with the note", async () => {
    const r = await codex([
      "exec",
      // A person approves the tool when asked; `exec` cannot ask.
      "-c",
      'mcp_servers.engram.default_tools_approval_mode="approve"',
      "What do we use to validate schemas?",
    ]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout.trim()).toBe("Memory says: validate schemas before merging.");

    const [first, second, ...rest] = model.answered();
    expect(rest, "two turns: the tool call, then the answer").toEqual([]);
    if (first === undefined || second === undefined) throw new Error("no model request");
    // AGENTS.md's block: the agent loop, with the check spelled by absolute path.
    for (const text of ["Shared memory (engram)", `${ENGRAM_BIN} worker check && cat MEMORY.md`]) {
      expect(shown(first).includes(text), `the model's first request shows "${text}"`).toBe(true);
    }
    expect(offeredFunctions(first)).toContain("mcp__engram/memory_recall");

    const output = JSON.stringify(callOutputs(second).get(CALL_ID)?.output ?? null);
    expect(output).toContain('\\"status\\":\\"found\\"');
    expect(output).toContain(DECISION);

    // Offline: only the stand-in's route was asked, and nothing went anywhere else.
    expect(model.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([
      "POST /v1/responses 200",
      "POST /v1/responses 200",
    ]);
    expect(proxy.tried).toEqual([]);
  });
});
