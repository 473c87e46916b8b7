/**
 * Issue 24, item 1: the Director never writes what it cannot read back. A `--link` holding a
 * line break and credentials once became the entity `file:API_KEY=[REDACTED...]\nSECRET...`
 * in a long-term engram, and every `director run` after it exited 3. Through the built bins:
 * the worker refuses such a flag naming it; another writer's envelope carrying it is
 * quarantined with its reason; an engram already poisoned is named by `director verify` and
 * `director set-aside` takes it out as a new version, after which the Director runs again.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openContext } from "../../src/context/repo-context.js";
import {
  catalogEntryFor,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { VERSION_LOG_PATH } from "../../src/core/versions/log.js";
import { lastRecord, logWith, recordFor } from "../../src/core/versions/record.js";
import { commitCycle, withDirectorState } from "../../src/director/director-state.js";
import type { Catalog, Engram, EngramBody } from "../../src/schema/engram.js";
import {
  dir,
  engramFiles,
  expectExit,
  initRepo,
  inputFile,
  spoolFiles,
  useCliHarness,
  wrk,
} from "../cli/cli-harness.js";
import { jsonOf } from "../support/bins.js";
import { note } from "../support/envelopes.js";
import type { TempRepo } from "../support/repo.js";

useCliHarness();

const EPOCH = { SOURCE_DATE_EPOCH: "1800000000" };
const LATER = { SOURCE_DATE_EPOCH: "1800000600" };
// Built at run time: no secret-looking literal in the source.
const STRIPE = ["sk", "live", "abcdefABCDEF0123456789xyz"].join("_");
const POISON_LINK = `API_KEY=${STRIPE}\nSECRET_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`;

describe("a link with a line break and credentials", () => {
  it("worker emit refuses it naming --link, and sends nothing", async () => {
    const repo = await initRepo();
    const r = await wrk(
      repo,
      ["emit", "--kind", "decision", "--text", "Keep keys out", "--link", POISON_LINK],
      { env: EPOCH },
    );
    expectExit(r, 2);
    expect(r.stderr).toContain("--link: a link is one line: this one holds a line break (U+000A)");
    expect(r.stderr).not.toContain(STRIPE);
    const topic = await wrk(repo, ["emit", "--kind", "fact", "--text", "x", "--topic", "a\tb"]);
    expectExit(topic, 2);
    expect(topic.stderr).toContain("--topic: a topic is one line: this one holds a tab (U+0009)");
    expect(spoolFiles(repo)).toEqual([]);
  });

  it("from another writer it is quarantined with its reason; the Director runs on", async () => {
    const repo = await initRepo();
    const file = inputFile("poison.ndjson", [
      note("decision", "Keep keys out", { links: [POISON_LINK], eventId: "ev_poison" }),
      note("lesson", "Topics are keywords", { topics: ["line\nbreak", "Tab\there"] }),
    ]);
    const ingested = jsonOf<{ accepted: number; quarantined: number }>(
      await dir(repo, ["ingest", file, "--json"], { env: EPOCH }),
    );
    expect(ingested).toMatchObject({ accepted: 1, quarantined: 1 });
    const quarantine = readFileSync(repo.path(".engram", "quarantine.ndjson"), "utf8");
    expect(quarantine).toContain("payload.links.0: a link is one line");
    expect(quarantine).not.toContain(STRIPE);

    expectExit(await dir(repo, ["run", "--flush"], { env: EPOCH }), 0);
    const [st] = engramFiles(repo, "st");
    const engram = JSON.parse(readFileSync(repo.path(st as string), "utf8")) as Engram;
    expect(engram.topics).toEqual(["line break", "tab here"]);
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "again"], { env: LATER }), 0);
    expectExit(await dir(repo, ["run", "--flush"], { env: LATER }), 0);
    expectExit(await dir(repo, ["verify"]), 0);
  });
});

/**
 * Writes into the repository, as an older Director did, an engram whose entity holds a line
 * break: hashed, listed in a new catalog version with its version-log line.
 */
