/**
 * Issue 25, items 2 to 4: paths, links and the state folder that come from repository content
 * (an attacker's pull request, a fork, a state folder restored from a branch). Each attack
 * runs through the built bins on a real repository and asserts that the harm does not happen:
 * no file outside the repository is written or removed, no link is followed, no key but the
 * user's own seals a note, and no command exits 70.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { sealCatalog, serializeCatalog } from "../../src/core/model/engram.js";
import type { Catalog } from "../../src/schema/engram.js";
import { dir, dirs, expectExit, initRepo, useCliHarness, wrk } from "../cli/cli-harness.js";
import { git, type TempRepo } from "../support/repo.js";

useCliHarness();

const EPOCH = 1_767_225_600;

function commitAll(repo: TempRepo, message: string): void {
  git(repo.dir, ["add", "-A"]);
  git(repo.dir, ["commit", "-q", "--allow-empty", "-m", message]);
}

function readCatalog(repo: TempRepo): Catalog {
  return JSON.parse(readFileSync(repo.path("memory", "catalog.json"), "utf8")) as Catalog;
}

/** Rewrites the catalog with `change` applied and its hash resealed: a well-formed lie. */
function forgeCatalog(repo: TempRepo, change: (c: Catalog) => Catalog): void {
  const c = change(readCatalog(repo));
  const sealed = sealCatalog(c.catalog_version, c.created_at, c.entries, c.documents);
  writeFileSync(repo.path("memory", "catalog.json"), serializeCatalog(sealed));
}

/** A file outside the repository, and the `../` path that reaches it from the repository. */
function victim(repo: TempRepo, name = "victim.json"): { file: string; rel: string } {
  const outside = dirs.dir("engram-outside-");
  const file = join(outside, name);
  writeFileSync(file, "precious\n");
  // Every temp folder shares one parent, so one `..` from the repository reaches it.
  expect(join(repo.dir, "..")).toBe(join(outside, ".."));
  return { file, rel: `../${basename(outside)}/${name}` };
}

/** A repository with one or two Director cycles run and committed. */
async function withMemory(config = "", cycles = 1): Promise<TempRepo> {
  const repo = await initRepo(`[memory]\nbuffer_keep_recent_events = 0\n${config}`);
  for (let i = 0; i < cycles; i++) {
    const env = { SOURCE_DATE_EPOCH: String(EPOCH + i * 3600) };
    expectExit(
      await wrk(repo, ["emit", "--kind", "fact", "--text", `fact number ${i}`], { env }),
      0,
    );
    expectExit(await dir(repo, ["run", "--flush", "--json"], { env }), 0);
  }
  commitAll(repo, "memory");
  return repo;
}

function noBug(r: { code: number | null; stderr: string }): void {
  expect(r.code).not.toBe(70);
  expect(r.stderr).not.toMatch(/please report it|\n\s+at /);
}

describe("paths from content are confined before any I/O", () => {
  it("rollback: a documents[].path with ../ is refused and the file outside stays", async () => {
    const repo = await withMemory("", 2);
    const { file, rel } = victim(repo);
    forgeCatalog(repo, (c) => ({
      ...c,
      documents: [{ path: rel, kind: "knowledge", hash: `sha256:${"0".repeat(64)}`, bytes: 9 }],
    }));
    const r = await dir(repo, ["rollback", "1", "--json"]);
    expectExit(r, 3);
    noBug(r);
    expect(r.stderr + r.stdout).toContain("documents[0].path");
    expect(readFileSync(file, "utf8")).toBe("precious\n");
  });

  it("eviction: an entries[].path escaping the repository is refused and the file stays", async () => {
    const repo = await withMemory("st_max_files = 1\n");
    const { file, rel } = victim(repo);
    forgeCatalog(repo, (c) => {
      const [first] = c.entries;
      if (!first) throw new Error("no engram");
      // The file outside holds a real engram, so every read of it succeeds; its entry is
      // the oldest, so eviction takes it first.
      writeFileSync(file, readFileSync(repo.path(first.path), "utf8"));
      return {
        ...c,
        entries: [
          { ...first, engram_id: `e_${"0".repeat(32)}`, version: "20200101-000000Z", path: rel },
          ...c.entries,
        ],
      };
    });
    const before = readFileSync(file, "utf8");
    const env = { SOURCE_DATE_EPOCH: String(EPOCH + 7200) };
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "one more"], { env }), 0);
    const r = await dir(repo, ["run", "--json"], { env });
    expectExit(r, 3);
    noBug(r);
    expect(r.stderr).toContain("entries[0].path");
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("worker check reports such a catalog (exit 1, refused), never ok", async () => {
    const repo = await withMemory();
    const { rel } = victim(repo);
    forgeCatalog(repo, (c) => ({
      ...c,
      entries: c.entries.map((e) => ({ ...e, path: rel })),
    }));
    const r = await wrk(repo, ["check", "--offline", "--json"]);
    expectExit(r, 1);
    const json = JSON.parse(r.stdout) as { ok: boolean; unsafe: string[] };
    expect(json.ok).toBe(false);
    expect(json.unsafe.join("\n")).toContain("entries[0].path");
    const text = await wrk(repo, ["check", "--offline"]);
    expect(text.stdout).toContain("refused:");
  });

  it("a cycle intent in the state folder naming a path outside writes nothing there", async () => {
    const repo = await withMemory();
    const outside = dirs.dir("engram-outside-");
    const target = join(outside, "pwned.txt");
    const rel = `../${basename(outside)}/pwned.txt`;
    for (const [field, header, writes] of [
      ["writes[0].path", { through_seq: 0, deletes: [], meta: {} }, [{ path: rel, text: "x" }]],
      [
        "tree",
        { tree: `../../${basename(outside)}`, through_seq: 0, deletes: [], meta: {} },
        [{ path: "memory/pwned.txt", text: "x" }],
      ],
    ] as const) {
      const intent = [header, ...writes].map((l) => `${JSON.stringify(l)}\n`).join("");
      writeFileSync(repo.path(".engram", "buffer", "cycle-intent.json"), intent);
      const r = await dir(repo, ["run", "--json"]);
      // Set aside, never replayed: the run goes on without it.
      expectExit(r, 0);
      noBug(r);
      expect(r.stderr).toContain(field);
      expect(r.stderr).toContain("set aside as");
      expect(readdirSync(outside)).toEqual([]);
    }
    expect(existsSync(target)).toBe(false);
  });
});

