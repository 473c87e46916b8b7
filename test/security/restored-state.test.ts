/**
 * Issue 40: a state folder restored from a branch is the attacker's. Its cycle intent and its
 * journal are checked and redacted as a worker's lines are, before anything reaches memory.
 * Through the built bins, on real repositories.
 */
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dir, expectExit, initRepo, useCliHarness, wrk } from "../cli/cli-harness.js";
import type { TempRepo } from "../support/repo.js";

useCliHarness();

// Built from parts so that no scanner takes this file for a leak.
const TOKEN = ["gh", "p_", "R8x2Kq9LmN4vB7cT1zY6wH3jF5dS0aPeGu2i"].join("");

function memoryText(repo: TempRepo): string {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(readFileSync(path, "utf8"));
    }
  };
  walk(join(repo.dir, "memory"));
  if (existsSync(join(repo.dir, "MEMORY.md")))
    out.push(readFileSync(join(repo.dir, "MEMORY.md"), "utf8"));
  return out.join("\n");
}

/** A repository whose journal holds two honest facts, one line each, as a run left them. */
async function journalOfTwoFacts() {
  const repo = await initRepo();
  for (const text of ["the first honest fact", "the second honest fact"]) {
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", text]), 0);
  }
  expectExit(await dir(repo, ["run"]), 0);
  const journal = join(repo.dir, ".engram", "buffer", "journal.ndjson");
  const [first, second] = readFileSync(journal, "utf8").split("\n");
  return { repo, journal, first, second };
}

/**
 * A repository whose journal, after a run, holds an honest fact and after it a forged line
 * (the next seq) with a token in its text, as a restored state folder could.
 */
async function journalWithASecret(config: string): Promise<TempRepo> {
  const repo = await initRepo(config);
  expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "an honest fact"]), 0);
  expectExit(await dir(repo, ["run"]), 0);
  const journal = join(repo.dir, ".engram", "buffer", "journal.ndjson");
  const [line] = readFileSync(journal, "utf8").split("\n");
  expect(line).toContain("an honest fact");
  const event = JSON.parse(line as string) as Record<string, unknown>;
  const forged = {
    ...event,
    seq: (event.seq as number) + 1,
    key: `${String(event.key)}f`,
    text: `deploy with ${TOKEN} tonight`,
    topics: ["deploy"],
  };
  writeFileSync(journal, `${line}\n${JSON.stringify(forged)}\n`);
  return repo;
}