function plantPoisonedEngram(repo: TempRepo): string {
  const catalogPath = repo.path("memory", "catalog.json");
  const catalog = JSON.parse(readFileSync(catalogPath, "utf8")) as Catalog;
  const at = "2027-01-15T08:00:00.000Z";
  const body: EngramBody = {
    version: "20270115-080000Z",
    scope: "lt",
    created_at: at,
    source_window: { start_ts: at, end_ts: at },
    topics: [],
    facts: [],
    decisions: [{ title: "Keep keys out", rationale: "" }],
    links: [{ type: "file", ref: "API_KEY=[REDACTED:stripe-access-token]\nSECRET_KEY=x" }],
    provenance: {
      created_by: "engram-director",
      run_id: "promote-20270115-080000Z",
      event_count: 0,
      senders: ["w1"],
      message_types: {},
    },
    privacy: "private",
    signals: {
      ...{ notes: 1, decisions: 1, lessons: 0, incidents: 0, errors: 0 },
      ...{ max_surprise: null, mean_confidence: null, redactions: 1, truncated: 0 },
    },
    entities: ["file:API_KEY=[REDACTED:stripe-access-token]\nSECRET_KEY=x"],
  };
  const engram = sealEngram(body);
  const text = serializeEngram(engram);
  const entry = catalogEntryFor(engram, Buffer.byteLength(text, "utf8"));
  repo.write(entry.path, text);
  const next = sealCatalog(
    catalog.catalog_version + 1,
    at,
    [...catalog.entries, entry],
    catalog.documents,
  );
  writeFileSync(catalogPath, serializeCatalog(next));
  const logPath = repo.path(VERSION_LOG_PATH);
  const log = existsSync(logPath) ? readFileSync(logPath, "utf8") : undefined;
  const counts = lastRecord(log)?.counts ?? {
    ...{ engrams: 0, episodes: 0, facts: 0, state: 0, core: 0 },
  };
  const record = recordFor(next, { kind: "cycle" }, { ...counts, engrams: next.entries.length });
  writeFileSync(logPath, logWith(log, record));
  return entry.path;
}

describe("an engram poisoned by an older Director", () => {
  it("stops director run with its path; verify names it; set-aside lets memory move again", async () => {
    const repo = await initRepo();
    expectExit(
      await wrk(repo, ["emit", "--kind", "fact", "--text", "kept fact"], { env: EPOCH }),
      0,
    );
    expectExit(await dir(repo, ["run", "--flush"], { env: EPOCH }), 0);
    const kept = engramFiles(repo, "st");
    const poisoned = plantPoisonedEngram(repo);

    expectExit(
      await wrk(repo, ["emit", "--kind", "fact", "--text", "new fact"], { env: LATER }),
      0,
    );
    const stuck = await dir(repo, ["run", "--flush"], { env: LATER });
    expectExit(stuck, 3);
    expect(stuck.stderr).toContain(`${poisoned}: entities.0`);
    expect(stuck.stderr).toContain(`director set-aside ${poisoned}`);
    const verify = await dir(repo, ["verify"]);
    expectExit(verify, 1);
    expect(verify.stdout).toContain(`${poisoned}: entities[0]`);

    const aside = jsonOf<{ path: string; kept_at: string; catalog_version: number }>(
      await dir(repo, ["set-aside", poisoned, "--json"], { env: LATER }),
    );
    expect(aside.path).toBe(poisoned);
    expect(existsSync(repo.path(poisoned))).toBe(false);
    // Nothing lost: the bytes are kept in the state folder, every other engram stays.
    expect(readFileSync(repo.path(".engram", aside.kept_at), "utf8")).toContain("Keep keys out");
    expect(engramFiles(repo, "st")).toEqual(kept);
    expectExit(await dir(repo, ["verify"]), 0);
    const log = readFileSync(repo.path(VERSION_LOG_PATH), "utf8");
    expect(lastRecord(log)?.made_by).toEqual({ kind: "set-aside", path: poisoned });

    expectExit(await dir(repo, ["run", "--flush"], { env: LATER }), 0);
    expectExit(await dir(repo, ["run"], { env: LATER }), 0);
    expectExit(await dir(repo, ["verify"]), 0);
  });

  it("set-aside refuses what is not a memory file, and the catalog itself", async () => {
    const repo = await initRepo();
    for (const target of [
      "memory/catalog.json",
      "../etc/passwd",
      "memory/st/../../x",
      "MEMORY.md",
    ]) {
      const r = await dir(repo, ["set-aside", target]);
      expectExit(r, 2);
    }
    const unknown = await dir(repo, ["set-aside", `e_${"0".repeat(32)}`]);
    expectExit(unknown, 2);
    expect(unknown.stderr).toContain("no engram with this id");
  });
});

