/**
 * The git-ref transport on real repositories: a bare repository as `origin`, clones for the
 * writers and the Director, the built bins as processes (and the sender in process where a
 * test must act between two pushes of one writer).
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitRefDelivery, gitRefSender } from "../../src/bus/git-ref.js";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { EXIT } from "../../src/errors.js";
import { buildEnvelope } from "../../src/worker/envelope.js";
import {
  assertBuilt,
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  jsonOf,
  runBin,
  type Spawned,
  spawnBin,
  WORKER_BIN,
} from "../support/bins.js";
import { fakeGithubToken } from "../support/envelopes.js";
import { readJournal } from "../support/memory.js";
import { Rng } from "../support/random.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";
import { waitUntil } from "../support/wait.js";

const dirs = new TempDirs();
/** A repository after `director init`, committed: what every origin starts from. */
let template: TempRepo;
/** Git in the bins and in process: no user or system config. */
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

beforeAll(async () => {
  assertBuilt();
  Object.assign(process.env, GIT_ENV);
  template = dirs.repo("engram-gitref-template-");
  jsonOf(await runBin(DIRECTOR_BIN, ["init", "--json"], { cwd: template.dir }));
  git(template.dir, ["add", "-A"]);
  git(template.dir, ["commit", "-q", "-m", "engram init"]);
});
afterAll(() => dirs.cleanup());

interface Swarm {
  /** The bare repository every clone calls `origin`. */
  origin: string;
  /** The Director's clone (initialized). */
  director: string;
  /** A new writer clone. */
  clone(): string;
}

async function swarm(): Promise<Swarm> {
  const origin = join(dirs.dir("engram-origin-"), "origin.git");
  git(template.dir, ["init", "-q", "--bare", "-b", "main", origin]);
  git(template.dir, ["push", "-q", origin, "main"]);
  const clone = () => {
    const dir = join(dirs.dir("engram-clone-"), "repo");
    git(template.dir, ["clone", "-q", origin, dir]);
    return dir;
  };
  const director = clone();
  jsonOf(await runBin(DIRECTOR_BIN, ["init", "--json"], { cwd: director }));
  return { origin, director, clone };
}

function emit(cwd: string, text: string, extra: readonly string[] = []): Promise<BinResult> {
  return runBin(
    WORKER_BIN,
    ["emit", "--kind", "fact", "--text", text, "--bus", "git:origin", "--json", ...extra],
    { cwd, env: GIT_ENV, timeoutMs: 170_000 },
  );
}

interface Emitted extends GitRefDelivery {
  event_id: string;
}

interface Drain {
  source: string;
  accepted: number;
  duplicates: number;
  quarantined: number;
  redacted: number;
  acknowledged: number;
  refs: number;
  files: number;
  kept: number;
}

async function drain(cwd: string, remote = "origin"): Promise<Drain> {
  return jsonOf<Drain>(
    await runBin(DIRECTOR_BIN, ["ingest", "--bus", `git:${remote}`, "--json"], {
      cwd,
      env: GIT_ENV,
      timeoutMs: 120_000,
    }),
  );
}

function eventRefs(origin: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git(origin, [
    "for-each-ref",
    "--format=%(refname) %(objectname)",
    "refs/engram/events/",
  ]).split("\n")) {
    const [ref, sha] = line.split(" ");
    if (ref && sha) out.set(ref, sha);
  }
  return out;
}

/** Event keys in the Director's journal (`ih:<sha256 of the event_id>`), with how often each occurs. */
function journalIds(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of readJournal(dir).events) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
  return counts;
}

/** Waits for a file a hook or a child writes (a safety bound, not a timing assertion). */
function waitForFile(path: string): Promise<void> {
  return waitUntil(() => existsSync(path), `${path} to appear`, 10);
}

/**
 * A pre-receive hook on origin that, while `block-deletes` exists, holds every push that
 * deletes a ref: it creates `hook-entered`, waits for `hook-release`, then accepts the push
 * if that file says `allow` and rejects it otherwise. Other pushes pass at once.
 */
