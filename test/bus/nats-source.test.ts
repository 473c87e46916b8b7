/**
 * The NATS JetStream transport against a real nats-server (started here on 127.0.0.1 with a
 * port of its own choosing and a temporary store): dedup by event id, the CLI end to end,
 * the spool fallback, ack-after-fsync, and 50 concurrent writers with the Director's drain
 * killed in the middle.
 */
import { readFileSync } from "node:fs";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { openNatsSender } from "../../src/bus/nats.js";
import { drainNats } from "../../src/bus/nats-source.js";
import { ensureStream, natsSettings } from "../../src/bus/nats-stream.js";
import { openContext, type RepoContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { EventBuffer } from "../../src/state/buffer.js";
import {
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
  worker,
} from "../support/bins.js";
import { killWhen, sizeOf } from "../support/crash.js";
import { fakeGithubToken, note } from "../support/envelopes.js";
import { waitUntil } from "../support/wait.js";
import {
  asEnvelope,
  busUrl,
  emitOverNats,
  journalKeys,
  natsRepo,
  natsServer,
  skipNats,
  streamCount,
  streamState,
  useNatsServer,
} from "./nats-harness.js";

useNatsServer();

describe.skipIf(skipNats)("NATS JetStream source", () => {
  it("says, on stderr and in the JSON, how many messages the stream dropped before the Director took them", async () => {
    const { repo } = await natsRepo({ max_age_seconds: 1, duplicate_window_seconds: 1 });
    // The first drain creates the stream and the consumer.
    const first = await director(["ingest", "--bus", natsServer().url, "--json"], {
      cwd: repo.dir,
    });
    expect(first.code, describeResult(first)).toBe(0);
    const ctx = await openContext({ repo: repo.dir });
    const sender = await openNatsSender(ctx, busUrl());
    for (let i = 0; i < 3; i++) {
      await sender.send([asEnvelope(note("fact", `too late ${i}`, { eventId: `ev-late-${i}` }))]);
    }
    await sender.close();
    // The Director does not drain within max_age: the stream drops all three.
    const stream = `T${streamCount()}`;
    await waitUntil(
      async () => (await streamState(stream)).messages === 0,
      "the stream to drop the three messages at their max age",
    );
    const late = await director(["ingest", "--bus", natsServer().url, "--json"], { cwd: repo.dir });
    expect(late.code, describeResult(late)).toBe(0);
    expect(jsonOf(late)).toMatchObject({ accepted: 0, dropped: 3 });
    expect(late.stderr).toContain(
      `warning: ${natsServer().url}: 3 message(s) were dropped by the stream (its max_age) before this Director took them`,
    );
    // Taken in time, nothing is said. "In time" must not mean "within a second on this
    // machine": the stream now keeps messages for an hour (the drain uses it as it is).
    await setMaxAge(stream, 3600);
    const inTime = await openNatsSender(ctx, busUrl());
    await inTime.send([asEnvelope(note("fact", "in time", { eventId: "ev-in-time" }))]);
    await inTime.close();
    const next = await director(["ingest", "--bus", natsServer().url], { cwd: repo.dir });
    expect(next.code, describeResult(next)).toBe(0);
    expect(next.stdout).toContain("accepted 1");
    expect(next.stdout).not.toContain("dropped");
    expect(next.stderr).toBe("");
  });

  it("worker emit --bus nats:// then director ingest --bus nats:// puts the note in the journal", async () => {
    const { repo, stream, consumer } = await natsRepo();
    const emitted = await emitOverNats(repo, "decision", "NATS across hosts", "w7");
    expect(emitted).toMatchObject({ transport: "nats", spooled: false });
    const drained = jsonOf<{ accepted: number; acknowledged: number; source: string }>(
      await director(["ingest", "--bus", natsServer().url, "--json"], { cwd: repo.dir }),
    );
    expect(drained).toMatchObject({ source: natsServer().url, accepted: 1, acknowledged: 1 });
    expect(journalKeys(repo)).toEqual([eventIdKey(emitted.event_id)]);
    const journal = readFileSync(repo.path(".engram", "buffer", "journal.ndjson"), "utf8");
    expect(journal).toContain("NATS across hosts");
    // Acknowledged: nothing left for the consumer (the stream keeps the message until its
    // max age), so a second drain finds nothing.
    expect(await streamState(stream, consumer)).toMatchObject({
      messages: 1,
      pending: 0,
      ackPending: 0,
    });
    const again = jsonOf<{ accepted: number; acknowledged: number }>(
      await director(["ingest", "--bus", natsServer().url, "--json"], { cwd: repo.dir }),
    );
    expect(again).toMatchObject({ accepted: 0, acknowledged: 0 });

    // director run drains the sources of agent_bus.sources after the spool.
    const config = readFileSync(repo.path("config", "dev.toml"), "utf8");
    repo.writeConfig(`[agent_bus]\nsources = ["${natsServer().url}"]\n\n${config}`);
    const second = await emitOverNats(repo, "fact", "drained by the cycle", "w8");
    const run = jsonOf<{ sources: { source: string; accepted: number; acknowledged: number }[] }>(
      await director(["run", "--json"], { cwd: repo.dir }),
    );
    expect(run.sources).toEqual([
      expect.objectContaining({ source: natsServer().url, accepted: 1, acknowledged: 1 }),
    ]);
    expect(journalKeys(repo)).toContain(eventIdKey(second.event_id));
  });

  it("worker emit --from sends a file of notes as one message, which the drain takes whole", async () => {
    const { repo, stream, consumer } = await natsRepo();
    const notes = ["alpha", "beta", "gamma"]
      .map((word) => JSON.stringify({ kind: "fact", text: `the ${word} note`, topics: ["nats"] }))
      .join("\n");
    const emitted = jsonOf<{ event_ids: string[]; transport: string; spooled: boolean }>(
      await worker(["emit", "--from", "-", "--worker", "w9", "--bus", natsServer().url, "--json"], {
        cwd: repo.dir,
        input: notes,
      }),
    );
    expect(emitted).toMatchObject({ transport: "nats", spooled: false });
    expect(await streamState(stream)).toMatchObject({ messages: 1 });
    const drained = jsonOf<{ accepted: number; acknowledged: number }>(
      await director(["ingest", "--bus", natsServer().url, "--json"], { cwd: repo.dir }),
    );
    expect(drained).toMatchObject({ accepted: 3, acknowledged: 1 });
    expect(journalKeys(repo)).toEqual(emitted.event_ids.map((id) => eventIdKey(id)));
    expect(await streamState(stream, consumer)).toMatchObject({ pending: 0, ackPending: 0 });
  });

  it("acknowledges only after the journal fsync: a drain that dies before it loses nothing", async () => {
    const { repo, stream, consumer } = await natsRepo({ ack_wait_seconds: 1 });
    const ctx: RepoContext = await openContext({ repo: repo.dir });
    const envelopes = Array.from({ length: 20 }, (_, i) =>
      asEnvelope(note("fact", `fsync first ${i}`, { eventId: `ev-${i}`, sender: "w1" })),
    );
    const sender = await openNatsSender(ctx, busUrl());
    // Four sends of five: four messages.
    for (let i = 0; i < envelopes.length; i += 5) await sender.send(envelopes.slice(i, i + 5));
    await sender.close();

    // The journal write fails (as a crash before the fsync would): the drain must not ack.
    const broken = EventBuffer.open(ctx.paths, { retainEvents: false });
    broken.append = () => {
      throw new Error("simulated crash before the journal fsync");
    };
    await expect(drainNats(ctx, broken, busUrl())).rejects.toThrow(/simulated crash/);
    broken.closeJournal();
    expect(journalKeys(repo)).toEqual([]);
    const afterCrash = await streamState(stream, consumer);
    expect(afterCrash.messages).toBe(4);
    expect((afterCrash.pending ?? 0) + (afterCrash.ackPending ?? 0)).toBe(4);

    // The next drain gets them again once the ack wait (1 s here) has passed.
    const buffer = EventBuffer.open(ctx.paths, { retainEvents: false });
    const r = await drainNats(ctx, buffer, busUrl());
    buffer.closeJournal();
    expect(r).toMatchObject({ accepted: 20, duplicates: 0, acknowledged: 4 });
    expect(journalKeys(repo).sort()).toEqual(
      envelopes.map((e) => eventIdKey(e.event_id as string)).sort(),
    );
    expect(await streamState(stream, consumer)).toMatchObject({
      messages: 4,
      pending: 0,
      ackPending: 0,
    });
  });

  it("treats what arrives on the stream as hostile: bad data is quarantined, secrets redacted, all acknowledged", async () => {
    const { repo, stream, consumer } = await natsRepo();
    const token = fakeGithubToken("nats");
    const nc = await connect({ servers: `127.0.0.1:${natsServer().port}` });
    try {
      const jsm = await jetstreamManager(nc);
      await ensureStream(
        jsm,
        natsSettings((await openContext({ repo: repo.dir })).config.agent_bus.nats),
      );
      const js = jetstream(nc);
      const prefix = `t${streamCount()}.events`;
      await js.publish(`${prefix}.w1`, "{not json");
      await js.publish(`${prefix}.w1`, "x".repeat(70_000));
      await js.publish(
        `${prefix}.w1`,
        JSON.stringify(note("fact", `the deploy token is ${token}`, { eventId: "ev-secret" })),
      );
      // A message of several lines with one bad line: only that line is quarantined.
      await js.publish(
        `${prefix}.w1`,
        [
          JSON.stringify(note("fact", "first of three", { eventId: "ev-1of3" })),
          "[1, 2",
          JSON.stringify(note("fact", "third of three", { eventId: "ev-3of3" })),
        ].join("\n"),
      );
    } finally {
      await nc.close();
    }
    const r = jsonOf<{
      accepted: number;
      quarantined: number;
      redacted: number;
      acknowledged: number;
    }>(await director(["ingest", "--bus", natsServer().url, "--json"], { cwd: repo.dir }));
    expect(r).toMatchObject({ accepted: 3, quarantined: 3, acknowledged: 4 });
    expect(r.redacted).toBeGreaterThanOrEqual(1);
    const state = readFileSync(repo.path(".engram", "buffer", "journal.ndjson"), "utf8");
    expect(state).not.toContain(token);
    expect(journalKeys(repo)).toEqual([
      eventIdKey("ev-secret"),
      eventIdKey("ev-1of3"),
      eventIdKey("ev-3of3"),
    ]);
    const quarantine = readFileSync(repo.path(".engram", "quarantine.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { source: string; line: number; reason: string });
    // Each bad line is named by its message (subject and stream sequence) and its line in it.
    const subject = `${natsServer().url}/t${streamCount()}.events.w1`;
    expect(quarantine.map((q) => [q.source, q.line])).toEqual([
      [`${subject}#1`, 1],
      [`${subject}#2`, 1],
      [`${subject}#4`, 2],
    ]);
    expect(quarantine[1]?.reason).toBe("oversized");
    expect(await streamState(stream, consumer)).toMatchObject({ pending: 0, ackPending: 0 });
  });

  it("50 concurrent writers, the Director's drain SIGKILLed mid-way and restarted: every acknowledged event is in the buffer exactly once", async () => {
    // The killed drain's unacknowledged messages come back to the next one after 1 s.
    const { repo, stream, consumer } = await natsRepo({ ack_wait_seconds: 1 });
    const ctx = await openContext({ repo: repo.dir });
    // No stream yet: the fifty writers race to create it, as they would in the field (each
    // send must still be stored, not spooled; see nats-stream-race.test.ts).
    const WRITERS = 50;
    const PER_WRITER = 80;
    const BATCH = 8;
    const acknowledged = new Set<string>();
    let resends = 0;
    let repeats = 0;
    let released!: () => void;
    const killed = new Promise<void>((resolve) => {
      released = resolve;
    });
    let firstHalves = 0;
    let allFirstHalves!: () => void;
    const firstHalvesDone = new Promise<void>((resolve) => {
      allFirstHalves = resolve;
    });

    const writer = async (w: number): Promise<void> => {
      const sender = await openNatsSender(ctx, busUrl());
      try {
        for (let start = 0; start < PER_WRITER; start += BATCH) {
          if (start === PER_WRITER / 2) {
            if (++firstHalves === WRITERS) allFirstHalves();
            await killed;
          }
          const batch = Array.from({ length: BATCH }, (_, i) =>
            asEnvelope(
              note("fact", `writer ${w} event ${start + i}`, {
                eventId: `ev-w${w}-${start + i}`,
                sender: `w${w}`,
              }),
            ),
          );
          // A retry of the previous batch's first event, in a new send: the Director's
          // event-id deduplication drops it.
          if (start > 0) {
            batch.push(
              asEnvelope(
                note("fact", `writer ${w} event ${start - BATCH}`, {
                  eventId: `ev-w${w}-${start - BATCH}`,
                  sender: `w${w}`,
                }),
              ),
            );
            resends++;
          }
          const delivery = await sender.send(batch);
          expect(delivery, JSON.stringify(delivery)).toEqual({ transport: "nats", spooled: false });
          for (const e of batch) acknowledged.add(eventIdKey(e.event_id as string));
          // Every other send is repeated whole (a lost ack): JetStream drops it, same msg id.
          if ((start / BATCH) % 2 === 1) {
            expect(await sender.send(batch)).toEqual({ transport: "nats", spooled: false });
            repeats++;
          }
        }
      } finally {
        await sender.close();
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));

    // Half of every writer's events are in JetStream: start a drain and kill it as soon as it
    // has written to the journal, while it is still taking messages.
    // A writer that fails before its first half is done fails the test with its error,
    // instead of leaving it waiting for halves that will never all come.
    await Promise.race([
      firstHalvesDone,
      writers.then(() => {
        throw new Error("the writers ended before every first half was sent");
      }),
    ]);
    const journal = repo.path(".engram", "buffer", "journal.ndjson");
    const first = spawnBin(DIRECTOR_BIN, ["ingest", "--bus", natsServer().url, "--json"], {
      cwd: repo.dir,
      timeoutMs: 60_000,
    });
    killWhen(first, () => sizeOf(journal) > 0, 5);
    const firstResult = await first.done;
    expect(firstResult.signal, describeResult(firstResult)).toBe("SIGKILL");
    const beforeRestart = journalKeys(repo).length;
    expect(beforeRestart).toBeGreaterThan(0);
    released();
    await writers;

    // The restarted drain takes the rest, and the messages the killed one never acked
    // (redelivered after the ack wait; those already in the journal count as duplicates).
    const second = jsonOf<{ accepted: number; duplicates: number; acknowledged: number }>(
      await director(["ingest", "--bus", natsServer().url, "--json"], {
        cwd: repo.dir,
        timeoutMs: 60_000,
      }),
    );
    const keys = journalKeys(repo);
    expect(acknowledged.size).toBe(WRITERS * PER_WRITER);
    expect(resends).toBeGreaterThan(0);
    expect(new Set(keys).size, "no event stored twice").toBe(keys.length);
    expect(keys.sort()).toEqual([...acknowledged].sort());
    expect(repeats).toBeGreaterThan(0);
    expect(second.accepted).toBe(WRITERS * PER_WRITER - beforeRestart);
    expect(second.acknowledged).toBeGreaterThan(0);
    // JetStream stored each send once: the repeated sends fell inside the duplicate window.
    expect(await streamState(stream, consumer)).toMatchObject({
      messages: (WRITERS * PER_WRITER) / BATCH,
      pending: 0,
      ackPending: 0,
    });
  });
});

/** Changes an existing stream's max age, as an operator would. */
async function setMaxAge(stream: string, seconds: number): Promise<void> {
  const nc = await connect({ servers: `127.0.0.1:${natsServer().port}` });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    await jsm.streams.update(stream, { ...info.config, max_age: seconds * 1e9 });
  } finally {
    await nc.close();
  }
}