describe("the write path checks what it writes", () => {
  it("refuses an engram its readers would refuse, writing nothing, not even the intent", async () => {
    const repo = await initRepo();
    const ctx = await openContext({ repo: repo.dir });
    const engram = sealEngram({
      ...{ version: "20270115-080000Z", scope: "st", created_at: "2027-01-15T08:00:00.000Z" },
      source_window: { start_ts: "2027-01-15T08:00:00.000Z", end_ts: "2027-01-15T08:00:00.000Z" },
      ...{ topics: [], facts: ["x"], decisions: [], links: [], privacy: "private" },
      provenance: {
        ...{ created_by: "engram-director", run_id: "r", event_count: 1 },
        ...{ senders: ["w1"], message_types: {} },
      },
      signals: {
        ...{ notes: 1, decisions: 0, lessons: 0, incidents: 0, errors: 0 },
        ...{ max_surprise: null, mean_confidence: null, redactions: 0, truncated: 0 },
      },
      entities: ["file:a\nb"],
    });
    const path = catalogEntryFor(engram, 1).path;
    const attempt = withDirectorState(ctx, (buffer) =>
      commitCycle(ctx, buffer, {
        through_seq: 0,
        writes: [{ path, text: serializeEngram(engram) }],
        deletes: [],
        meta: {},
      }),
    );
    await expect(attempt).rejects.toThrow(
      new RegExp(
        `refusing to write memory its readers would refuse, nothing was written: ${path}: entities\\[0\\]`,
      ),
    );
    expect(existsSync(repo.path(path))).toBe(false);
    expect(existsSync(ctx.paths.intent)).toBe(false);
    expectExit(await dir(repo, ["verify"]), 0);
    expectExit(await dir(repo, ["run", "--flush"], { env: EPOCH }), 0);
  });

  it("set-aside takes out a stray file verify names, and nothing else", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "kept"], { env: EPOCH }), 0);
    expectExit(await dir(repo, ["run", "--flush"], { env: EPOCH }), 0);
    const kept = engramFiles(repo, "st");
    repo.write("memory/st/notes.txt", "API_KEY=[REDACTED]\n");
    const verify = await dir(repo, ["verify"]);
    expectExit(verify, 1);
    expect(verify.stdout).toContain("memory/st/notes.txt: is not at memory/");
    const aside = jsonOf<{ listed: null; kept_at: string }>(
      await dir(repo, ["set-aside", "memory/st/notes.txt", "--json"], { env: EPOCH }),
    );
    expect(aside.listed).toBeNull();
    expect(readFileSync(repo.path(".engram", aside.kept_at), "utf8")).toBe("API_KEY=[REDACTED]\n");
    expect(engramFiles(repo, "st")).toEqual(kept);
    expectExit(await dir(repo, ["verify"]), 0);
  });

  it("set-aside takes out an edited state document as a version that holds no state", async () => {
    const repo = await initRepo();
    const start = jsonOf<{ session_id: string }>(
      await wrk(repo, ["session", "start", "--json"], { env: EPOCH }),
    );
    const id = start.session_id;
    const write = ["session", "write", "--session", id, "--kind", "state", "--key", "notes"];
    expectExit(await wrk(repo, [...write, "--value", '{"a":1}'], { env: EPOCH }), 0);
    expectExit(await wrk(repo, ["session", "end", id], { env: EPOCH }), 0);
    expectExit(await dir(repo, ["run", "--flush"], { env: EPOCH }), 0);
    const doc = "memory/state/notes.json";
    writeFileSync(repo.path(doc), readFileSync(repo.path(doc), "utf8").replace('"a": 1', '"a": 2'));
    const verify = await dir(repo, ["verify"]);
    expectExit(verify, 1);
    expect(verify.stdout).toContain(`${doc}: expected sha256:`);
    const aside = jsonOf<{ listed: string; version: { counts: { state: number } } }>(
      await dir(repo, ["set-aside", doc, "--json"], { env: EPOCH }),
    );
    expect(aside.listed).toBe("document");
    expect(aside.version.counts.state).toBe(0);
    expect(existsSync(repo.path(doc))).toBe(false);
    expectExit(await dir(repo, ["verify"]), 0);
  });
});
