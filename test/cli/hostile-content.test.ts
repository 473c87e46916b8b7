/**
 * Issue 25, item 8: no repository content (nor state folder content) makes a command exit 70
 * (internal error) or print a stack trace. Each hostile file goes through the real bins on a
 * real repository holding engrams, session documents and a version log; every command either
 * copes or fails with a clear error naming the file.
 */
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinResult, describeResult, director, worker } from "../support/bins.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

let template: TempRepo;
const DEPTH = 200_000;
const deep = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
const deepToml = (n: number) => `\nx = ${"[".repeat(n)}${"]".repeat(n)}\n`;
const FIFTY_MB = 50 * 1024 * 1024;

async function ok(r: Promise<BinResult>): Promise<BinResult> {
  const done = await r;
  expect(done.code, describeResult(done)).toBe(0);
  return done;
}

beforeAll(async () => {
  template = dirs.repo("engram-hostile-");
  template.writeConfig("[memory]\nbuffer_keep_recent_events = 0\n");
  const at = { cwd: template.dir };
  await ok(director(["init"], at));
  for (const text of ["Decision one about foo", "Decision two about foo"]) {
    await ok(worker(["emit", "--kind", "decision", "--text", text, "--topic", "foo"], at));
  }
  await ok(director(["run", "--flush"], at));
  const start = await ok(worker(["session", "start", "--json"], at));
  const id = (JSON.parse(start.stdout) as { session_id: string }).session_id;
  const write = (args: string[]) => ok(worker(["session", "write", "--session", id, ...args], at));
  await write(["--kind", "state", "--key", "build", "--value", '{"tool":"tsc"}']);
  await write(["--kind", "fact", "--text", "foo uses bar", "--confidence", "0.9"]);
  await write([
    "--kind",
    "core",
    "--key",
    "values",
    "--value",
    '"be kind"',
    "--confidence",
    "0.95",
  ]);
  await ok(worker(["session", "end", id], at));
  await ok(director(["run"], at));
  template.write("config/registry.toml", '[[people]]\nid = "alice"\nname = "Alice"\n');
  await ok(director(["verify"], at));
  git(template.dir, ["add", "-A"]);
  git(template.dir, ["commit", "-q", "-m", "memory"]);
});

function firstEngram(repo: TempRepo): string {
  const st = repo.path("memory", "st");
  const batch = readdirSync(st).find((n) => n !== ".gitkeep") as string;
  return `memory/st/${batch}/${readdirSync(join(st, batch))[0] as string}`;
}

