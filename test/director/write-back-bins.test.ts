/**
 * The proof of issue 24, item 1, through the built bins: arbitrary strings (control
 * characters, line breaks, lone surrogates, credentials, 10 KB values) in every flag of
 * `worker emit` and `worker session write`, every field of `memory_emit` (the official MCP SDK
 * client against `worker mcp`) and every field of an envelope from another writer (`director
 * ingest`). Each command either takes the value or refuses it with a usage error naming the
 * flag or field; then `director run --flush` writes memory that reads back with the readers'
 * own schemas and `director verify`, and a second run goes on from it. A handful of cases:
 * each one spawns some twenty processes; the in-process property (test/core/write-back) runs
 * many more.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CATALOG_PATH, ENGRAM_PATH_PATTERN } from "../../src/core/model/paths.js";
import { Catalog, Engram } from "../../src/schema/engram.js";
import { dir, expectExit, initRepo, inputFile, useCliHarness, wrk } from "../cli/cli-harness.js";
import { type BinResult, describeResult, jsonOf } from "../support/bins.js";
import { envelope } from "../support/envelopes.js";
import { fakeSecrets } from "../support/fake-secrets.js";
import { stdioMcpClient } from "../support/mcp-client.js";
import type { TempRepo } from "../support/repo.js";
import { memoryTree } from "../support/sessions.js";

useCliHarness();

const ENV = { SOURCE_DATE_EPOCH: "1800000000" };
const LATER = { SOURCE_DATE_EPOCH: "1800003600" };
const SECRETS = fakeSecrets(2024).map((s) => s.text);

const piece = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("\n", "\r\n", "\t", "\u0001", "\u007F", "\u0085", "\u2028", "\uD800", "\uDC00"),
  fc.constantFrom("API_KEY=", "\nSECRET_KEY=", "src/a.ts", "#12", "PR 7", " ", "é", "👩‍💻"),
  fc.constantFrom(...SECRETS),
);
const short = fc.array(piece, { minLength: 1, maxLength: 5 }).map((p) => p.join(""));
/** Mostly short; sometimes 10 KB (over every text limit). */
const hostile = fc.oneof(
  { weight: 5, arbitrary: short },
  {
    weight: 1,
    arbitrary: short.map((s) => (s || "x").repeat(Math.ceil(10_240 / (s.length || 1)))),
  },
);

/** argv cannot carry NUL (spawn refuses it): the one character a flag can never hold. */
const arg = (s: string) => s.replace(/\0/g, "") || "x";

/** A usage error names a flag or field, or the command took the value: nothing else. */
function tookOrRefused(r: BinResult, names: RegExp): void {
  if (r.code === 0) return;
  expect(r.code, describeResult(r)).toBe(2);
  expect(r.stderr, describeResult(r)).toMatch(names);
}

const FLAG =
  /--(text|rationale|topic|link|issue|value|key)\b|\b(text|rationale|topics|links|issue)\b/;

interface Case {
  text: string;
  rationale: string;
  topic: string;
  link: string;
  issue: string;
  value: string;
}

const cases = fc.record({
  text: hostile,
  rationale: hostile,
  topic: hostile,
  link: hostile,
  issue: hostile,
  value: hostile,
});

