/**
 * One error model: every error class derives from EngramError, carries a code of the one
 * table, and takes its exit status from it; no other module writes an exit number.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { RemoteUnreachable } from "../src/bus/git-ref-store.js";
import { HubUnavailableError } from "../src/bus/tcp-client.js";
import {
  ConfigError,
  EngramError,
  ERROR_CODES,
  EXIT,
  exitOf,
  FileSystemError,
  fileSystemError,
  ServiceError,
  StateError,
  UsageError,
} from "../src/errors.js";
import { PushError } from "../src/git/remote.js";
import {
  BranchMovedError,
  GitHubApiError,
  GitHubPermissionError,
  wrapGitHubError,
} from "../src/github/errors.js";
import { ROOT } from "./support/bins.js";

describe("the error classes", () => {
  const samples: [EngramError, string][] = [
    [new UsageError("x"), "usage"],
    [new ConfigError("x", "config/dev.toml"), "config"],
    [new StateError("x"), "state"],
    [new StateError("x", { code: "lock_held" }), "lock_held"],
    [new GitHubApiError("x", 502, "GET", "/repos/o/r", "bad gateway"), "github"],
    [new GitHubPermissionError("x"), "github_permission"],
    [new BranchMovedError("b", "a", "c"), "branch_moved"],
    [new PushError("x"), "remote"],
    [new RemoteUnreachable("x"), "remote"],
    [new HubUnavailableError("down", []), "bus"],
    [new ServiceError("x", "bus"), "bus"],
  ];

  it("all derive from EngramError, with a code of the table and its exit status", () => {
    for (const [error, code] of samples) {
      expect(error, error.name).toBeInstanceOf(EngramError);
      expect(error.code, error.name).toBe(code);
      expect(error.exitCode, error.name).toBe(EXIT[ERROR_CODES[error.code].exit]);
      expect(error.name).toBe(error.constructor.name);
    }
  });

  it("external-service failures have their own exit, distinct from findings and state", () => {
    const external = [exitOf("github"), exitOf("remote"), exitOf("bus")];
    expect(new Set(external)).toEqual(new Set([EXIT.unavailable]));
    expect(EXIT.unavailable).not.toBe(EXIT.findings);
    expect(EXIT.unavailable).not.toBe(EXIT.state);
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
    // A vendor failure wrapped at the adapter's edge is one of them.
    const wrapped = wrapGitHubError(Object.assign(new Error("boom"), { status: 500 }));
    expect(wrapped.exitCode).toBe(EXIT.unavailable);
  });
});

describe("fileSystemError", () => {
  const errno = (code: string, path?: string, syscall = "open") =>
    Object.assign(new Error(`${code}: something`), { code, syscall, ...(path ? { path } : {}) });

  it("maps what the file system refuses to state errors naming the path and what to do", () => {
    const cases: [string, string, RegExp][] = [
      ["EACCES", "permission_denied", /permission denied \(EACCES\); check the permissions/],
      ["EPERM", "permission_denied", /not permitted \(EPERM\); check the permissions/],
      ["ENOSPC", "no_space", /no space left on the device \(ENOSPC\); free some space/],
      ["EMFILE", "too_many_open_files", /too many open files \(EMFILE\); raise the limit/],
      ["EROFS", "read_only", /read-only \(EROFS\); run from a writable checkout/],
      ["EISDIR", "is_a_directory", /is a directory \(EISDIR\); give a file/],
      ["ENOTDIR", "not_a_directory", /not a directory \(ENOTDIR\)/],
    ];
    for (const [code, errorCode, says] of cases) {
      const mapped = fileSystemError(errno(code, "/data/repo/.engram/spool/x"));
      expect(mapped, code).toBeInstanceOf(FileSystemError);
      expect(mapped).toBeInstanceOf(StateError);
      expect(mapped?.code).toBe(errorCode);
      expect(mapped?.exitCode).toBe(EXIT.state);
      expect(mapped?.message).toMatch(says);
      expect(mapped?.message.startsWith("/data/repo/.engram/spool/x: ")).toBe(true);
    }
  });

  it("names the user's spelling when given, and says where when the error has no path", () => {
    expect(fileSystemError(errno("ENOENT", "/abs/events.ndjson"), "events.ndjson")?.message).toBe(
      "events.ndjson: no such file or directory (ENOENT); check the path",
    );
    expect(fileSystemError(errno("ENOSPC", undefined, "write"))?.message).toBe(
      "no space left on the device (ENOSPC, in write); free some space and run the command again",
    );
  });

  it("leaves a missing internal file (a bug) and other errors alone", () => {
    expect(fileSystemError(errno("ENOENT", "/repo/.engram/buffer/meta.json"))).toBeUndefined();
    expect(fileSystemError(errno("ECONNRESET"))).toBeUndefined();
    expect(fileSystemError(new TypeError("x"))).toBeUndefined();
  });
});

describe("exit numbers", () => {
  it("are written only in src/errors.ts", () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith(".ts") && !path.endsWith(join("src", "errors.ts"))) {
          const text = readFileSync(path, "utf8");
          if (/exitCode\s*[=:]\s*\d|process\.exit\(\s*\d|exitCode\s*\?\?\s*\d/.test(text)) {
            offenders.push(relative(ROOT, path));
          }
        }
      }
    };
    walk(join(ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