function installDeleteGate(origin: string): void {
  const hook = join(origin, "hooks", "pre-receive");
  writeFileSync(
    hook,
    `#!/bin/sh
deletes=0
while read old new ref; do
  [ "$new" = "0000000000000000000000000000000000000000" ] && deletes=1
done
[ "$deletes" = 1 ] && [ -f block-deletes ] || exit 0
: > hook-entered
i=0
while [ ! -f hook-release ]; do
  sleep 0.05; i=$((i+1)); [ $i -gt 2400 ] && exit 1
done
[ "$(cat hook-release)" = allow ] && exit 0
exit 1
`,
  );
  chmodSync(hook, 0o755);
  writeFileSync(join(origin, "block-deletes"), "");
}

function openGate(origin: string, verdict: "allow" | "reject"): void {
  writeFileSync(join(origin, "hook-release"), verdict);
}

/** A Director drain held by the delete gate: its events journaled, its prune not yet pushed. */
async function drainHeldAtPrune(s: Swarm): Promise<Spawned> {
  installDeleteGate(s.origin);
  const held = spawnBin(DIRECTOR_BIN, ["ingest", "--bus", "git:origin", "--json"], {
    cwd: s.director,
    env: GIT_ENV,
    timeoutMs: 120_000,
  });
  await waitForFile(join(s.origin, "hook-entered"));
  return held;
}

/** SIGKILLs a held drain, then lets later pushes through (its own prune refused). */
async function killHeldDrain(s: Swarm, held: Spawned): Promise<BinResult> {
  held.child.kill("SIGKILL");
  const result = await held.done;
  openGate(s.origin, "reject");
  rmSync(join(s.origin, "block-deletes"));
  return result;
}

