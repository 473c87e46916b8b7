/**
 * `worker setup HOST` on real files in temporary folders: it merges into the hosts' existing
 * files keeping what it did not write, a second run changes no byte, `--remove` gives the
 * files back as they were, `--dry-run` writes nothing, and a file that does not parse stops
 * it before anything is written. HOME and CODEX_HOME point into the test's folders.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  ENGRAM_BIN,
  jsonOf,
  runBin,
} from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
beforeAll(() => assertBuilt());
afterAll(() => dirs.cleanup());

interface Place {
  repo: TempRepo;
  home: string;
  codexHome: string;
}

function place(): Place {
  const repo = dirs.repo("engram-setup-");
  return { repo, home: dirs.dir("engram-home-"), codexHome: dirs.dir("engram-codex-") };
}

function setup(at: Place, args: readonly string[]): Promise<BinResult> {
  return runBin(ENGRAM_BIN, ["worker", "setup", ...args], {
    cwd: at.repo.dir,
    env: { HOME: at.home, CODEX_HOME: at.codexHome },
  });
}

interface SetupJson {
  changed: boolean;
  files: { path: string; action: string; changes: string[] }[];
  notes: string[];
}

/** Every file under the test's folders, by path, with its text: what a run changed. */
function snapshot(at: Place): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (root: string, dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === ".git") continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(root, path);
      else files.set(`${root}:${relative(at.repo.dir, path)}`, readFileSync(path, "utf8"));
    }
  };
  walk("repo", at.repo.dir);
  walk("home", at.home);
  walk("codex", at.codexHome);
  return files;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const read = (path: string) => readFileSync(path, "utf8");
interface Server {
  command: string;
  args: string[];
  env?: Record<string, string>;
}
interface HookGroup {
  matcher?: string;
  hooks: { type: string; command: string; timeout?: number }[];
}
/** The shape of the hosts' JSON files, as far as these tests read them. */
interface HostJson {
  mcpServers: Record<string, Server>;
  hooks: Record<string, HookGroup[]>;
  [key: string]: unknown;
}
const readJson = (path: string) => JSON.parse(read(path)) as HostJson;
/** Codex's config.toml, as far as these tests read it. */
interface CodexToml {
  mcp_servers: Record<string, Server>;
  profiles: Record<string, { model: string }>;
}

/** The checks every host passes: idempotent, --dry-run writes nothing, --remove undoes. */
async function expectRoundTrip(at: Place, args: readonly string[]): Promise<void> {
  const before = snapshot(at);
  const dry = await setup(at, [...args, "--dry-run"]);
  expect(dry.code, describeResult(dry)).toBe(0);
  expect(dry.stdout).toMatch(/^dry run: /);
  expect(dry.stdout).toMatch(/^ {4}\+ /m);
  expect(snapshot(at)).toEqual(before);

  const first = jsonOf<SetupJson>(await setup(at, [...args, "--json"]));
  expect(first.changed).toBe(true);
  const written = snapshot(at);
  expect(written).not.toEqual(before);
  for (const [path, text] of written) {
    expect(text, `${path} names no npx`).not.toMatch(/\bnpx\b/);
  }

  const second = jsonOf<SetupJson>(await setup(at, [...args, "--json"]));
  expect(second.changed).toBe(false);
  expect(second.files.every((f) => f.action === "unchanged")).toBe(true);
  expect(snapshot(at)).toEqual(written);

  const dryRemove = await setup(at, [...args, "--remove", "--dry-run"]);
  expect(dryRemove.stdout).toMatch(/^ {4}- /m);
  expect(snapshot(at)).toEqual(written);
  const removed = jsonOf<SetupJson>(await setup(at, [...args, "--remove", "--json"]));
  expect(removed.changed).toBe(true);
  expect(snapshot(at)).toEqual(before);
  const again = jsonOf<SetupJson>(await setup(at, [...args, "--remove", "--json"]));
  expect(again.changed).toBe(false);
}

const BIN_PATH = /engram\.js$/;

