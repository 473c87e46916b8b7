import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, worker } from "../support/bins.js";
import { DeadEndProxy } from "../support/dead-end-proxy.js";
import {
  FakeAnthropic,
  type MessagesRequest,
  type ModelScript,
  toolResults,
} from "../support/fake-anthropic.js";
import { findHost, hostsRequired } from "../support/hosts.js";
import { memoryRepoSetUp, proxiedThrough, runHost, startForHost } from "../support/real-host.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const host = findHost("claude-code");
const dirs = new TempDirs();
/** The note the repository's memory holds: a word no model or host would say by itself. */
const DECISION = "Validate every schema with quillwort before merging";
const RECALL_ID = "toolu_standin_recall_01";
const RECALL_TOOL = "mcp__engram__memory_recall";
/** A note that reaches memory after the first session: only a new session start shows it. */
const LATER = "Run every migration through the tallowmere dry run first";
/** The first session's id, which the later sessions fork and resume. */
let sessionId = "";

/**
 * The model: on the session's first turn it calls engram's recall tool, as the memory block
 * tells an agent to; once the tool's result is back it answers. Requests without tools (a
 * host's side requests) get a plain answer.
 */
const script: ModelScript = (request) => {
  if ((request.tools ?? []).length === 0) return [{ type: "text", text: "ok" }];
  if (toolResults(request).has(RECALL_ID)) {
    return [{ type: "text", text: "Memory says: validate schemas before merging." }];
  }
  return [{ type: "tool_use", id: RECALL_ID, name: RECALL_TOOL, input: { query: "schema" } }];
};

const model = new FakeAnthropic(script);
const proxy = new DeadEndProxy();
let repo: TempRepo;
let home: string;

/** Runs `claude` in the repository, its environment built from nothing (no engram on PATH). */
function claude(args: readonly string[]): Promise<BinResult> {
  return runHost((host as { argv: string[] }).argv, args, repo.dir, {
    HOME: home,
    TMPDIR: dirs.dir("engram-claude-tmp-"),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-engram-test-key",
    // No update check, telemetry, error reports or other calls home: the proxy proves it.
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...proxiedThrough(proxy.url),
  });
}

/** Everything the model was shown in a request: its messages and system prompt, as text. */
function shown(request: MessagesRequest): string {
  return JSON.stringify([request.system ?? "", request.messages]);
}

describe.skipIf("missing" in host && !hostsRequired())("the real Claude Code, offline", () => {
  beforeAll(async () => {
    await startForHost(host, [model, proxy]);
    home = dirs.dir("engram-claude-home-");
    repo = await memoryRepoSetUp(dirs, "claude-code", DECISION, { HOME: home });
    expect(readFileSync(repo.path("MEMORY.md"), "utf8")).toContain(DECISION);
  });
  afterAll(async () => {
    await Promise.all([model.stop(), proxy.stop()]);
    dirs.cleanup();
  });

  it("sends the session-start memory to the model and answers its memory_recall with the note", async () => {
    const r = await claude([
      "-p",
      "What do we use to validate schemas?",
      "--output-format",
      "json",
      // A person approves the tool when asked; `-p` cannot ask.
      "--allowedTools",
      RECALL_TOOL,
    ]);
    expect(r.code, describeResult(r)).toBe(0);
    const result = JSON.parse(r.stdout) as { is_error: boolean; result: string };
    expect(result.is_error, r.stdout).toBe(false);
    expect(result.result).toBe("Memory says: validate schemas before merging.");
    sessionId = (JSON.parse(r.stdout) as { session_id: string }).session_id;

    const [first, second, ...rest] = model.messages();
    expect(rest, "two turns: the tool call, then the answer").toEqual([]);
    if (first === undefined || second === undefined) throw new Error("no model request");
    // The hook's additionalContext: the verdict, then MEMORY.md with the note.
    for (const text of [
      "engram: memory matches catalog version 1 ",
      "# Memory: current focus",
      DECISION,
    ]) {
      expect(shown(first).includes(text), `the model's first request shows "${text}"`).toBe(true);
    }
    // The MCP server from .mcp.json is offered to the model.
    const offered = shown(first) + JSON.stringify(first.tools);
    expect(offered.includes(RECALL_TOOL), `the model is offered ${RECALL_TOOL}`).toBe(true);

    const answer = toolResults(second).get(RECALL_ID);
    expect(answer, "the host sends the recall's result back").toBeDefined();
    expect(answer?.is_error ?? false, JSON.stringify(answer)).toBe(false);
    const recalled = JSON.parse(textOf(answer?.content)) as {
      status: string;
      hits: { text: string; kind: string }[];
    };
    expect(recalled.status).toBe("found");
    expect(recalled.hits.map((h) => [h.kind, h.text])).toContainEqual(["decision", DECISION]);

    // Offline: only the stand-in's routes were asked, and nothing went anywhere else.
    expect(model.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([
      "POST /v1/messages 200",
      "POST /v1/messages 200",
    ]);
    expect(proxy.tried).toEqual([]);
  });

  it("brings memory back in a forked session and after a compaction, and records the session's end", async () => {
    expect(sessionId, "the first test's session").not.toBe("");
    const env = { SOURCE_DATE_EPOCH: "1790000100" };
    const emit = ["emit", "--kind", "decision", "--text", LATER, "--topic", "migrations"];
    expect((await worker(emit, { cwd: repo.dir, env })).code).toBe(0);
    expect((await director(["run", "--flush"], { cwd: repo.dir, env })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "engram: more memory"]);

    // A fork (SessionStart source "fork") starts with today's memory, not the first session's.
    const asked = model.messages().length;
    const fork = await claude(["-p", "And migrations?", "--resume", sessionId, "--fork-session"]);
    expect(fork.code, describeResult(fork)).toBe(0);
    const forked = model.messages()[asked];
    expect(forked, "the forked session asks the model").toBeDefined();
    expect(
      shown(forked as MessagesRequest).includes(LATER),
      "the fork's request shows the new note",
    ).toBe(true);

    // A compaction (PreCompact, trigger "manual") and the session's end (SessionEnd, reason
    // "other") are heartbeats of the host's session, which the Director lists.
    const compact = await claude(["-p", "/compact", "--resume", sessionId]);
    expect(compact.code, describeResult(compact)).toBe(0);
    expect((await director(["run"], { cwd: repo.dir, env })).code).toBe(0);
    const status = JSON.parse((await director(["status", "--json"], { cwd: repo.dir })).stdout) as {
      swarm: { workers: { worker: string; stage: string | null; heartbeats: number }[] };
    };
    const session = status.swarm.workers.find((w) => w.worker === `claude-code-${sessionId}`);
    expect(session, JSON.stringify(status.swarm.workers)).toMatchObject({
      stage: "claude-code session ended (other)",
      // This run's compaction and end (the first run's end went into memory with the flush).
      heartbeats: 2,
    });
    expect(proxy.tried).toEqual([]);
  });
});

/** A tool result's content as text: a string, or its text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => ((b as { type?: string }).type === "text" ? (b as { text: string }).text : ""))
      .join("");
  }
  return "";
}
