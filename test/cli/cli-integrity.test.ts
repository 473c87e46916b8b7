/**
 * Integration through the real bins (`dist/src/cli/{director,worker}.js`, built by `npm test`)
 * on real temporary git repositories: every command and its documented contract.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type Env, jsonOf } from "../support/bins.js";
import { type Envelope, envelope, heartbeat, note } from "../support/envelopes.js";
import { readEngrams, readNdjson, snapshot } from "../support/memory.js";
import { tomlConfig } from "../support/repo.js";
import {
  dir,
  EPOCH,
  expectExit,
  expectVerified,
  ingest,
  initRepo,
  inputFile,
  runCycle,
  spoolFiles,
  useCliHarness,
  wrk,
} from "./cli-harness.js";

useCliHarness();

describe.concurrent("determinism", () => {
  it("the same input gives byte-identical memory/ and MEMORY.md in any time zone", async () => {
    const config = tomlConfig({ memory: { buffer_keep_recent_events: 3 } });
    const sealKey = "5e".repeat(32);
    const batch = (from: number, to: number) => {
      const out: Envelope[] = [];
      const kinds = ["fact", "lesson", "decision", "convention", "incident", "question"] as const;
      for (let i = from; i < to; i++) {
        const sender = `w${i % 3}`;
        const sentAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
        switch (i % 5) {
          case 0:
            out.push(heartbeat(`stage-${i % 4}`, { eventId: `d-${i}`, sender, sentAt }));
            break;
          case 1:
            out.push(
              envelope(
                "worker_error.v1",
                { error_type: `E${i % 2}`, message: `failure ${i}`, retryable: i % 2 === 0 },
                { eventId: `d-${i}`, sender, sentAt },
              ),
            );
            break;
          default:
            out.push(
              note(
                kinds[i % kinds.length] as (typeof kinds)[number],
                `Note ${i}: café ✓ "quoted" text`,
                {
                  eventId: `d-${i}`,
                  sender,
                  sentAt,
                  topics: [`topic-${i % 4}`],
                  links: [`#${i}`, `src/mod${i % 3}/file.ts`],
                  rationale: "because",
                  privacy: i % 7 === 0 ? "sensitive" : i % 11 === 0 ? "public" : "private",
                },
              ),
            );
        }
      }
      return out;
    };
    const file1 = inputFile("det-1.ndjson", batch(0, 40));
    const file2 = inputFile("det-2.ndjson", batch(40, 70));

    const build = async (tz: string) => {
      const repo = await initRepo(config);
      const env = (epoch: number): Env => ({
        TZ: tz,
        SOURCE_DATE_EPOCH: String(epoch),
        ENGRAM_SEAL_KEY: sealKey,
      });
      await ingest(repo, file1, env(EPOCH));
      const r1 = await runCycle(repo, ["--force"], env(EPOCH));
      await ingest(repo, file2, env(EPOCH + 3600));
      const r2 = await runCycle(repo, ["--force"], env(EPOCH + 3600));
      expect(r1.engrams_written).toBeGreaterThan(0);
      expect(r2.engrams_written).toBeGreaterThan(0);
      return { repo, r2 };
    };
    const [a, b] = await Promise.all([build("UTC"), build("Asia/Kathmandu")]);
    expect(a.r2.catalog_hash).toBe(b.r2.catalog_hash);
    const roots = ["memory", "MEMORY.md"];
    const sa = snapshot(a.repo.dir, roots);
    const sb = snapshot(b.repo.dir, roots);
    expect([...sa.keys()]).toEqual([...sb.keys()]);
    expect(sa.size).toBeGreaterThan(4);
    for (const [path, bytes] of sa) {
      expect(sb.get(path)?.equals(bytes), `${path} differs`).toBe(true);
    }
    const [va, vb] = await Promise.all([dir(a.repo, ["verify"]), dir(b.repo, ["verify"])]);
    expectExit(va, 0);
    expectExit(vb, 0);
  });
});

describe.concurrent("tamper detection", () => {
  it("an edited engram fails verify and check (modified); a deleted one is missing", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    await ingest(
      repo,
      inputFile("tamper.ndjson", [
        note("fact", "The staging database is reset nightly", { eventId: "t1", topics: ["db"] }),
        note("fact", "Feature flags live in config/flags.json", {
          eventId: "t2",
          topics: ["flags"],
        }),
        note("fact", "Releases are cut on Tuesdays", { eventId: "t3", topics: ["release"] }),
      ]),
    );
    await runCycle(repo, ["--force"]);
    const engrams = readEngrams(repo.dir, "st");
    expect(engrams.length).toBeGreaterThanOrEqual(2);
    const [victim, other] = engrams as [(typeof engrams)[0], (typeof engrams)[0]];
    const original = readFileSync(repo.path(victim.path));
    const fact = victim.engram.facts[0] as string;
    const edited = original
      .toString("utf8")
      .replace(JSON.stringify(fact), JSON.stringify(fact.replace(/\w+$/, "never")));
    expect(edited).not.toBe(original.toString("utf8"));
    writeFileSync(repo.path(victim.path), edited);

    const [verify, check] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify, 1);
    const lines = verify.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) expect(line.startsWith(`${victim.path}: `), line).toBe(true);
    expectExit(check, 1);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: false,
      catalog_modified: false,
      modified: [victim.path],
      missing: [],
      unlisted: [],
    });

    writeFileSync(repo.path(victim.path), original);
    await expectVerified(repo);

    unlinkSync(repo.path(other.path));
    const [verify2, check2] = await Promise.all([
      dir(repo, ["verify"]),
      wrk(repo, ["check", "--json"]),
    ]);
    expectExit(verify2, 1);
    expect(verify2.stdout).toContain(other.path);
    expectExit(check2, 1);
    expect(JSON.parse(check2.stdout)).toMatchObject({
      ok: false,
      missing: [other.path],
      modified: [],
    });
  });
});

describe.concurrent("worker recall", () => {
  it("returns ranked hits and records a recall signal in the spool unless --no-signal", async () => {
    const repo = await initRepo(tomlConfig({ memory: { buffer_keep_recent_events: 0 } }));
    await ingest(
      repo,
      inputFile("recall.ndjson", [
        note("lesson", "The flaky deploy job needs a retry on the staging cluster", {
          eventId: "c1",
          topics: ["deploy"],
        }),
        note("fact", "The deploy pipeline takes twelve minutes", {
          eventId: "c2",
          topics: ["pipeline"],
        }),
        note("fact", "Database migrations run before the API starts", {
          eventId: "c3",
          topics: ["db"],
        }),
      ]),
    );
    await runCycle(repo, ["--force"]);
    expect(spoolFiles(repo)).toEqual([]);

    interface Hit {
      engram_id: string;
      path: string;
      score: number;
    }
    const hits = jsonOf<Hit[]>(await wrk(repo, ["recall", "flaky deploy retry", "--json"]));
    expect(hits.length).toBeGreaterThanOrEqual(1);
    for (const h of hits) {
      expect(typeof h.engram_id).toBe("string");
      expect(typeof h.score).toBe("number");
      expect(h.path).toMatch(new RegExp(`^memory/st/[^/]+/engram_${h.engram_id}\\.json$`));
    }
    for (let i = 1; i < hits.length; i++) {
      expect((hits[i - 1] as Hit).score).toBeGreaterThanOrEqual((hits[i] as Hit).score);
    }
    const top = JSON.parse(readFileSync(repo.path((hits[0] as Hit).path), "utf8")) as {
      facts: string[];
    };
    expect(top.facts.join("\n")).toContain("flaky deploy job");

    const spooled = spoolFiles(repo);
    expect(spooled).toHaveLength(1);
    const [signal] = readNdjson<{
      message_type: string;
      payload: { kind: string; hits: string[] };
    }>(repo.path(".engram", "spool", spooled[0] as string));
    expect(signal?.message_type).toBe("memory_event.v1");
    expect(signal?.payload.kind).toBe("recall");
    expect(signal?.payload.hits).toEqual(hits.map((h) => h.engram_id));

    const [quiet, none] = await Promise.all([
      wrk(repo, ["recall", "flaky deploy retry", "--no-signal", "--json"]),
      wrk(repo, ["recall", "zebra xylophone", "--json"]),
    ]);
    expect(jsonOf<Hit[]>(quiet).map((h) => h.engram_id)).toEqual(hits.map((h) => h.engram_id));
    expect(jsonOf<Hit[]>(none)).toEqual([]);
    expect(spoolFiles(repo)).toEqual(spooled);

    // The next cycle drains the signal into the buffer.
    const next = await runCycle(repo);
    expect(next.drained.files).toBe(1);
    expect(next.drained.accepted).toBe(1);
    expect(spoolFiles(repo)).toEqual([]);
  });
});