describe("worker setup claude-code", () => {
  it("merges the server into .mcp.json and the hooks into .claude/settings.json, keeping the rest", async () => {
    const at = place();
    at.repo.write(
      ".mcp.json",
      json({ mcpServers: { other: { command: "/bin/other", args: ["x"] } }, extra: 1 }),
    );
    const userHook = {
      matcher: "startup",
      hooks: [{ type: "command", command: "echo mine", timeout: 3 }],
    };
    at.repo.write(
      ".claude/settings.json",
      json({
        permissions: { allow: ["Bash(ls:*)"] },
        hooks: {
          SessionStart: [userHook],
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo pre" }] }],
        },
      }),
    );
    const r = await setup(at, ["claude-code"]);
    expect(r.code, describeResult(r)).toBe(0);
    const mcp = readJson(at.repo.path(".mcp.json"));
    expect(mcp.extra).toBe(1);
    expect(mcp.mcpServers.other).toEqual({ command: "/bin/other", args: ["x"] });
    expect(mcp.mcpServers.engram?.command).toBe(process.execPath);
    expect(mcp.mcpServers.engram?.args[0]).toMatch(BIN_PATH);
    expect(mcp.mcpServers.engram?.args.slice(1)).toEqual(["worker", "mcp", "--repo", at.repo.dir]);

    const settings = readJson(at.repo.path(".claude/settings.json"));
    expect(settings.permissions).toEqual({ allow: ["Bash(ls:*)"] });
    expect(settings.hooks.PreToolUse).toHaveLength(1);
    expect(settings.hooks.SessionStart?.[0]).toEqual(userHook);
    const ours = (event: string) =>
      (settings.hooks[event] ?? []).flatMap((g) => g.hooks).filter((h) => /engram/.test(h.command));
    const [start] = ours("SessionStart");
    const group = settings.hooks.SessionStart?.find((g) => start && g.hooks.includes(start));
    // No matcher: every source (startup, resume, clear, compact, fork, and any to come).
    expect(group).toBeDefined();
    expect(group?.matcher).toBeUndefined();
    for (const [event, word] of [
      ["SessionStart", "session-start"],
      ["PreCompact", "pre-compact"],
      ["SessionEnd", "session-end"],
    ] as const) {
      const [hook] = ours(event);
      expect(hook?.command).toBe(
        `${process.execPath} ${mcp.mcpServers.engram?.args[0]} worker hook ${word}`,
      );
      // SessionEnd is cut at 1.5 s unless the hook declares its timeout.
      expect(hook?.timeout).toBeGreaterThanOrEqual(5);
    }
  });

  it("is idempotent, --dry-run writes nothing, --remove gives the files back", async () => {
    const at = place();
    at.repo.write(".mcp.json", json({ mcpServers: { other: { command: "/bin/other" } } }));
    at.repo.write(
      ".claude/settings.json",
      json({ hooks: { SessionEnd: [{ hooks: [{ type: "command", command: "echo bye" }] }] } }),
    );
    await expectRoundTrip(at, ["claude-code"]);
  });

  it("creates the files when there are none, and --remove deletes them again", async () => {
    const at = place();
    await expectRoundTrip(at, ["claude-code"]);
    expect(existsSync(at.repo.path(".mcp.json"))).toBe(false);
  });

  it("replaces an old entry (the unsafe npx form) and an old install's hooks instead of adding a second", async () => {
    const at = place();
    at.repo.write(
      ".mcp.json",
      json({ mcpServers: { engram: { command: "npx", args: ["worker", "mcp"] } } }),
    );
    // An earlier install's hook, elsewhere on disk, in a group with a hook of the user's.
    const old = "/old/node '/old place/dist/src/cli/engram.js' worker hook session-start";
    const mine = { type: "command", command: "echo mine" };
    at.repo.write(
      ".claude/settings.json",
      json({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: old }, mine] }] } }),
    );
    const r = jsonOf<SetupJson>(await setup(at, ["claude-code", "--json"]));
    expect(r.files[0]?.changes).toEqual(["mcpServers.engram replaced"]);
    expect(read(at.repo.path(".mcp.json"))).not.toContain("npx");
    const groups = readJson(at.repo.path(".claude/settings.json")).hooks.SessionStart ?? [];
    expect(groups[0]).toEqual({ hooks: [mine] });
    expect(
      groups.flatMap((g) => g.hooks).filter((h) => h.command.includes("engram.js")),
    ).toHaveLength(1);
    expect(JSON.stringify(groups)).not.toContain("/old place/");
  });

  it("--user writes ~/.claude.json and ~/.claude/settings.json, keeping Claude Code's own keys", async () => {
    const at = place();
    const state = { numStartups: 7, projects: { "/x": { allowedTools: [] } } };
    const claudeJson = join(at.home, ".claude.json");
    await import("node:fs").then((fs) => fs.writeFileSync(claudeJson, json(state)));
    const r = await setup(at, ["claude-code", "--user"]);
    expect(r.code, describeResult(r)).toBe(0);
    const written = readJson(claudeJson);
    expect(written.numStartups).toBe(7);
    expect(written.projects).toEqual(state.projects);
    // A user-wide server works on the repository the host starts it in.
    expect(written.mcpServers.engram?.args.slice(1)).toEqual(["worker", "mcp"]);
    expect(existsSync(join(at.home, ".claude", "settings.json"))).toBe(true);
    expect(existsSync(at.repo.path(".mcp.json"))).toBe(false);
    await setup(at, ["claude-code", "--user", "--remove"]);
    expect(read(claudeJson)).toBe(json(state));
  });

  it("writes through a settings file linked from a dotfiles folder, which stays a link", async () => {
    const at = place();
    const fs = await import("node:fs");
    const dotfiles = dirs.dir("engram-dotfiles-");
    const real = join(dotfiles, "claude-settings.json");
    fs.writeFileSync(real, json({ model: "opus" }));
    fs.mkdirSync(join(at.home, ".claude"));
    fs.symlinkSync(real, join(at.home, ".claude", "settings.json"));
    fs.chmodSync(real, 0o600);
    expect((await setup(at, ["claude-code", "--user"])).code).toBe(0);
    expect(fs.lstatSync(join(at.home, ".claude", "settings.json")).isSymbolicLink()).toBe(true);
    expect(readJson(real).model).toBe("opus");
    expect(readJson(real).hooks.SessionStart).toHaveLength(1);
    expect(fs.statSync(real).mode & 0o777).toBe(0o600);
    expect((await setup(at, ["claude-code", "--user", "--remove"])).code).toBe(0);
    expect(read(real)).toBe(json({ model: "opus" }));
  });

  it("refuses a settings file that does not parse, naming it, and writes nothing", async () => {
    const at = place();
    at.repo.write(".claude/settings.json", '{"hooks": {,}\n');
    const before = snapshot(at);
    const r = await setup(at, ["claude-code", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${at.repo.path(".claude/settings.json")}: not valid JSON`);
    expect((JSON.parse(r.stdout) as { code: string }).code).toBe("bad_input");
    // .mcp.json comes first and parses, yet nothing is written before every file is planned.
    expect(snapshot(at)).toEqual(before);
  });
});

describe("worker setup codex", () => {
  const config = [
    "# my Codex settings",
    'model = "o4"',
    "",
    "[mcp_servers.other]",
    'command = "/bin/other"',
    "# a comment that stays",
    "",
    "[profiles.fast]",
    'model = "o4-mini"',
    "",
  ].join("\n");

  it("adds [mcp_servers.engram] to $CODEX_HOME/config.toml keeping comments and tables, and the block to AGENTS.md", async () => {
    const at = place();
    await import("node:fs").then((fs) =>
      fs.writeFileSync(join(at.codexHome, "config.toml"), config),
    );
    at.repo.write("AGENTS.md", "# Agents\n\nBe kind.\n");
    const r = await setup(at, ["codex"]);
    expect(r.code, describeResult(r)).toBe(0);
    const text = read(join(at.codexHome, "config.toml"));
    expect(text.startsWith(config.trimEnd())).toBe(true);
    const parsed = parseToml(text) as unknown as CodexToml;
    expect(parsed.mcp_servers.other).toEqual({ command: "/bin/other" });
    expect(parsed.profiles.fast?.model).toBe("o4-mini");
    expect(parsed.mcp_servers.engram?.command).toBe(process.execPath);
    expect(parsed.mcp_servers.engram?.args.slice(1)).toEqual(["worker", "mcp"]);
    const agents = read(at.repo.path("AGENTS.md"));
    expect(agents.startsWith("# Agents\n\nBe kind.\n\n<!-- engram:begin")).toBe(true);
    expect(agents).toContain(
      `${process.execPath} ${parsed.mcp_servers.engram?.args[0]} worker check`,
    );
  });

  it("is idempotent, --dry-run writes nothing, --remove gives config.toml and AGENTS.md back byte for byte", async () => {
    const at = place();
    await import("node:fs").then((fs) =>
      fs.writeFileSync(join(at.codexHome, "config.toml"), config),
    );
    at.repo.write("AGENTS.md", "# Agents\n\nBe kind.\n");
    await expectRoundTrip(at, ["codex"]);
  });

  it("replaces its table in place, between the user's tables", async () => {
    const at = place();
    const old = `${config}[mcp_servers.engram]\ncommand = "npx"\nargs = ["worker", "mcp"]\n\n[mcp_servers.engram.env]\nA = "1"\n\n[tail]\nx = 1\n`;
    await import("node:fs").then((fs) => fs.writeFileSync(join(at.codexHome, "config.toml"), old));
    const r = await setup(at, ["codex"]);
    expect(r.code, describeResult(r)).toBe(0);
    const text = read(join(at.codexHome, "config.toml"));
    expect(text).not.toContain("npx");
    expect(text.endsWith("\n[tail]\nx = 1\n")).toBe(true);
    expect((parseToml(text) as unknown as CodexToml).mcp_servers.engram?.env).toBeUndefined();
  });

  it("refuses a config.toml that does not parse, or an engram server it cannot edit", async () => {
    const at = place();
    const file = join(at.codexHome, "config.toml");
    const fs = await import("node:fs");
    fs.writeFileSync(file, "model = \n");
    let r = await setup(at, ["codex"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: not valid TOML at line 1`);
    expect(existsSync(at.repo.path("AGENTS.md"))).toBe(false);
    fs.writeFileSync(file, 'mcp_servers.engram.command = "npx"\n');
    r = await setup(at, ["codex"]);
    expect(r.code).toBe(2);
    expect(r.stderr, describeResult(r)).toContain("in a form worker setup does not edit");
    expect(read(file)).toBe('mcp_servers.engram.command = "npx"\n');
  });

  it("refuses an AGENTS.md whose engram block lost its end marker", async () => {
    const at = place();
    at.repo.write("AGENTS.md", "# Agents\n<!-- engram:begin -->\nhalf a block\n");
    const r = await setup(at, ["codex"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${at.repo.path("AGENTS.md")}: an engram:begin marker (line 2)`);
    expect(existsSync(join(at.codexHome, "config.toml"))).toBe(false);
  });

  it("--user puts the block in $CODEX_HOME/AGENTS.md, and needs no repository", async () => {
    const at = place();
    const outside = dirs.dir("engram-nowhere-");
    const r = await runBin(ENGRAM_BIN, ["worker", "setup", "codex", "--user"], {
      cwd: outside,
      env: { HOME: at.home, CODEX_HOME: at.codexHome },
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(read(join(at.codexHome, "AGENTS.md"))).toContain("## Shared memory (engram)");
    expect(existsSync(at.repo.path("AGENTS.md"))).toBe(false);
  });
});

describe("worker setup cursor", () => {
  it("merges .cursor/mcp.json and writes an always-applied rule with YAML front matter", async () => {
    const at = place();
    at.repo.write(".cursor/mcp.json", json({ mcpServers: { web: { url: "http://x/mcp" } } }));
    const r = await setup(at, ["cursor"]);
    expect(r.code, describeResult(r)).toBe(0);
    const mcp = readJson(at.repo.path(".cursor/mcp.json"));
    expect(mcp.mcpServers.web).toEqual({ url: "http://x/mcp" });
    expect(mcp.mcpServers.engram?.command).toBe(process.execPath);
    const rule = read(at.repo.path(".cursor/rules/engram.mdc"));
    const front = /^---\n([\s\S]*?)\n---\n/.exec(rule)?.[1];
    const meta = parseYaml(front ?? "") as Record<string, unknown>;
    expect(meta.alwaysApply).toBe(true);
    expect(typeof meta.description).toBe("string");
    expect(rule).toContain("worker check");
  });

  it("is idempotent, --dry-run writes nothing, --remove takes out the server and the rule", async () => {
    const at = place();
    at.repo.write(".cursor/mcp.json", json({ mcpServers: { web: { url: "http://x/mcp" } } }));
    await expectRoundTrip(at, ["cursor"]);
  });

  it("refuses a .cursor/mcp.json that is not an object, naming it", async () => {
    const at = place();
    at.repo.write(".cursor/mcp.json", "[1, 2]\n");
    const r = await setup(at, ["cursor"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${at.repo.path(".cursor/mcp.json")}: expected a JSON object`);
    expect(existsSync(at.repo.path(".cursor/rules/engram.mdc"))).toBe(false);
  });

  it("--user writes ~/.cursor/mcp.json only", async () => {
    const at = place();
    const r = await setup(at, ["cursor", "--user"]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(readJson(join(at.home, ".cursor", "mcp.json")).mcpServers.engram).toBeDefined();
    expect(existsSync(at.repo.path(".cursor"))).toBe(false);
  });
});

/** A hook `worker setup gemini` registers. */
function geminiHook(bin: string | undefined, event: string) {
  return {
    type: "command",
    command: `${process.execPath} ${bin} worker hook ${event} --host gemini`,
    timeout: 10_000,
  };
}

describe("worker setup gemini", () => {
  it("merges .gemini/settings.json mcpServers and the block in GEMINI.md, and says to trust the folder", async () => {
    const at = place();
    at.repo.write(
      ".gemini/settings.json",
      json({ theme: "Dracula", mcpServers: { other: { httpUrl: "http://x" } } }),
    );
    at.repo.write("GEMINI.md", "Project notes.\n");
    const r = jsonOf<SetupJson>(await setup(at, ["gemini", "--json"]));
    expect(r.notes.join(" ")).toMatch(/trust/);
    const settings = readJson(at.repo.path(".gemini/settings.json"));
    expect(settings.theme).toBe("Dracula");
    expect(settings.mcpServers.other).toEqual({ httpUrl: "http://x" });
    expect(settings.mcpServers.engram?.args.slice(1)).toEqual([
      "worker",
      "mcp",
      "--repo",
      at.repo.dir,
    ]);
    expect(read(at.repo.path("GEMINI.md"))).toMatch(/^Project notes\.\n\n<!-- engram:begin/);
    // Gemini CLI's session hooks, in Claude Code's shape; its timeouts are milliseconds.
    const bin = settings.mcpServers.engram?.args[0];
    const hooks = (settings as unknown as { hooks: Record<string, unknown> }).hooks;
    expect(hooks).toEqual({
      SessionStart: [{ hooks: [geminiHook(bin, "session-start")] }],
      PreCompress: [{ hooks: [geminiHook(bin, "pre-compact")] }],
      SessionEnd: [{ hooks: [geminiHook(bin, "session-end")] }],
    });
  });

  it("is idempotent, --dry-run writes nothing, --remove gives the files back", async () => {
    const at = place();
    at.repo.write(".gemini/settings.json", json({ theme: "Dracula" }));
    at.repo.write("GEMINI.md", "Project notes.\n");
    await expectRoundTrip(at, ["gemini"]);
  });

  it("refuses a settings.json with comments (not JSON), naming it", async () => {
    const at = place();
    at.repo.write(".gemini/settings.json", '// mine\n{"theme": "x"}\n');
    const r = await setup(at, ["gemini"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${at.repo.path(".gemini/settings.json")}: not valid JSON`);
    expect(existsSync(at.repo.path("GEMINI.md"))).toBe(false);
  });

  it("--user writes ~/.gemini/settings.json and ~/.gemini/GEMINI.md", async () => {
    const at = place();
    expect((await setup(at, ["gemini", "--user"])).code).toBe(0);
    expect(readJson(join(at.home, ".gemini", "settings.json")).mcpServers.engram).toBeDefined();
    expect(read(join(at.home, ".gemini", "GEMINI.md"))).toContain("engram:begin");
  });
});

describe("worker setup, the command", () => {
  it("names the nearest host for a typo, and needs a repository without --user", async () => {
    const at = place();
    const typo = await setup(at, ["claude"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean 'claude-code'?");
    const outside = await runBin(ENGRAM_BIN, ["worker", "setup", "cursor"], {
      cwd: dirs.dir("engram-nowhere-"),
      env: { HOME: at.home, CODEX_HOME: at.codexHome },
    });
    expect(outside.code).toBe(3);
    expect(outside.stderr).toContain("not inside a git work tree");
  });
});
