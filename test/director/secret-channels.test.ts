/**
 * Secrets never leave, end to end: a corpus of fake credentials goes in through every input
 * channel (each `worker emit` flag, `--from`, raw envelopes and each of their fields,
 * malformed lines for the quarantine, `--from-git` commits, the spool, git refs, NATS and
 * the TCP hub),
 * then `director run --force` compacts it all. secretlint (recommended preset) scans every
 * byte engram wrote (the work tree, the state folder, `git log -p --all`, command output):
 * no finding, and no planted value is found anywhere.
 */
import { execFileSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createEngine } from "@secretlint/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, type NatsServer, startNatsServer } from "../../bench/nats-server.js";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  spawnBin,
  worker,
} from "../support/bins.js";
import { envelope, note } from "../support/envelopes.js";
import { type FakeSecret, fakeSecrets } from "../support/fake-secrets.js";
import { git, TempDirs, type TempRepo, tomlConfig } from "../support/repo.js";

const dirs = new TempDirs();
let nats: NatsServer | undefined;

beforeAll(async () => {
  assertBuilt();
  if (findNatsServer() !== undefined) nats = await startNatsServer(dirs.dir("engram-nats-"));
});
afterAll(async () => {
  await nats?.stop();
  dirs.cleanup();
});

/** Every file under `dir` (symbolic links skipped), as path and text. */
function allFiles(dir: string, skip: (path: string) => boolean): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (skip(path) || lstatSync(path).isSymbolicLink()) continue;
    if (statSync(path).isDirectory()) out.push(...allFiles(path, skip));
    else out.push({ path, text: readFileSync(path, "latin1") });
  }
  return out;
}