describe("symbolic links under memory/ are refused", () => {
  it("verify reports a linked tier and run writes nothing through it", async () => {
    const repo = await withMemory();
    const outside = dirs.dir("engram-outside-");
    // memory/st replaced by a link to a folder outside the repository.
    git(repo.dir, ["rm", "-rq", "memory/st"]);
    mkdirSync(repo.path("memory"), { recursive: true });
    symlinkSync(outside, repo.path("memory", "st"));
    const verify = await dir(repo, ["verify", "--json"]);
    expectExit(verify, 1);
    const findings = (JSON.parse(verify.stdout) as { findings: { path: string; code: string }[] })
      .findings;
    expect(findings).toContainEqual(
      expect.objectContaining({ path: "memory/st", code: "symlink" }),
    );

    const env = { SOURCE_DATE_EPOCH: String(EPOCH + 7200) };
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "new fact"], { env }), 0);
    const run = await dir(repo, ["run", "--flush", "--json"], { env });
    expectExit(run, 3);
    noBug(run);
    expect(run.stderr).toContain("symbolic link");
    expect(readdirSync(outside)).toEqual([]);
  });

  it("the guard refuses a branch that ships a state folder with its own seal key", async () => {
    const repo = await withMemory();
    git(repo.dir, ["checkout", "-q", "-b", "feature"]);
    mkdirSync(repo.path("keys"), { recursive: true });
    writeFileSync(repo.path("keys", "seal.key"), `${"ab".repeat(32)}\n`);
    writeFileSync(repo.path(".engram", "seal.key.pushed"), "x\n");
    writeFileSync(
      repo.path("config", "dev.toml"),
      `${readFileSync(repo.path("config", "dev.toml"), "utf8")}\n[state]\ndir = "keys"\n`,
    );
    git(repo.dir, ["add", "-f", "keys/seal.key", ".engram/seal.key.pushed", "config/dev.toml"]);
    git(repo.dir, ["commit", "-q", "-m", "state of my own"]);
    const r = await dir(repo, ["guard", "--base", "main", "--head", "feature", "--json"]);
    expectExit(r, 1);
    const json = JSON.parse(r.stdout) as { findings: { path: string; code: string }[] };
    const tracked = json.findings.filter((f) => f.code === "state-tracked").map((f) => f.path);
    expect(tracked).toEqual([".engram/seal.key.pushed", "keys/seal.key"]);
  });

  it("the guard refuses a branch that adds memory/lt -> ../.git/hooks (git mode 120000)", async () => {
    const repo = await withMemory();
    git(repo.dir, ["checkout", "-q", "-b", "engram/memory"]);
    git(repo.dir, ["rm", "-rq", "memory/lt"]);
    symlinkSync("../.git/hooks", repo.path("memory", "lt"));
    commitAll(repo, "a link");
    const r = await dir(repo, ["guard", "--base", "main", "--head", "engram/memory", "--json"]);
    expectExit(r, 1);
    const json = JSON.parse(r.stdout) as { findings: { path: string; code: string }[] };
    expect(json.findings).toContainEqual(
      expect.objectContaining({ path: "memory/lt", code: "symlink" }),
    );
  });
});
