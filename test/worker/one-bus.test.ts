/**
 * Many agents, one memory: a note written in any checkout of the repository reaches the
 * Director, or the worker says why not. Real repositories: a bare origin, the Director's
 * checkout (its config's `[worker] bus = "git:origin"`, which `director run` drains), a
 * worktree of it, a clone with `ENGRAM_BUS`, a clone with the config default, and a clone
 * with neither, whose note is stranded until `worker resend`.
 */
import {
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/errors.js";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  director,
  type Env,
  jsonOf,
  worker,
} from "../support/bins.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import { git, TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
let origin: string;

beforeAll(async () => {
  assertBuilt();
  const template = dirs.repo("engram-onebus-template-");
  jsonOf(await director(["init", "--json"], { cwd: template.dir }));
  git(template.dir, ["add", "-A"]);
  git(template.dir, ["commit", "-q", "-m", "engram init"]);
  origin = join(dirs.dir("engram-onebus-origin-"), "origin.git");
  git(template.dir, ["init", "-q", "--bare", "-b", "main", origin]);
  git(template.dir, ["push", "-q", origin, "main"]);
});
afterAll(() => dirs.cleanup());

function clone(): string {
  const dir = join(dirs.dir("engram-onebus-clone-"), "repo");
  git(origin, ["clone", "-q", origin, dir]);
  return dir;
}

function emit(cwd: string, word: string, env: Env = {}): Promise<BinResult> {
  return worker(["emit", "--kind", "fact", "--text", `the ${word} note`, "--json"], {
    cwd,
    env: { ...GIT_ENV, ...env },
  });
}

interface Emitted {
  event_id: string;
  transport: string;
  spooled: boolean;
  path?: string;
  warning?: string;
}

/** Every text of the Director's memory (memory/ and MEMORY.md), joined. */
function memoryText(repo: string): string {
  const out: string[] = [readFileSync(join(repo, "MEMORY.md"), "utf8")];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(readFileSync(path, "utf8"));
    }
  };
  walk(join(repo, "memory"));
  return out.join("\n");
}

