import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { childEnv } from "./bins.js";

/** Temporary folders of one test file, removed by `cleanup()` (call it in afterAll). */
export class TempDirs {
  private readonly dirs: string[] = [];

  /** A new empty folder. */
  dir(prefix = "engram-test-"): string {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    this.dirs.push(dir);
    return dir;
  }

  /** A new folder holding a fresh git repository (`git init`, no commits). */
  repo(prefix = "engram-repo-"): TempRepo {
    const dir = this.dir(prefix);
    git(dir, ["init", "-q", "-b", "main"]);
    return new TempRepo(dir);
  }

  /** A copy of a repository (work tree, .git and state folder alike). */
  copy(source: TempRepo, prefix = "engram-repo-"): TempRepo {
    const dir = this.dir(prefix);
    cpSync(source.dir, dir, { recursive: true });
    return new TempRepo(dir);
  }

  cleanup(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs git in `dir` with a fixed identity and no user or system config. */
export function git(dir: string, args: readonly string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=engram tests", "-c", "user.email=tests@engram.invalid", ...args],
    {
      cwd: dir,
      env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

/** Whether git ignores `path` (relative to the repository). */
export function gitIgnores(dir: string, path: string): boolean {
  try {
    git(dir, ["check-ignore", "-q", "--no-index", path]);
    return true;
  } catch {
    return false;
  }
}

export class TempRepo {
  constructor(readonly dir: string) {}

  path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  write(rel: string, text: string): string {
    const full = this.path(rel);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    return full;
  }

  /** Writes `config/dev.toml`. */
  writeConfig(toml: string): void {
    this.write("config/dev.toml", toml);
  }
}

/** A `config/dev.toml` from sections of key = value (numbers, booleans and strings). */
export function tomlConfig(
  sections: Record<string, Record<string, number | boolean | string>>,
): string {
  const out: string[] = [];
  for (const [section, keys] of Object.entries(sections)) {
    out.push(`[${section}]`);
    for (const [key, value] of Object.entries(keys)) {
      out.push(`${key} = ${typeof value === "string" ? JSON.stringify(value) : String(value)}`);
    }
    out.push("");
  }
  return out.join("\n");
}