describe("no secret leaves", () => {
  it("through every channel, into nothing engram writes", async () => {
    const fakes = fakeSecrets(2026);
    const planted: FakeSecret[] = [];
    let next = 0;
    const take = (fits: (f: FakeSecret) => boolean = () => true): FakeSecret => {
      for (let tries = 0; tries < fakes.length; tries++) {
        const f = fakes[next++ % fakes.length] as FakeSecret;
        if (fits(f)) {
          planted.push(f);
          return f;
        }
      }
      throw new Error("no fake fits");
    };
    const short = (f: FakeSecret) => f.text.length <= 64 && !f.text.includes("\n");
    const oneLine = (f: FakeSecret) => !f.text.includes("\n");
    const outputs: string[] = [];
    const ok = (r: BinResult): BinResult => {
      outputs.push(r.stdout, r.stderr);
      if (r.code !== 0) throw new Error(describeResult(r));
      return r;
    };

    const remote = dirs.dir("engram-remote-");
    git(remote, ["init", "-q", "--bare"]);
    const repo: TempRepo = dirs.repo("engram-secrets-");
    repo.writeConfig(
      tomlConfig({ "agent_bus.nats": { stream: "SECRETS", subject_prefix: "secrets.events" } }),
    );
    ok(await director(["init", "--json"], { cwd: repo.dir }));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-qm", "init"]);
    git(repo.dir, ["remote", "add", "origin", remote]);
    const base = git(repo.dir, ["rev-parse", "HEAD"]).trim();

    // Each flag of worker emit, until every kind went through at least once.
    while (next < fakes.length) {
      ok(
        await worker(
          [
            "emit",
            "--kind",
            "fact",
            "--text",
            `deploy note: ${take().text}`,
            "--rationale",
            take().text,
            "--topic",
            take(short).text,
            "--link",
            take(oneLine).text.slice(0, 500),
            "--issue",
            take((f) => f.text.length <= 128).text,
            "--worker",
            take(oneLine).text,
            "--run-id",
            take((f) => f.text.length <= 128).text,
            "--json",
          ],
          { cwd: repo.dir },
        ),
      );
    }
    // A sensitive note: sealed, and redacted before it is sealed.
    ok(
      await worker(
        ["emit", "--kind", "lesson", "--text", take().text, "--privacy", "sensitive", "--json"],
        { cwd: repo.dir },
      ),
    );
    // --from: every field of a note line.
    const notes = [0, 1, 2, 3].map(() =>
      JSON.stringify({
        kind: "decision",
        text: take().text,
        rationale: take().text,
        topics: [take(short).text],
        links: [take(oneLine).text],
        issue: take((f) => f.text.length <= 128).text,
      }),
    );
    writeFileSync(join(repo.dir, "notes.ndjson"), `${notes.join("\n")}\n`);
    ok(await worker(["emit", "--from", "notes.ndjson", "--json"], { cwd: repo.dir }));

    // Raw envelopes: each envelope and payload field, and lines for the quarantine.
    // A sender id is a bare token: the kinds recognisable without context, in a safe id's shape.
    const bareToken = (f: FakeSecret) => f.text === `use ${f.secret} here`;
    const safeIds = fakes.filter((f) => bareToken(f) && /^[A-Za-z0-9_-]{1,128}$/.test(f.secret));
    const lines: string[] = [];
    for (const [i, f] of safeIds.entries()) {
      planted.push(f);
      lines.push(
        JSON.stringify(
          envelope(
            "memory_event.v1",
            {
              kind: take((g) => g.text.length <= 512).text,
              text: take().text,
              topics: [take(short).text],
            },
            { sender: f.secret, eventId: take((g) => g.text.length <= 200).text, seq: i },
          ),
        ),
      );
    }
    const run = take((f) => f.text.length <= 128);
    lines.push(
      JSON.stringify({
        ...envelope("task_progress.v1", {
          stage: take((f) => f.text.length <= 512).text,
          message: take().text,
        }),
        sender: { role: "worker", id: "w2", run_id: run.text },
      }),
    );
    lines.push(JSON.stringify(note("lesson", take().text, { topics: [take(short).text] })));
    // Malformed: a JSON-escaped token (\u0067 is g) in an unterminated line, and an invalid envelope.
    const escaped = take((f) => f.kind === "github-pat" || f.secret.startsWith("gh"));
    lines.push(`{"payload": {"text": "\\u0067${escaped.secret.slice(1)}", `);
    lines.push(JSON.stringify({ schema_version: "nope", secret: take().text }));
    writeFileSync(join(repo.dir, "envelopes.ndjson"), `${lines.join("\n")}\n`);
    ok(await director(["ingest", "envelopes.ndjson", "--json"], { cwd: repo.dir }));

    // --from-git: commit messages.
    for (let i = 0; i < 3; i++) {
      repo.write(`src/file${i}.ts`, `export const n = ${i};\n`);
      git(repo.dir, ["add", "-A"]);
      git(repo.dir, ["commit", "-qm", `Fix deploy ${i}\n\n${take().text}\n\nRefs: #${i + 1}`]);
    }
    ok(await director(["ingest", "--from-git", `${base}..HEAD`, "--json"], { cwd: repo.dir }));

    // Git refs: pushed to the remote by the worker, drained by the Director.
    for (let i = 0; i < 3; i++) {
      ok(
        await worker(
          ["emit", "--kind", "fact", "--text", take().text, "--bus", "git:origin", "--json"],
          {
            cwd: repo.dir,
          },
        ),
      );
    }
    ok(await director(["ingest", "--bus", "git:origin", "--json"], { cwd: repo.dir }));

    // NATS JetStream.
    if (nats !== undefined) {
      for (let i = 0; i < 3; i++) {
        ok(
          await worker(
            ["emit", "--kind", "fact", "--text", take().text, "--bus", nats.url, "--json"],
            {
              cwd: repo.dir,
            },
          ),
        );
      }
      ok(await director(["ingest", "--bus", nats.url, "--json"], { cwd: repo.dir }));
    }

    // The TCP hub (director serve): a worker whose id and notes carry secrets.
    const hub = spawnBin(
      DIRECTOR_BIN,
      ["serve", "--cycle-seconds", "0", "--listen", "127.0.0.1:0", "--json"],
      { cwd: repo.dir, timeoutMs: 120_000 },
    );
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: hub.child.stdout as NodeJS.ReadableStream }).once("line", resolve);
        hub.done.then((r) => reject(new Error(`director serve exited: ${describeResult(r)}`)));
      });
      const address = (JSON.parse(first) as { listening: string }).listening;
      for (let i = 0; i < 3; i++) {
        const args = ["emit", "--kind", "fact", "--text", take().text, "--bus", `tcp://${address}`];
        // A token used as a worker id, as a careless agent might: a bare one, as above (an
        // AWS secret key alone is 40 base64 characters, like any random id).
        const id = take((f) => bareToken(f) && /^[\w.-]+$/.test(f.secret)).secret;
        ok(await worker([...args, "--worker", id, "--json"], { cwd: repo.dir }));
      }
    } finally {
      hub.child.kill("SIGTERM");
    }
    ok(await hub.done);

    ok(await director(["run", "--force", "--json"], { cwd: repo.dir }));
    ok(await director(["verify", "--json"], { cwd: repo.dir }));

    // Everything engram wrote: the work tree and state folder (not our own input files), the
    // remote's refs and all history as text, and what the commands printed.
    const written = allFiles(
      repo.dir,
      (p) => p.endsWith("/.git") || p.endsWith("notes.ndjson") || p.endsWith("envelopes.ndjson"),
    );
    const history = execFileSync("git", ["log", "-p", "--all", "--format=fuller"], {
      cwd: repo.dir,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    const remoteHistory = execFileSync("git", ["log", "-p", "--all"], {
      cwd: remote,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    // Commit messages are ours: the input of --from-git. What engram committed must be clean,
    // so the scan takes the history of memory files and refs, not the messages we wrote.
    const engramHistory = execFileSync(
      "git",
      ["log", "-p", "--all", "--format=%H%n%B", "--", "memory", "MEMORY.md", ".engram"],
      { cwd: repo.dir, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
    );
    expect(history.length).toBeGreaterThan(0);
    const scanDir = dirs.dir("engram-scan-");
    const scanned: { name: string; text: string; from?: string }[] = [
      ...written.map((f, i) => ({ name: `file-${i}.txt`, text: f.text, from: f.path })),
      { name: "engram-history.txt", text: engramHistory },
      { name: "remote-history.txt", text: remoteHistory },
      { name: "output.txt", text: outputs.join("\n") },
    ];
    for (const s of scanned) writeFileSync(join(scanDir, s.name), s.text);
    const engine = await createEngine({
      cwd: scanDir,
      formatter: "json",
      color: false,
      configFileJSON: { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend" }] },
    });
    const result = await engine.executeOnFiles({
      filePathList: scanned.map((s) => join(scanDir, s.name)),
    });
    const findings = (JSON.parse(result.output) as { messages: unknown[] }[]).flatMap(
      (r) => r.messages,
    );
    expect(findings).toEqual([]);

    const kinds = new Set(planted.map((f) => f.kind));
    expect(kinds.size).toBeGreaterThanOrEqual(55);
    for (const f of planted) {
      for (const s of scanned) {
        const at = s.text.indexOf(f.secret);
        if (at !== -1) {
          const around = s.text.slice(Math.max(0, at - 120), at + 20);
          throw new Error(`${f.kind}: planted value found in ${s.from ?? s.name}: ${around}`);
        }
      }
    }
    // The envelopes and notes did arrive: the memory holds the notes, redacted.
    expect(written.some((f) => f.text.includes("[REDACTED:"))).toBe(true);
  });
});