async function feed(repo: TempRepo, c: Case, env: Record<string, string>): Promise<void> {
  // A plain note beside the hostile ones: it must reach memory whatever they do.
  expectExit(
    await wrk(repo, ["emit", "--kind", "lesson", "--text", `plain ${env.SOURCE_DATE_EPOCH}`], {
      env,
    }),
    0,
  );
  // worker emit: every flag at once, then each one alone with plain neighbours.
  const flags: [string, string][] = [
    ["--text", c.text],
    ["--rationale", c.rationale],
    ["--topic", c.topic],
    ["--link", c.link],
    ["--issue", c.issue],
  ];
  const all = flags.flatMap(([f, v]) => [f, arg(v)]);
  tookOrRefused(await wrk(repo, ["emit", "--kind", "decision", ...all], { env }), FLAG);
  for (const [flag, v] of flags.slice(2)) {
    const r = await wrk(repo, ["emit", "--kind", "fact", "--text", "plain", flag, arg(v)], {
      env,
    });
    tookOrRefused(r, FLAG);
  }
  // worker emit --from: the same values as JSON (lone surrogates and NUL included).
  const notes = inputFile("notes.ndjson", [
    JSON.stringify({ kind: "lesson", text: c.text, topics: [c.topic], links: [c.link] }),
  ]);
  tookOrRefused(await wrk(repo, ["emit", "--from", notes], { env }), FLAG);

  // worker session write, then end.
  const start = jsonOf<{ session_id: string }>(
    await wrk(repo, ["session", "start", "--json"], { env }),
  );
  const id = start.session_id;
  const writes = [
    [
      "--kind",
      "fact",
      "--text",
      arg(c.text),
      "--confidence",
      "0.9",
      "--rationale",
      arg(c.rationale),
    ],
    ["--kind", "state", "--key", "notes", "--value", JSON.stringify({ v: c.value })],
    ["--kind", "episode", "--text", arg(c.link), "--confidence", "0.5", "--outcome", "success"],
  ];
  for (const w of writes) {
    tookOrRefused(await wrk(repo, ["session", "write", "--session", id, ...w], { env }), FLAG);
  }
  expectExit(await wrk(repo, ["session", "end", id], { env }), 0);

  // memory_emit through the official MCP SDK client.
  const client = await stdioMcpClient(repo.dir, env);
  try {
    const r = await client.callTool({
      name: "memory_emit",
      arguments: {
        kind: "convention",
        text: c.text,
        topics: [c.topic],
        links: [c.link],
        issue: c.issue,
      },
    });
    if (r.isError) {
      const message = JSON.stringify(r.content);
      expect(message).not.toMatch(/internal error/);
    }
  } finally {
    await client.close();
  }

  // Another writer's envelope: every string field hostile.
  const other = inputFile("other.ndjson", [
    envelope(
      "memory_note.v1",
      {
        kind: "decision",
        text: c.text,
        rationale: c.rationale,
        topics: [c.topic],
        links: [c.link, { type: "issue", ref: c.issue }],
        issue: c.issue,
      },
      { sender: "w9", eventId: `ev-${c.text.length}-${c.link.length}` },
    ),
    envelope("memory_event.v1", { kind: c.topic, text: c.value, links: [c.link] }),
    envelope("worker_error.v1", { error_type: c.topic, message: c.text, stage: c.issue }),
    envelope("task_progress.v1", { stage: c.issue, status: c.topic, message: c.rationale }),
  ]);
  const ingested = await dir(repo, ["ingest", other, "--json"], { env });
  expectExit(ingested, 0);
}

/** Every memory file read back as the readers read it, and `director verify` clean. */
async function readsBack(repo: TempRepo): Promise<void> {
  const tree = memoryTree(repo);
  for (const [path, text] of tree) {
    if (path === CATALOG_PATH) Catalog.parse(JSON.parse(text));
    else if (ENGRAM_PATH_PATTERN.test(path)) Engram.parse(JSON.parse(text));
    else if (path.endsWith(".json")) JSON.parse(text);
  }
  const verify = await dir(repo, ["verify"]);
  expect(verify.code, describeResult(verify)).toBe(0);
}

describe("hostile strings in every field a worker or writer fills", () => {
  it("are taken or refused naming the field; what the Director writes reads back, run after run", async () => {
    await fc.assert(
      fc.asyncProperty(cases, cases, async (first, second) => {
        const repo = await initRepo();
        await feed(repo, first, ENV);
        const one = await dir(repo, ["run", "--flush"], { env: ENV });
        expect(one.code, describeResult(one)).toBe(0);
        await readsBack(repo);
        await feed(repo, second, LATER);
        const two = await dir(repo, ["run", "--flush"], { env: LATER });
        expect(two.code, describeResult(two)).toBe(0);
        await readsBack(repo);
        expectExit(await dir(repo, ["run"], { env: LATER }), 0);
        // The plain notes reached memory: hostile neighbours cost nothing else.
        const focus = readFileSync(repo.path("MEMORY.md"), "utf8");
        expect(focus).toContain(`plain ${ENV.SOURCE_DATE_EPOCH}`);
        expect(focus).toContain(`plain ${LATER.SOURCE_DATE_EPOCH}`);
      }),
      { numRuns: 3, endOnFailure: true },
    );
    // Some twenty processes a case: minutes on a busy two-core runner (over five at a load of
    // twenty), never a timed assertion; the timeout only catches a hang.
  }, 900_000);
});