describe("a restored state folder", () => {
  it("a journal line holding a secret is redacted before it is compacted", async () => {
    const repo = await journalWithASecret("[memory]\nbuffer_keep_recent_events = 0\n");
    expectExit(await dir(repo, ["run", "--force"]), 0);
    const memory = memoryText(repo);
    expect(memory).toContain("deploy with [REDACTED:");
    expect(memory).not.toContain(TOKEN);
  });

  it("a journal line holding a secret is redacted when an ingest compacts it for room with the events it appends", async () => {
    // The ingest's own events are not checked again (it redacted them); the restored are.
    const repo = await journalWithASecret(
      "[memory]\nbuffer_keep_recent_events = 0\nbuffer_max_events = 4\n",
    );
    const notes = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({
        schema_version: "agentbus-envelope/v1",
        message_type: "memory_note.v1",
        sent_at: "2026-11-02T09:00:00.000Z",
        sender: { role: "worker", id: "worker-7" },
        seq: i + 1,
        payload: { kind: "fact", text: `fresh fact number ${i}`, topics: ["fresh"] },
        event_id: `ev_${(i + 1).toString(16).padStart(32, "0")}`,
      }),
    );
    const file = join(repo.dir, "..", `${repo.dir.split("/").pop()}-notes.ndjson`);
    writeFileSync(file, `${notes.join("\n")}\n`);
    const ingest = await dir(repo, ["ingest", file, "--json"]);
    expectExit(ingest, 0);
    expect(JSON.parse(ingest.stdout).compacted_for_room.compactions).toBeGreaterThan(0);
    expectExit(await dir(repo, ["run", "--flush"]), 0);
    const memory = memoryText(repo);
    expect(memory).toContain("deploy with [REDACTED:");
    expect(memory).not.toContain(TOKEN);
    expect(memory).toContain("fresh fact number 0");
    expect(memory).toContain("fresh fact number 11");
  });

  it("a journal line no worker's message makes (a field out of schema, or too large) is set aside in the quarantine, naming its seq and field, and never compacted", async () => {
    const repo = await initRepo(
      "[memory]\nbuffer_keep_recent_events = 0\n\n[agent_bus]\nmax_message_bytes = 4096\n",
    );
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "an honest fact"]), 0);
    expectExit(await dir(repo, ["run"]), 0);
    const journal = join(repo.dir, ".engram", "buffer", "journal.ndjson");
    const [line] = readFileSync(journal, "utf8").split("\n");
    const event = JSON.parse(line as string) as Record<string, unknown>;
    const forged = (n: number, fields: Record<string, unknown>) => ({
      ...event,
      seq: (event.seq as number) + n,
      key: `${String(event.key)}${n}`,
      ...fields,
    });
    const outOfSchema = forged(1, { text: "a forged certainty", confidence: 7 });
    const oversized = forged(2, { text: `a forged essay ${"words ".repeat(4000)}` });
    const honest = forged(3, { text: "a second honest fact" });
    writeFileSync(
      journal,
      [line, outOfSchema, oversized, honest]
        .map((l) => (typeof l === "string" ? l : JSON.stringify(l)))
        .join("\n") + "\n",
    );
    expectExit(await dir(repo, ["run", "--force"]), 0);
    const memory = memoryText(repo);
    expect(memory).toContain("a second honest fact");
    expect(memory).not.toContain("a forged certainty");
    expect(memory).not.toContain("a forged essay");
    const records = readFileSync(join(repo.dir, ".engram", "quarantine.ndjson"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map(
        (l) => JSON.parse(l) as { source: string; reason: string; detail: string; line: number },
      );
    const setAside = records.filter((r) => r.reason === "journal-invalid");
    expect(setAside.map((r) => r.line)).toEqual([outOfSchema.seq, oversized.seq]);
    expect(setAside[0]?.source).toBe(join(".engram", "buffer", "journal.ndjson"));
    expect(setAside[0]?.detail).toMatch(/^seq \d+: confidence: /);
    expect(setAside[1]?.detail).toMatch(
      /more than a message of agent_bus.max_message_bytes \(4096\)/,
    );
    // Dropped from the journal with the slice: the next run does not set them aside again.
    expect(readFileSync(journal, "utf8")).not.toContain("a forged");
  });

  it("a journal line that is JSON but no buffered event is set aside when the buffer is opened (file, line, seq, field), and the run goes on with every other line", async () => {
    const { repo, journal, first, second } = await journalOfTwoFacts();
    expect(second).toContain("the second honest fact");
    const event = JSON.parse(first as string) as Record<string, unknown>;
    // As an attacker's restored state folder would hold it: a sender that is no object.
    const forged = JSON.stringify({
      ...event,
      seq: 99,
      key: `${String(event.key)}f`,
      sender: "mallory",
      text: "a forged note",
    });
    writeFileSync(journal, `${first}\n${forged}\n${second}\n`);
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    expect(r.stderr).toContain(
      ".engram/buffer/journal.ndjson: line 2 (seq 99): sender: not an object: not a buffered event: set aside as .engram/buffer/set-aside/journal.1.ndjson",
    );
    const out = JSON.parse(r.stdout) as {
      journal_set_aside?: unknown[];
      buffer: { events: number };
    };
    expect(out.journal_set_aside).toEqual([
      {
        file: join(".engram", "buffer", "journal.ndjson"),
        line: 2,
        seq: 99,
        field: "sender",
        reason: "not an object",
        moved_to: join(".engram", "buffer", "set-aside", "journal.1.ndjson"),
      },
    ]);
    expect(out.buffer.events).toBe(2);
    // Every other line kept byte for byte; the forged one kept aside, whole.
    expect(readFileSync(journal, "utf8")).toBe(`${first}\n${second}\n`);
    expect(
      readFileSync(join(repo.dir, ".engram", "buffer", "set-aside", "journal.1.ndjson"), "utf8"),
    ).toBe(`${forged}\n`);
    // Nothing set aside twice, nothing counted twice: both facts reach memory once.
    const flush = await dir(repo, ["run", "--flush", "--json"]);
    expectExit(flush, 0);
    expect((JSON.parse(flush.stdout) as { journal_set_aside?: unknown }).journal_set_aside).toBe(
      undefined,
    );
    const memory = memoryText(repo);
    expect(memory).toContain("the first honest fact");
    expect(memory).toContain("the second honest fact");
    expect(memory).not.toContain("a forged note");
    expect(readdirSync(join(repo.dir, ".engram", "buffer", "set-aside"))).toEqual([
      "journal.1.ndjson",
    ]);
  });

  it("a torn last line (not JSON, after the last fsync) is still cut off, not set aside", async () => {
    const repo = await initRepo();
    expectExit(await wrk(repo, ["emit", "--kind", "fact", "--text", "an acknowledged fact"]), 0);
    expectExit(await dir(repo, ["run"]), 0);
    const journal = join(repo.dir, ".engram", "buffer", "journal.ndjson");
    const kept = readFileSync(journal, "utf8");
    writeFileSync(journal, `${kept}{"seq":7,"key":"torn\n`);
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    expect((JSON.parse(r.stdout) as { journal_set_aside?: unknown }).journal_set_aside).toBe(
      undefined,
    );
    expect(readFileSync(journal, "utf8")).toBe(kept);
    expect(existsSync(join(repo.dir, ".engram", "buffer", "set-aside"))).toBe(false);
  });

  it("a line that is not JSON inside the journal (lines follow it) is set aside, and every line after it kept", async () => {
    const { repo, journal, first, second } = await journalOfTwoFacts();
    // No crash writes this: every open cuts a torn tail before anything is appended after it.
    writeFileSync(journal, `${first}\nnot json at all\n{"seq":7,"key":\n${second}\n`);
    const r = await dir(repo, ["run", "--json"]);
    expectExit(r, 0);
    const out = JSON.parse(r.stdout) as {
      journal_set_aside?: { line: number; reason: string }[];
      buffer: { events: number };
    };
    expect(out.journal_set_aside?.map((l) => [l.line, l.reason])).toEqual([
      [2, "not JSON"],
      [3, "not JSON"],
    ]);
    expect(out.buffer.events).toBe(2);
    expect(readFileSync(journal, "utf8")).toBe(`${first}\n${second}\n`);
    const flush = await dir(repo, ["run", "--flush"]);
    expectExit(flush, 0);
    expect(memoryText(repo)).toContain("the second honest fact");
  });

  it("a cycle intent is checked as a cycle's writes are: a secret or a broken file is set aside, never replayed, and the run goes on", async () => {
    const repo = await initRepo();
    const focus = readFileSync(join(repo.dir, "MEMORY.md"), "utf8");
    const intent = join(repo.dir, ".engram", "buffer", "cycle-intent.json");
    const header = JSON.stringify({ through_seq: 0, deletes: [], meta: {} });
    writeFileSync(
      intent,
      `${header}\n${JSON.stringify({ path: "MEMORY.md", text: `${focus}\n- the key is ${TOKEN}\n` })}\n`,
    );
    const secret = await dir(repo, ["run"]);
    expectExit(secret, 0);
    expect(secret.stderr).toContain("cycle-intent.json: writes[");
    expect(secret.stderr).toContain("secret");
    expect(secret.stderr).toContain("set aside as .engram/buffer/set-aside/cycle-intent.1.json");
    expect(readFileSync(join(repo.dir, "MEMORY.md"), "utf8")).not.toContain(TOKEN);
    expect(existsSync(intent)).toBe(false);
    expect(
      readFileSync(join(repo.dir, ".engram", "buffer", "set-aside", "cycle-intent.1.json"), "utf8"),
    ).toContain(TOKEN);

    writeFileSync(
      intent,
      `${header}\n${JSON.stringify({ path: "memory/st/e_00000000000000000000000000000000.json", text: '{"not":"an engram"}' })}\n`,
    );
    const broken = await dir(repo, ["run"]);
    expectExit(broken, 0);
    expect(broken.stderr).toContain("cycle-intent.json");
    expect(broken.stderr).toContain("set aside as .engram/buffer/set-aside/cycle-intent.2.json");
    expect(
      existsSync(join(repo.dir, "memory", "st", "e_00000000000000000000000000000000.json")),
    ).toBe(false);
  });

  it("set-aside refuses a committed link before reading it, and leaves nothing pending", async () => {
    const repo = await initRepo();
    const outside = join(repo.dir, "..", `${repo.dir.split("/").pop()}-environ.txt`);
    writeFileSync(outside, `AWS_SECRET_ACCESS_KEY=${TOKEN}\n`);
    const link = "memory/st/e_0123456789abcdef0123456789abcdef.json";
    symlinkSync(outside, join(repo.dir, link));
    const r = await dir(repo, ["set-aside", link]);
    expectExit(r, 2);
    expect(r.stderr).toContain(`${link}: a symbolic link`);
    const state = JSON.stringify(readdirSync(join(repo.dir, ".engram"), { recursive: true }));
    expect(state).not.toContain("set-aside");
    expect(existsSync(join(repo.dir, ".engram", "buffer", "cycle-intent.json"))).toBe(false);
    expectExit(await dir(repo, ["run"]), 0);
  });
});