/** Adds a key first in a pretty-printed JSON object file. */
function injectKey(repo: TempRepo, rel: string, key: string, value: string): void {
  const text = readFileSync(repo.path(rel), "utf8");
  writeFileSync(repo.path(rel), text.replace(/^\{\n/, `{\n  ${JSON.stringify(key)}: ${value},\n`));
}

function invalidUtf8(repo: TempRepo, rel: string): void {
  const bytes = readFileSync(repo.path(rel));
  const cut = bytes.indexOf(0x0a) + 1;
  writeFileSync(
    repo.path(rel),
    Buffer.concat([
      bytes.subarray(0, cut),
      Buffer.from('  "x": "\xff\xfe\xc3",\n', "latin1"),
      bytes.subarray(cut),
    ]),
  );
}

/** The file each hostile case damages (named by the error), and how. */
const CASES: Record<
  string,
  { file: string | ((r: TempRepo) => string); damage: (r: TempRepo, file: string) => void }
> = {
  "deeply nested key in the catalog": {
    file: "memory/catalog.json",
    damage: (r, f) => injectKey(r, f, "x", deep(DEPTH)),
  },
  "__proto__ key in the catalog": {
    file: "memory/catalog.json",
    damage: (r, f) => injectKey(r, f, "__proto__", '{"catalog_version": 99}'),
  },
  "huge number in the catalog": {
    file: "memory/catalog.json",
    damage: (r, f) =>
      writeFileSync(
        r.path(f),
        readFileSync(r.path(f), "utf8").replace(
          /"catalog_version": \d+/,
          '"catalog_version": 1e999',
        ),
      ),
  },
  "50 MB catalog": {
    file: "memory/catalog.json",
    damage: (r, f) => injectKey(r, f, "pad", JSON.stringify("x".repeat(FIFTY_MB))),
  },
  "invalid UTF-8 in the catalog": { file: "memory/catalog.json", damage: invalidUtf8 },
  "deeply nested key in an engram": {
    file: firstEngram,
    damage: (r, f) => injectKey(r, f, "x", deep(DEPTH)),
  },
  "__proto__ key in an engram": {
    file: firstEngram,
    damage: (r, f) => injectKey(r, f, "__proto__", '{"facts": ["run curl | sh"]}'),
  },
  "50 MB engram": {
    file: firstEngram,
    damage: (r, f) => injectKey(r, f, "pad", JSON.stringify("x".repeat(FIFTY_MB))),
  },
  "invalid UTF-8 in an engram": { file: firstEngram, damage: invalidUtf8 },
  "deeply nested key in a knowledge document": {
    file: "memory/knowledge/fact.json",
    damage: (r, f) => injectKey(r, f, "x", deep(DEPTH)),
  },
  "__proto__ key in a state document": {
    file: "memory/state/build.json",
    damage: (r, f) => injectKey(r, f, "__proto__", '{"value": "evil"}'),
  },
  "deeply nested versions.ndjson line": {
    file: "memory/versions.ndjson",
    damage: (r, f) => appendFileSync(r.path(f), `${deep(DEPTH)}\n`),
  },
  "__proto__ versions.ndjson line": {
    file: "memory/versions.ndjson",
    damage: (r, f) => appendFileSync(r.path(f), '{"__proto__": {"version": 9}}\n'),
  },
  "deeply nested dev.toml": {
    file: "config/dev.toml",
    damage: (r, f) => appendFileSync(r.path(f), deepToml(DEPTH)),
  },
  "__proto__ table in dev.toml": {
    file: "config/dev.toml",
    damage: (r, f) => appendFileSync(r.path(f), "\n[__proto__]\npolluted = 1\n"),
  },
  "deeply nested registry.toml": {
    file: "config/registry.toml",
    damage: (r, f) => appendFileSync(r.path(f), deepToml(DEPTH)),
  },
  "50 MB registry.toml": {
    file: "config/registry.toml",
    damage: (r, f) => appendFileSync(r.path(f), `# ${"x".repeat(FIFTY_MB)}\n`),
  },
  "a journal line that is not an event": {
    file: ".engram/buffer/journal.ndjson",
    damage: (r, f) => appendFileSync(r.path(f), `{"seq":1,"key":"x","e":${deep(DEPTH)}}\n`),
  },
  "a cycle intent that writes outside memory": {
    file: ".engram/buffer/cycle-intent.json",
    damage: (r, f) =>
      writeFileSync(
        r.path(f),
        `${JSON.stringify({ through_seq: 0, deletes: [], meta: {} })}\n${JSON.stringify({ path: ".github/workflows/x.yml", text: "evil" })}\n`,
      ),
  },
};

const COMMANDS: [string, typeof director, string[]][] = [
  ["worker check", worker, ["check", "--offline"]],
  ["director verify", director, ["verify"]],
  ["director run", director, ["run"]],
  ["director status", director, ["status"]],
  ["worker recall", worker, ["recall", "foo"]],
  ["worker context", worker, ["context", "foo"]],
];

describe.concurrent("hostile repository and state content", () => {
  for (const [name, hostile] of Object.entries(CASES)) {
    it(`${name}: no command crashes, every error names the file`, async () => {
      const repo = dirs.copy(template);
      const file = typeof hostile.file === "string" ? hostile.file : hostile.file(repo);
      hostile.damage(repo, file);
      for (const [command, bin, args] of COMMANDS) {
        const r = await bin(args, { cwd: repo.dir, timeoutMs: 120_000 });
        const what = `${command} on ${name}: ${describeResult(r)}`;
        expect(r.signal, what).toBeNull();
        expect(r.code, what).not.toBe(70);
        expect(r.stderr, what).not.toMatch(/internal error|\n\s+at /);
        // An error (exit 2 or 3) says which file; findings (exit 1) list it.
        if (r.code !== 0) expect(`${r.stderr}${r.stdout}`, what).toContain(file);
      }
      // A cycle intent from elsewhere never writes outside memory.
      expect(() => readFileSync(repo.path(".github/workflows/x.yml"))).toThrow();
    }, 600_000);
  }
});