describe("git-ref transport", () => {
  it("fifty writer processes push at once; one Director drain ingests all fifty, loses none, duplicates none, prunes every ref", async () => {
    const s = await swarm();
    // Five clones (five CI runners), ten writers in each (jobs sharing a runner's clone).
    const clones = Array.from({ length: 5 }, () => s.clone());
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        emit(clones[i % 5] as string, `parallel note ${i}`, ["--worker", `job-${i % 7}`]),
      ),
    );
    const emitted = results.map((r) => jsonOf<Emitted>(r));
    for (const [i, e] of emitted.entries()) {
      expect(e.spooled, describeResult(results[i] as BinResult)).toBe(false);
      expect(e.transport).toBe("git");
    }
    // Writers sharing a worker id still get refs of their own.
    const refs = eventRefs(s.origin);
    expect(refs.size).toBe(50);
    expect(new Set(emitted.map((e) => e.ref)).size).toBe(50);

    const d = await drain(s.director);
    expect(d).toMatchObject({ accepted: 50, duplicates: 0, quarantined: 0, refs: 50, files: 50 });
    expect(d.acknowledged).toBe(50);
    expect(eventRefs(s.origin).size).toBe(0);
    const ids = journalIds(s.director);
    expect([...ids.keys()].sort()).toEqual(emitted.map((e) => eventIdKey(e.event_id)).sort());
    expect([...ids.values()].every((n) => n === 1)).toBe(true);
    const texts = readJournal(s.director)
      .events.map((e) => e.text)
      .sort();
    expect(texts).toEqual(Array.from({ length: 50 }, (_, i) => `parallel note ${i}`).sort());

    // Nothing left: a second drain finds nothing.
    expect(await drain(s.director)).toMatchObject({ accepted: 0, duplicates: 0, refs: 0 });
  });

  it("fifty writers, two thousand events, a Director killed mid-drain and restarted: each event once", async () => {
    const s = await swarm();
    const clones = Array.from({ length: 5 }, () => s.clone());
    const sent: string[] = [];
    let writing = true;
    const writer = async (w: number) => {
      const ctx = await openContext({ repo: clones[w % 5] as string });
      const sender = gitRefSender(ctx, "origin");
      for (let round = 0; round < 4; round++) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            buildEnvelope(
              "memory_note.v1",
              { kind: "fact", text: `writer ${w} round ${round} note ${i}`, topics: ["swarm"] },
              { id: `job-${w}` },
              new Date().toISOString(),
              round * 10 + i,
            ),
          ),
        );
        const delivery = await sender.send(batch);
        expect(delivery.spooled).toBe(false);
        for (const e of batch) sent.push(e.event_id);
      }
      await sender.close();
    };
    const writers = Promise.all(Array.from({ length: 50 }, (_, w) => writer(w))).finally(() => {
      writing = false;
    });
    const rng = new Rng(77);
    const kills: string[] = [];
    while (writing) {
      const spawned = spawnBin(DIRECTOR_BIN, ["ingest", "--bus", "git:origin", "--json"], {
        cwd: s.director,
        env: GIT_ENV,
        timeoutMs: 120_000,
      });
      const delay = 200 + rng.int(0, 1199);
      const timer = setTimeout(() => spawned.child.kill("SIGKILL"), delay);
      const r = await spawned.done;
      clearTimeout(timer);
      kills.push(r.signal ? `killed at ${delay} ms` : `exit ${r.code}`);
      if (r.signal === null) expect(r.code, describeResult(r)).toBe(0);
    }
    await writers;
    // Drains until the remote holds no event ref (a writer's last push may land after a drain).
    for (let i = 0; i < 5 && eventRefs(s.origin).size > 0; i++) await drain(s.director);
    expect(eventRefs(s.origin).size, kills.join("; ")).toBe(0);
    expect(sent).toHaveLength(2000);
    const ids = journalIds(s.director);
    const missing = sent.filter((id) => !ids.has(eventIdKey(id)));
    expect(missing, kills.join("; ")).toEqual([]);
    expect([...ids.values()].every((n) => n === 1)).toBe(true);
    expect(
      kills.some((k) => k.startsWith("killed")),
      kills.join("; "),
    ).toBe(true);
  }, 300_000);

  it("director run drains the sources of agent_bus.sources", async () => {
    const s = await swarm();
    const writer = s.clone();
    const emitted = await Promise.all([emit(writer, "run note a"), emit(writer, "run note b")]);
    const configPath = join(s.director, "config", "dev.toml");
    const config = readFileSync(configPath, "utf8");
    expect(config).toContain("sources = []");
    writeFileSync(configPath, config.replace("sources = []", 'sources = ["git:origin"]'));
    const r = jsonOf<{ sources: Drain[] }>(
      await runBin(DIRECTOR_BIN, ["run", "--json"], { cwd: s.director, env: GIT_ENV }),
    );
    expect(r.sources).toHaveLength(1);
    expect(r.sources[0]).toMatchObject({ source: "git:origin", accepted: 2, acknowledged: 2 });
    expect([...journalIds(s.director).keys()].sort()).toEqual(
      emitted.map((e) => eventIdKey(jsonOf<Emitted>(e).event_id)).sort(),
    );
    expect(eventRefs(s.origin).size).toBe(0);
  });

  it("a Director killed between the journal fsync and the prune re-reads nothing twice", async () => {
    const s = await swarm();
    const writer = s.clone();
    const emitted = (
      await Promise.all(Array.from({ length: 6 }, (_, i) => emit(writer, `crash note ${i}`)))
    ).map((r) => jsonOf<Emitted>(r));
    // The prune is held in the hook: the events are in the journal, the refs still on origin.
    const first = await drainHeldAtPrune(s);
    expect((await killHeldDrain(s, first)).signal).toBe("SIGKILL");
    expect(journalIds(s.director).size).toBe(6);
    expect(eventRefs(s.origin).size).toBe(6);

    // Restarted: what was recorded as ingested is not read again, only pruned.
    const second = await drain(s.director);
    expect(second).toMatchObject({ accepted: 0, duplicates: 0, files: 0, acknowledged: 6 });
    expect(eventRefs(s.origin).size).toBe(0);
    const ids = journalIds(s.director);
    expect([...ids.keys()].sort()).toEqual(emitted.map((e) => eventIdKey(e.event_id)).sort());
    expect([...ids.values()].every((n) => n === 1)).toBe(true);
  });

  it("a crash before the drain state was written: the refs are read again and deduplicated", async () => {
    const s = await swarm();
    const writer = s.clone();
    await Promise.all(Array.from({ length: 4 }, (_, i) => emit(writer, `dedup note ${i}`)));
    await killHeldDrain(s, await drainHeldAtPrune(s));
    // As if killed between the fsync and the state write.
    rmSync(join(s.director, ".engram", "bus"), { recursive: true });
    const second = await drain(s.director);
    expect(second).toMatchObject({ accepted: 0, duplicates: 4, files: 4, acknowledged: 4 });
    expect([...journalIds(s.director).values()]).toEqual([1, 1, 1, 1]);
  });

  it("a writer that pushes while the Director prunes keeps its new events (the lease fails)", async () => {
    const s = await swarm();
    const writer = s.clone();
    const ctx = await openContext({ repo: writer });
    const sender = gitRefSender(ctx, "origin");
    const a = await note("before the drain");
    const b = await note("during the prune");
    const first = await sender.send([a]);
    expect(first).toMatchObject({ spooled: false, attempts: 1 });

    const director = await drainHeldAtPrune(s);
    // The Director read the ref at its first commit and is deleting it: the writer adds to it.
    const second = await sender.send([b]);
    expect(second).toMatchObject({ spooled: false, ref: first.ref, attempts: 1 });
    openGate(s.origin, "allow");
    const d = jsonOf<Drain>(await director.done);
    expect(d).toMatchObject({ accepted: 1, acknowledged: 0, kept: 1 });
    expect(eventRefs(s.origin).get(first.ref as string)).toBe(second.commit);

    rmSync(join(s.origin, "block-deletes"));
    // The next drain reads only the new file and prunes.
    expect(await drain(s.director)).toMatchObject({
      accepted: 1,
      duplicates: 0,
      files: 1,
      acknowledged: 1,
    });
    expect([...journalIds(s.director).keys()].sort()).toEqual(
      [eventIdKey(a.event_id), eventIdKey(b.event_id)].sort(),
    );
    expect(eventRefs(s.origin).size).toBe(0);
  });

  it("a rejected push is rebuilt on what the remote holds and retried", async () => {
    const s = await swarm();
    const writer = s.clone();
    const other = s.clone();
    const ctx = await openContext({ repo: writer });
    const sender = gitRefSender(ctx, "origin", { baseDelayMs: 10 });
    const a = await note("first");
    const first = await sender.send([a]);
    const ref = first.ref as string;
    expect(await drain(s.director)).toMatchObject({ accepted: 1, acknowledged: 1 });

    // The Director pruned the ref: the lease on the old tip fails; the retry starts afresh.
    const b = await note("after the prune");
    const second = await sender.send([b]);
    expect(second).toMatchObject({ spooled: false, ref, attempts: 2 });
    expect(git(writer, ["rev-list", "--parents", "-n", "1", second.commit as string]).trim()).toBe(
      second.commit,
    );

    // Someone else moved the ref: the retry builds on top of what is there.
    git(other, ["push", "-q", "--force", "origin", `main:${ref}`]);
    const moved = eventRefs(s.origin).get(ref) as string;
    const c = await note("after someone moved the ref");
    const third = await sender.send([c]);
    expect(third).toMatchObject({ spooled: false, ref, attempts: 2 });
    expect(git(writer, ["rev-parse", `${third.commit}^`]).trim()).toBe(moved);
    const files = git(s.origin, ["ls-tree", "-r", "--name-only", ref]).trim().split("\n");
    expect(files).toHaveLength(1);
    expect(files[0]).toContain(c.event_id);

    // B was pushed, then overwritten by someone else: that loss is theirs. C arrives once.
    expect(await drain(s.director)).toMatchObject({ accepted: 1, duplicates: 0, acknowledged: 1 });
    expect(journalIds(s.director).has(eventIdKey(c.event_id))).toBe(true);
  });

  it("an unreachable remote falls back to the spool (exit 0, spooled, with the reason)", async () => {
    const s = await swarm();
    const writer = s.clone();
    // A refused connection is a bad day: the note waits in the spool.
    git(writer, ["remote", "add", "down", "git://127.0.0.1:1/none.git"]);
    const sent = await runBin(
      WORKER_BIN,
      ["emit", "--kind", "fact", "--text", "offline", "--bus", "git:down", "--json"],
      { cwd: writer, env: GIT_ENV },
    );
    expect(sent.code, describeResult(sent)).toBe(0);
    const out = jsonOf<Emitted>(sent);
    expect(out).toMatchObject({ transport: "git", spooled: true });
    expect(out.fallback_reason).toMatch(/127\.0\.0\.1/);
    expect(existsSync(out.path as string)).toBe(true);
    // The Director cannot drain an unreachable remote either: exit 69 (an external service),
    // naming the source.
    const r = await runBin(DIRECTOR_BIN, ["ingest", "--bus", "git:nosuchremote"], {
      cwd: s.director,
      env: GIT_ENV,
    });
    expect(r.code, describeResult(r)).toBe(EXIT.unavailable);
    expect(r.stderr).toContain("git:nosuchremote");
    // director run reports it and goes on with its cycle: the spool is still drained.
    writeFileSync(
      join(s.director, "config", "dev.toml"),
      '[agent_bus]\nsources = ["git:nosuchremote"]\n',
    );
    const spooled = await runBin(WORKER_BIN, ["emit", "--kind", "fact", "--text", "local"], {
      cwd: s.director,
    });
    expect(spooled.code).toBe(0);
    const run = await runBin(DIRECTOR_BIN, ["run", "--json"], { cwd: s.director, env: GIT_ENV });
    expect(run.code, describeResult(run)).toBe(0);
    const result = JSON.parse(run.stdout) as {
      drained: { accepted: number };
      sources: { source: string; error?: string }[];
    };
    expect(result.drained.accepted).toBe(1);
    expect(result.sources).toEqual([
      expect.objectContaining({
        source: "git:nosuchremote",
        error: expect.stringContaining("nosuchremote"),
      }),
    ]);
  });

  it("hostile refs: bad lines and foreign entries are quarantined, the rest ingested, the ref pruned", async () => {
    const s = await swarm();
    const evil = dirs.repo("engram-evil-");
    const good = await note("a good line among bad ones");
    evil.write("events/000-a.ndjson", `not json\n${JSON.stringify(good)}\n{"schema_version":1}\n`);
    evil.write("events/sub/b.ndjson", `${JSON.stringify(await note("inside a folder"))}\n`);
    git(evil.dir, ["add", "-A"]);
    git(evil.dir, ["commit", "-q", "-m", "evil"]);
    git(evil.dir, ["push", "-q", s.origin, "HEAD:refs/engram/events/evil/x"]);
    const d = await drain(s.director);
    expect(d).toMatchObject({ accepted: 1, quarantined: 3, acknowledged: 1, files: 2 });
    expect([...journalIds(s.director).keys()]).toEqual([eventIdKey(good.event_id)]);
    const quarantine = readFileSync(join(s.director, ".engram", "quarantine.ndjson"), "utf8");
    expect(quarantine).toContain("refs/engram/events/evil/x:events/sub");
    expect(quarantine).toContain("not-a-file");
    expect(eventRefs(s.origin).size).toBe(0);
  });

  it("secrets are redacted on the worker: none reaches git, the buffer or the journal", async () => {
    const s = await swarm();
    const writer = s.clone();
    // The repository's own pattern applies on the worker too.
    const configPath = join(writer, "config", "dev.toml");
    writeFileSync(
      configPath,
      readFileSync(configPath, "utf8").replace("patterns = []", 'patterns = ["ACME-[0-9]{6}"]'),
    );
    const token = fakeGithubToken("git-ref");
    const r = await emit(writer, `deploy with ${token} and password=hunter2 and ACME-123456`);
    const out = jsonOf<Emitted>(r);
    expect(out).toMatchObject({ spooled: false, redacted: 3 });

    const objects = git(s.origin, ["cat-file", "--batch-all-objects", "--batch"]);
    expect(objects).toContain(out.event_id);
    for (const secret of [token, "hunter2", "ACME-123456"]) {
      expect(objects).not.toContain(secret);
      expect(git(writer, ["cat-file", "--batch-all-objects", "--batch"])).not.toContain(secret);
    }
    expect(await drain(s.director)).toMatchObject({ accepted: 1 });
    const journal = readJournal(s.director).raw;
    expect(journal).toContain("[REDACTED:github-pat]");
    for (const secret of [token, "hunter2", "ACME-123456"]) expect(journal).not.toContain(secret);
  });
});

function note(text: string) {
  return buildEnvelope(
    "memory_note.v1",
    { kind: "fact", text, topics: [], links: [] },
    { id: "w-inproc" },
    new Date().toISOString(),
  );
}