async function mcpEmit(cwd: string, env: Env): Promise<Emitted & { message: string }> {
  const client = await stdioMcpClient(cwd, { ...GIT_ENV, ...env });
  try {
    const r = await client.callTool({
      name: "memory_emit",
      arguments: { kind: "fact", text: "an mcp note" },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    return r.structuredContent as Emitted & { message: string };
  } finally {
    await client.close();
  }
}

async function flush(repo: string): Promise<{ sources: { source: string; accepted: number }[] }> {
  return jsonOf(await director(["run", "--flush", "--json"], { cwd: repo, env: GIT_ENV }));
}

describe("one bus for every checkout", () => {
  it("notes from a worktree and from clones reach the Director; a stranded one is warned about, reported and resent once", async () => {
    const dir = clone();
    const init = await director(["init", "--bus", "git:origin"], { cwd: dir, env: GIT_ENV });
    expect(init.code, describeResult(init)).toBe(0);
    expect(init.stdout).toContain('[worker] bus = "git:origin"');
    expect(readFileSync(join(dir, "config", "dev.toml"), "utf8")).toMatch(/^bus = "git:origin"$/m);

    // A worktree of the Director's checkout: its note goes to the main worktree's spool.
    const tree = join(dirs.dir("engram-onebus-worktree-"), "tree");
    git(dir, ["worktree", "add", "-q", "-b", "agent-1", tree]);
    const fromTree = await emit(tree, "worktreeword");
    expect(fromTree.code, describeResult(fromTree)).toBe(0);
    const treeOut = jsonOf<Emitted>(fromTree);
    expect(treeOut.spooled).toBe(true);
    expect(treeOut.path?.startsWith(join(dir, ".engram", "spool"))).toBe(true);
    expect(treeOut.warning).toBeUndefined();
    expect(fromTree.stderr).toBe("");

    // A clone with ENGRAM_BUS, a clone with the team default in its config.
    const withEnv = clone();
    const envOut = jsonOf<Emitted>(await emit(withEnv, "envword", { ENGRAM_BUS: "git:origin" }));
    expect(envOut).toMatchObject({ transport: "git", spooled: false });
    const beat = await worker(["heartbeat", "--stage", "test", "--json"], {
      cwd: withEnv,
      env: { ...GIT_ENV, ENGRAM_BUS: "git:origin" },
    });
    expect(jsonOf<Emitted>(beat)).toMatchObject({ transport: "git", spooled: false });
    const withConfig = clone();
    const cfg = await director(["init", "--bus", "git:origin", "--json"], {
      cwd: withConfig,
      env: GIT_ENV,
    });
    expect(cfg.code, describeResult(cfg)).toBe(0);
    const cfgOut = jsonOf<Emitted>(await emit(withConfig, "configword"));
    expect(cfgOut).toMatchObject({ transport: "git", spooled: false });

    // A clone with neither: spooled where no Director drains, and it says so.
    const stranded = clone();
    const lost = await emit(stranded, "strandedword");
    expect(lost.code, describeResult(lost)).toBe(0);
    const lostOut = jsonOf<Emitted>(lost);
    expect(lostOut.spooled).toBe(true);
    expect(lost.stderr).toContain("which no Director drains");
    expect(lost.stderr).toContain("ENGRAM_BUS=git:origin");
    expect(lostOut.warning).toContain("worker resend");
    const check = await worker(["check", "--offline", "--json"], { cwd: stranded, env: GIT_ENV });
    const checked = JSON.parse(check.stdout) as {
      undrained_spool: { files: number; oldest: string } | null;
    };
    expect(checked.undrained_spool).toMatchObject({ files: 1 });
    expect(checked.undrained_spool?.oldest).toMatch(/^\d{4}-\d\d-\d\dT/);
    const checkText = await worker(["check", "--offline"], { cwd: stranded, env: GIT_ENV });
    expect(checkText.stdout).toContain("stranded: 1 spool file(s)");
    // The Director's checkout reports nothing stranded: it drains its spool.
    const dirCheck = await worker(["check", "--offline", "--json"], { cwd: dir, env: GIT_ENV });
    expect(JSON.parse(dirCheck.stdout)).toMatchObject({ undrained_spool: null });

    // One cycle: the spool (the worktree's note) and git:origin (the clones' notes).
    const run = await flush(dir);
    // The two clones' notes and the heartbeat.
    expect(run.sources).toEqual([expect.objectContaining({ source: "git:origin", accepted: 3 })]);
    const memory = memoryText(dir);
    for (const word of ["worktreeword", "envword", "configword"]) expect(memory).toContain(word);
    expect(memory).not.toContain("strandedword");

    // Resent while the bus is down: nothing acknowledged, so the note stays in the spool.
    git(stranded, ["remote", "add", "down", "git://127.0.0.1:1/none.git"]);
    const down = await worker(["resend", "--bus", "git:down", "--json"], {
      cwd: stranded,
      env: GIT_ENV,
    });
    expect(down.code, describeResult(down)).toBe(EXIT.findings);
    expect(JSON.parse(down.stdout)).toMatchObject({ files: 1, acknowledged: 0, left: 1 });
    const waiting = await worker(["check", "--offline", "--json"], { cwd: stranded, env: GIT_ENV });
    expect(JSON.parse(waiting.stdout)).toMatchObject({ undrained_spool: { files: 1 } });

    // Resent once: delivered; a second resend sends nothing.
    const resent = await worker(["resend", "--bus", "git:origin", "--json"], {
      cwd: stranded,
      env: GIT_ENV,
    });
    expect(jsonOf(resent)).toMatchObject({ files: 1, acknowledged: 1, removed: 1, left: 0 });
    const again = await worker(["resend", "--bus", "git:origin"], { cwd: stranded, env: GIT_ENV });
    expect(again.code, describeResult(again)).toBe(0);
    expect(again.stdout).toContain("nothing to resend");
    const after = await worker(["check", "--offline", "--json"], { cwd: stranded, env: GIT_ENV });
    expect(JSON.parse(after.stdout)).toMatchObject({ undrained_spool: null });
    const second = await flush(dir);
    expect(second.sources).toEqual([
      expect.objectContaining({ source: "git:origin", accepted: 1 }),
    ]);
    expect(memoryText(dir)).toContain("strandedword");
  });

  it("a worktree uses its main worktree's [state] dir, checked like its own", async () => {
    const main = clone();
    writeFileSync(join(main, "config", "dev.toml"), '[state]\ndir = "local-state"\n');
    writeFileSync(join(main, ".gitignore"), "/local-state/\n");
    expect((await director(["init"], { cwd: main, env: GIT_ENV })).code).toBe(0);
    const tree = join(dirs.dir("engram-onebus-worktree-"), "tree");
    git(main, ["worktree", "add", "-q", "-b", "agent-2", tree]);
    const out = jsonOf<Emitted>(await emit(tree, "stateword"));
    expect(out.path?.startsWith(join(main, "local-state", "spool"))).toBe(true);
    // The main worktree's state folder made a link: refused from the worktree too.
    renameSync(join(main, "local-state"), join(main, "elsewhere"));
    symlinkSync(join(main, "elsewhere"), join(main, "local-state"));
    const refused = await emit(tree, "stateword");
    expect(refused.code, describeResult(refused)).toBe(EXIT.usage);
    expect(refused.stderr).toContain("state.dir");
    expect(refused.stderr).toContain("symbolic link");
  });

  it("MCP memory_emit sends over the worker's bus, and says when its note is stranded", async () => {
    const sent = await mcpEmit(clone(), { ENGRAM_BUS: "git:origin" });
    expect(sent).toMatchObject({ transport: "git", spooled: false });
    expect(sent.warning).toBeUndefined();
    const stranded = await mcpEmit(clone(), {});
    expect(stranded).toMatchObject({ transport: "spool", spooled: true });
    expect(stranded.warning).toContain("which no Director drains");
    expect(stranded.message).toContain("worker resend");
  });

  it("a typo'd bus is exit 2 naming it, wherever it came from, and nothing is spooled", async () => {
    const repo = clone();
    const typo = await emit(repo, "typoword", { ENGRAM_BUS: "git:orgin" });
    expect(typo.code, describeResult(typo)).toBe(EXIT.usage);
    expect(typo.stderr).toContain('no remote named "orgin"');
    expect(typo.stderr).toContain("its remotes: origin");
    expect(typo.stderr).toContain("nothing was sent or spooled");
    // A path with no repository there is no bad day either.
    const nowhere = await emit(repo, "typoword", { ENGRAM_BUS: `git:${join(repo, "no.git")}` });
    expect(nowhere.code, describeResult(nowhere)).toBe(EXIT.usage);
    expect(nowhere.stderr).toContain("does not appear to be a git repository");
    const malformed = await emit(repo, "typoword", { ENGRAM_BUS: "tcp://nohost" });
    expect(malformed.code, describeResult(malformed)).toBe(EXIT.usage);
    expect(malformed.stderr).toContain("ENGRAM_BUS");
    const check = await worker(["check", "--offline", "--json"], { cwd: repo, env: GIT_ENV });
    expect(JSON.parse(check.stdout)).toMatchObject({ undrained_spool: null });
  });

  it("the repository's config may name a remote, or an allowed host, never any other destination", async () => {
    const repo = clone();
    for (const [bus, said] of [
      ["git:https://elsewhere.invalid/x.git", "not a remote of this repository"],
      ["tcp://elsewhere.invalid:7070", "a host the environment does not allow"],
    ]) {
      writeFileSync(join(repo, "config", "dev.toml"), `[worker]\nbus = "${bus}"\n`);
      const r = await emit(repo, "trustword");
      expect(r.code, describeResult(r)).not.toBe(0);
      expect(r.stderr).toContain("[worker] bus");
      expect(r.stderr).toContain(said);
      // The environment's own choice is the user's.
      const allowed = await emit(repo, "trustword", { ENGRAM_BUS: "spool" });
      expect(allowed.code, describeResult(allowed)).toBe(0);
    }
  });
});
