import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  type BinResult,
  describeResult,
  jsonOf,
  spawnBin,
  WORKER_BIN,
  worker,
} from "../support/bins.js";
import { git, TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const temps = new TempDirs();
afterAll(() => temps.cleanup());
beforeAll(() => assertBuilt());

interface Start {
  session_id: string;
  parent_version: number;
  parent_catalog_hash: string;
  parent_commit: string | null;
}
interface Show {
  session_id: string;
  items: { seq: number; kind: string; text?: string; value?: unknown; sealed?: unknown[] }[];
  counts: Record<string, number>;
}

async function start(repo: TempRepo, extra: string[] = []): Promise<Start> {
  return jsonOf<Start>(await worker(["session", "start", "--json", ...extra], { cwd: repo.dir }));
}

function write(repo: TempRepo, id: string, args: string[], env = {}): Promise<BinResult> {
  return worker(["session", "write", "--session", id, ...args], { cwd: repo.dir, env });
}

/** A repository engram is set up in (a config file is enough), with no memory written yet. */
function configured(): TempRepo {
  const repo = temps.repo();
  repo.writeConfig("");
  return repo;
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" });
}

describe("worker session", () => {
  it("starts on the current version, writes only to its buffer, redacts and seals", async () => {
    const repo = configured();
    const s = await start(repo, ["--name", "task 12"]);
    expect(s.session_id).toMatch(/^s_[0-9a-f]{16}$/);
    expect(s.parent_version).toBe(0);
    expect(s.parent_catalog_hash).toMatch(/^sha256:/);
    expect(s.parent_commit).toBeNull();

    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const writes = [
      [
        "--kind",
        "episode",
        "--text",
        "fixed the flaky test",
        "--outcome",
        "success",
        "--confidence",
        "0.6",
      ],
      ["--kind", "fact", "--text", `CI uses ${secret}`, "--confidence", "0.9"],
      ["--kind", "decision", "--text", "use pnpm", "--confidence", "0.8", "--rationale", "speed"],
      ["--kind", "state", "--key", "build", "--value", '{"green":true,"password":"hunter2"}'],
      [
        "--kind",
        "core",
        "--key",
        "team-profile",
        "--value",
        '{"lang":"ts"}',
        "--confidence",
        "0.95",
      ],
      [
        "--kind",
        "lesson",
        "--text",
        "the staging password is swordfish",
        "--confidence",
        "0.9",
        "--privacy",
        "sensitive",
      ],
    ];
    const sealKey = "5e".repeat(32);
    for (const w of writes) {
      const r = await write(repo, s.session_id, w, { ENGRAM_SEAL_KEY: sealKey });
      expect(r.code, describeResult(r)).toBe(0);
    }
    const shown = jsonOf<Show>(
      await worker(["session", "show", s.session_id, "--json"], { cwd: repo.dir }),
    );
    expect(shown.items.map((i) => [i.seq, i.kind])).toEqual([
      [1, "episode"],
      [2, "fact"],
      [3, "decision"],
      [4, "state"],
      [5, "core"],
      [6, "lesson"],
    ]);
    expect(shown.counts).toMatchObject({ episode: 1, fact: 1, state: 1, core: 1, lesson: 1 });
    expect(shown.items[5]?.text).toBeUndefined();
    expect(shown.items[5]?.sealed).toHaveLength(1);

    const raw = readFileSync(repo.path(".engram", "sessions", `${s.session_id}.ndjson`), "utf8");
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain("hunter2");
    expect(raw).not.toContain("swordfish");
    // Nothing left the sandbox: no memory/, no spool file.
    expect(existsSync(repo.path("memory"))).toBe(false);
    expect(files(repo.path(".engram", "spool"))).toEqual([]);

    const list = jsonOf<{ session_id: string; name: string }[]>(
      await worker(["session", "list", "--json"], { cwd: repo.dir }),
    );
    expect(list.map((l) => [l.session_id, l.name])).toEqual([[s.session_id, "task 12"]]);
  });

  it("refuses writes to unknown and discarded sessions, naming them, and bad flags", async () => {
    const repo = configured();
    repo.write("README.md", "x\n");
    git(repo.dir, ["add", "README.md"]);
    git(repo.dir, ["commit", "-q", "-m", "first"]);
    const s = await start(repo);
    expect(s.parent_commit).toBe(git(repo.dir, ["rev-parse", "HEAD"]).trim());
    const unknown = await write(repo, "s_0123456789abcdef", [
      "--kind",
      "fact",
      "--text",
      "x",
      "--confidence",
      "0.9",
    ]);
    expect(unknown.code, describeResult(unknown)).toBe(3);
    expect(unknown.stderr).toContain("s_0123456789abcdef is unknown");

    // Flags the kind's table entry does not allow, or a value that does not parse: exit 2.
    const usage: [string[], string][] = [
      [["--kind", "episode", "--text", "x", "--confidence", "0.5"], "--outcome is required"],
      [["--kind", "state", "--key", "k", "--value", "{"], "--value: not valid JSON"],
      [
        ["--kind", "state", "--key", "k", "--value", "1", "--text", "t"],
        "--text does not go with --kind state",
      ],
    ];
    for (const [args, message] of usage) {
      const r = await write(repo, s.session_id, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
    }

    await write(repo, s.session_id, ["--kind", "state", "--key", "k", "--value", "1"]);
    const d = jsonOf<{ items_dropped: number }>(
      await worker(["session", "discard", s.session_id, "--json"], { cwd: repo.dir }),
    );
    expect(d.items_dropped).toBe(1);
    expect(existsSync(repo.path(".engram", "sessions", `${s.session_id}.ndjson`))).toBe(false);
    const after = await write(repo, s.session_id, [
      "--kind",
      "state",
      "--key",
      "k",
      "--value",
      "2",
    ]);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain(`session ${s.session_id} was discarded`);
    expect(files(repo.path(".engram", "spool"))).toEqual([]);
  });

  it("refuses a write over the [sessions] item or byte budget, keeping what was written", async () => {
    const repo = temps.repo();
    repo.writeConfig(tomlConfig({ sessions: { buffer_max_items: 2, buffer_max_bytes: 100_000 } }));
    const s = await start(repo);
    for (const n of [1, 2]) {
      const r = await write(repo, s.session_id, [
        "--kind",
        "state",
        "--key",
        "k",
        "--value",
        String(n),
      ]);
      expect(r.code, describeResult(r)).toBe(0);
    }
    const full = await write(repo, s.session_id, ["--kind", "state", "--key", "k", "--value", "3"]);
    expect(full.code).toBe(3);
    expect(full.stderr).toContain("buffer_max_items = 2");

    const small = temps.repo();
    small.writeConfig(tomlConfig({ sessions: { buffer_max_bytes: 400 } }));
    const t = await start(small);
    const ok = await write(small, t.session_id, [
      "--kind",
      "fact",
      "--text",
      "short",
      "--confidence",
      "0.9",
    ]);
    expect(ok.code, describeResult(ok)).toBe(0);
    const big = await write(small, t.session_id, [
      "--kind",
      "fact",
      "--text",
      "y".repeat(300),
      "--confidence",
      "0.9",
    ]);
    expect(big.code).toBe(3);
    expect(big.stderr).toContain("buffer_max_bytes = 400");
    const shown = jsonOf<Show>(
      await worker(["session", "show", t.session_id, "--json"], { cwd: small.dir }),
    );
    expect(shown.items).toHaveLength(1);
  });

  it("keeps every acknowledged write when writers are killed with SIGKILL, cutting a torn line", async () => {
    const repo = configured();
    const s = await start(repo);
    // A seeded spread of kill times: some writers die before, some during, some after writing.
    let seed = 20261123;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const acked: string[] = [];
    for (let round = 0; round < 3; round++) {
      const spawned = Array.from({ length: 4 }, (_, i) => {
        const text = `note ${round}-${i}`;
        const child = spawnBin(
          WORKER_BIN,
          [
            "session",
            "write",
            "--session",
            s.session_id,
            "--kind",
            "fact",
            "--text",
            text,
            "--confidence",
            "0.9",
          ],
          { cwd: repo.dir, timeoutMs: 30_000 },
        );
        const killAt = Math.floor(next() * 1500);
        const timer = setTimeout(() => child.child.kill("SIGKILL"), killAt);
        return child.done.then((r) => {
          clearTimeout(timer);
          if (r.code === 0) acked.push(text);
          return r;
        });
      });
      await Promise.all(spawned);
    }
    // And a writer killed mid-line: the bytes of a line without its newline.
    const path = repo.path(".engram", "sessions", `${s.session_id}.ndjson`);
    appendFileSync(path, '{"type":"item","kind":"fact","text":"torn');
    const shown = jsonOf<Show>(
      await worker(["session", "show", s.session_id, "--json"], { cwd: repo.dir }),
    );
    const texts = shown.items.map((i) => i.text);
    for (const text of acked) expect(texts).toContain(text);
    expect(texts).not.toContain("torn");
    const after = await write(repo, s.session_id, [
      "--kind",
      "fact",
      "--text",
      "after",
      "--confidence",
      "0.9",
    ]);
    expect(after.code, describeResult(after)).toBe(0);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.at(-1)).toContain('"after"');
    expect(lines).toHaveLength(shown.items.length + 2);
  });
});
