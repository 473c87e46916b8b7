import { describe, expect, it } from "vitest";
import { reportError } from "../../src/cli/report.js";
import { EXIT, StateError, UsageError } from "../../src/errors.js";

function capture() {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    streams: {
      stdout: { write: (t: string) => (out.stdout += t) },
      stderr: { write: (t: string) => (out.stderr += t) },
    },
  };
}

describe("reportError, the catch block of every entry point", () => {
  it("prints a user error's message, and with json one object with its code", () => {
    const { out, streams } = capture();
    const exit = reportError(
      "director run",
      new StateError("locked", { code: "lock_held" }),
      true,
      streams,
    );
    expect(exit).toBe(EXIT.state);
    expect(out.stderr).toBe("director run: locked\n");
    expect(JSON.parse(out.stdout)).toEqual({
      error: "StateError",
      code: "lock_held",
      message: "locked",
      exit_code: 3,
    });
  });

  it("keeps a usage error's usage text out of the JSON message", () => {
    const { out, streams } = capture();
    reportError(
      "worker emit",
      new UsageError("--kind is required", { usage: "usage: x\n" }),
      true,
      streams,
    );
    expect(JSON.parse(out.stdout).message).toBe("--kind is required");
    expect(out.stderr).toBe("worker emit: --kind is required\n\nusage: x\n");
  });

  it("maps a file-system refusal to a state error, not a bug", () => {
    const { out, streams } = capture();
    const error = Object.assign(new Error("EROFS: read-only file system, open '/ro/x'"), {
      code: "EROFS",
      path: "/ro/x",
    });
    expect(reportError("worker emit", error, true, streams)).toBe(EXIT.state);
    expect(JSON.parse(out.stdout).code).toBe("read_only");
    expect(out.stderr).not.toMatch(/a bug/);
  });

  it("reports anything else as a bug: the stack on stderr, and still one JSON object", () => {
    const { out, streams } = capture();
    expect(reportError("director run", new TypeError("x is undefined"), true, streams)).toBe(
      EXIT.internal,
    );
    expect(out.stderr).toMatch(
      /^director run: internal error \(a bug; please report it\)\nTypeError/,
    );
    expect(JSON.parse(out.stdout)).toMatchObject({ code: "internal", exit_code: 70 });
    const quiet = capture();
    reportError("director run", new TypeError("x"), false, quiet.streams);
    expect(quiet.out.stdout).toBe("");
  });
});
