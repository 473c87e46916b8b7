/**
 * `worker session write|show|end|discard` name their session the same two ways: the `ID`
 * positional or `--session ID`; two different ids, or `--session` on start and list, are
 * usage errors (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, describeResult, jsonOf, worker } from "../support/bins.js";
import { TempDirs, type TempRepo } from "../support/repo.js";
import { SESSION_ENV } from "../support/sessions.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

function configured(): TempRepo {
  const repo = temps.repo("engram-session-ids-");
  repo.writeConfig("");
  return repo;
}

const run = (repo: TempRepo, args: string[]) =>
  worker(["session", ...args], { cwd: repo.dir, env: SESSION_ENV });

async function started(repo: TempRepo): Promise<string> {
  return jsonOf<{ session_id: string }>(await run(repo, ["start", "--json"])).session_id;
}

describe("worker session: ID or --session ID", () => {
  it("write takes the id as a positional; show, end and discard take --session", async () => {
    const repo = configured();
    const id = await started(repo);
    const fact = ["--kind", "fact", "--text", "both forms name it", "--confidence", "0.9"];
    const positional = await run(repo, ["write", id, ...fact]);
    expect(positional.code, describeResult(positional)).toBe(0);
    const flagged = await run(repo, ["write", "--session", id, ...fact]);
    expect(flagged.code, describeResult(flagged)).toBe(0);

    const shown = jsonOf<{ items: unknown[] }>(
      await run(repo, ["show", "--session", id, "--json"]),
    );
    expect(shown.items).toHaveLength(2);
    const ended = await run(repo, ["end", "--session", id, "--json"]);
    expect(jsonOf<{ session_id: string; items: number }>(ended)).toMatchObject({
      session_id: id,
      items: 2,
    });

    const other = await started(repo);
    const dropped = await run(repo, ["discard", "--session", other, "--json"]);
    expect(jsonOf<{ session_id: string }>(dropped).session_id).toBe(other);
  });

  it("refuses two different ids, a missing id, and --session on start and list", async () => {
    const repo = configured();
    const id = await started(repo);
    const two = await run(repo, ["show", id, "--session", "s_0000000000000000"]);
    expect(two.code, describeResult(two)).toBe(2);
    expect(two.stderr).toContain("two sessions named");
    const same = await run(repo, ["show", id, "--session", id]);
    expect(same.code, describeResult(same)).toBe(0);
    const none = await run(repo, ["end"]);
    expect(none.code, describeResult(none)).toBe(2);
    expect(none.stderr).toContain("ID or --session ID");
    for (const action of ["start", "list"]) {
      const r = await run(repo, [action, "--session", id]);
      expect(r.code, `${action}: ${describeResult(r)}`).toBe(2);
    }
  });
});
