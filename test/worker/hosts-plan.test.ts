/**
 * The setup planners in process: text in, text out. What the hosts' files look like after a
 * setup and after its removal, for the layouts the command-line tests do not write: a block
 * or a table between the user's own lines, key order, a file left empty.
 */
import { describe, expect, it } from "vitest";
import { editClaudeHooks, editMcpServers } from "../../src/worker/hosts/json-edits.js";
import { isEngramHookCommand, shellCommand, shellWord } from "../../src/worker/hosts/launcher.js";
import { planSetup, type SetupRequest } from "../../src/worker/hosts/plan.js";
import { editMarkdownBlock } from "../../src/worker/hosts/text-edits.js";
import { editCodexConfig } from "../../src/worker/hosts/toml-edits.js";

const LAUNCHER = { node: "/opt/node 22/bin/node", bin: "/home/me/engram/dist/src/cli/engram.js" };
const ENTRY = { command: LAUNCHER.node, args: [LAUNCHER.bin, "worker", "mcp"] };

describe("the launcher's words", () => {
  it("quotes what a shell would split, and recognises its own hooks wherever installed", () => {
    expect(shellWord("/usr/bin/node")).toBe("/usr/bin/node");
    expect(shellWord("/opt/node 22/bin/node")).toBe("'/opt/node 22/bin/node'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    const command = shellCommand(LAUNCHER, ["worker", "hook", "session-end"]);
    expect(command).toBe(
      "'/opt/node 22/bin/node' /home/me/engram/dist/src/cli/engram.js worker hook session-end",
    );
    expect(isEngramHookCommand(command)).toBe(true);
    expect(isEngramHookCommand(`${command} --host gemini`)).toBe(true);
    expect(isEngramHookCommand(`${command} --host gemini; rm -rf /`)).toBe(false);
    expect(isEngramHookCommand("echo worker hook session-end")).toBe(false);
    expect(isEngramHookCommand(`${command} && rm -rf /`)).toBe(false);
  });
});

describe("the Markdown block", () => {
  it("is replaced in place between the user's lines, and its removal leaves them as they were", () => {
    const middle =
      "# Agents\n\nBefore.\n\n<!-- engram:begin -->\nold body\n<!-- engram:end -->\nTail.\n";
    const replaced = editMarkdownBlock(middle, "AGENTS.md", "new body").after as string;
    expect(replaced).toContain("new body");
    expect(replaced).not.toContain("old body");
    expect(replaced.endsWith("<!-- engram:end -->\nTail.\n")).toBe(true);
    const removed = editMarkdownBlock(replaced, "AGENTS.md", undefined);
    expect(removed.after).toBe("# Agents\n\nBefore.\nTail.\n");
    expect(removed.changes).toEqual(["engram's memory block removed"]);
  });

  it("refuses an end marker without its beginning", () => {
    expect(() => editMarkdownBlock("x\n<!-- engram:end -->\n", "GEMINI.md", "b")).toThrow(
      "GEMINI.md: an engram:end marker without its engram:begin",
    );
  });
});

describe("Codex's config.toml", () => {
  it("takes out a table between two of the user's, leaving them byte for byte", () => {
    const before = "[a]\nx = 1\n\n# about b\n[b]\ny = 2\n";
    const added = editCodexConfig(before, "config.toml", ENTRY).after as string;
    const between = added.replace(/\n\[mcp_servers\.engram\][\s\S]*$/, "");
    const sandwich = `[a]\nx = 1\n\n${added.slice(added.indexOf("[mcp_servers.engram]"))}\n# about b\n[b]\ny = 2\n`;
    expect(between).toBe(before);
    const removed = editCodexConfig(sandwich, "config.toml", undefined).after as string;
    expect(removed).toBe("[a]\nx = 1\n\n\n# about b\n[b]\ny = 2\n");
    expect(editCodexConfig(removed, "config.toml", undefined).changes).toEqual([]);
  });
});

describe("the JSON files", () => {
  it("keep the user's key order and formatting when nothing changes", () => {
    const mine =
      '{"b": 1,\n   "mcpServers": {"engram": {"command": "/opt/node 22/bin/node", "args": ["/home/me/engram/dist/src/cli/engram.js", "worker", "mcp"]}}}';
    expect(editMcpServers(mine, "x.json", ENTRY)).toEqual({ after: mine, changes: [] });
    const next = editMcpServers('{"z": 1, "a": 2}', "x.json", ENTRY).after as string;
    expect(Object.keys(JSON.parse(next))).toEqual(["z", "a", "mcpServers"]);
  });

  it("refuse hooks that are not a list, naming the event", () => {
    expect(() =>
      editClaudeHooks('{"hooks": {"Stop": {}}}', "settings.json", [], isEngramHookCommand),
    ).toThrow("settings.json: /hooks/Stop is not a list");
  });
});

describe("planSetup", () => {
  const request = (over: Partial<SetupRequest>): SetupRequest => ({
    host: "gemini",
    scope: "project",
    remove: false,
    launcher: LAUNCHER,
    repoDir: "/work/repo",
    home: "/home/me",
    codexHome: "/home/me/.codex",
    ...over,
  });

  it("plans every file of a host from their text, pure, and says what to do by hand", () => {
    const plan = planSetup(request({}), new Map());
    expect(plan.files.map((f) => [f.path, f.action])).toEqual([
      ["/work/repo/.gemini/settings.json", "create"],
      ["/work/repo/GEMINI.md", "create"],
    ]);
    expect(plan.notes.some((n) => n.includes("trust"))).toBe(true);
    const removal = planSetup(request({ remove: true }), new Map());
    expect(removal.files.every((f) => f.action === "unchanged")).toBe(true);
    expect(removal.notes).toEqual([]);
  });

  it("needs a repository for the project scope only", () => {
    expect(() => planSetup(request({ repoDir: undefined }), new Map())).toThrow(
      "run it inside the repository",
    );
    const user = planSetup(
      request({ repoDir: undefined, scope: "user", host: "cursor" }),
      new Map(),
    );
    expect(user.files.map((f) => f.path)).toEqual(["/home/me/.cursor/mcp.json"]);
  });
});
