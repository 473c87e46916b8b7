/**
 * Creating the NATS stream from many places at once, against a real nats-server (started here
 * on 127.0.0.1 with a port of its own choosing): fifty workers and a Director that find no
 * stream, a stream that exists a moment before it takes its subjects, a creation lost to a
 * rival with another config while lookups lag, and the cases that must end in the spool.
 */
import { existsSync, readdirSync } from "node:fs";
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamManager,
  jetstreamManager,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { openNatsSender } from "../../src/bus/nats.js";
import { drainNats } from "../../src/bus/nats-source.js";
import {
  ensureConsumer,
  ensureStream,
  natsSettings,
  RACE_PAUSES_MS,
  type StreamLookup,
} from "../../src/bus/nats-stream.js";
import { openContext } from "../../src/context/repo-context.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { EventBuffer } from "../../src/state/buffer.js";
import { note } from "../support/envelopes.js";
import {
  asEnvelope,
  busUrl,
  emitOverNats,
  journalKeys,
  natsRepo,
  natsServer,
  skipNats,
  streamState,
  useNatsServer,
} from "./nats-harness.js";

useNatsServer();

/** A connection of the test's own (an operator, a rival creator), closed by `fn`'s end. */
async function withManager<T>(fn: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc: NatsConnection = await connect({ servers: `127.0.0.1:${natsServer().port}` });
  try {
    return await fn(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

describe.skipIf(skipNats)("NATS stream creation under concurrency", () => {
  it("fifty senders and a Director's drain that all find no stream at once: every send is stored, none spooled", async () => {
    const { repo, stream, consumer } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const WRITERS = 50;
    // Every sender is connected before any publishes, so all fifty meet a missing stream.
    const senders = await Promise.all(
      Array.from({ length: WRITERS }, () => openNatsSender(ctx, busUrl())),
    );
    const events = Array.from({ length: WRITERS }, (_, w) =>
      asEnvelope(note("fact", `writer ${w}`, { eventId: `ev-race-${w}`, sender: `w${w}` })),
    );
    const buffer = EventBuffer.open(ctx.paths, { retainEvents: false });
    // The drain keeps taking messages until every send has its answer.
    const sent = new AbortController();
    try {
      const [deliveries, drained] = await Promise.all([
        Promise.all(
          senders.map((sender, w) => sender.send([events[w] as (typeof events)[0]])),
        ).finally(() => sent.abort()),
        // The Director creates the stream and its consumer in the same moment.
        drainNats(ctx, buffer, busUrl(), { until: sent.signal }),
      ]);
      for (const delivery of deliveries) {
        expect(delivery, JSON.stringify(delivery)).toEqual({ transport: "nats", spooled: false });
      }
      expect(drained).toMatchObject({ accepted: WRITERS, acknowledged: WRITERS });
    } finally {
      buffer.closeJournal();
      await Promise.all(senders.map((sender) => sender.close()));
    }
    expect(await streamState(stream, consumer)).toMatchObject({
      messages: WRITERS,
      pending: 0,
      ackPending: 0,
    });
    expect(journalKeys(repo).sort()).toEqual(
      events.map((e) => eventIdKey(e.event_id as string)).sort(),
    );
    expect(existsSync(ctx.paths.spool) ? readdirSync(ctx.paths.spool) : []).toEqual([]);
  });

  it("fifty `worker emit --bus nats://` processes started at once with no stream: each exits stored, not spooled", async () => {
    const { repo, stream } = await natsRepo();
    const WRITERS = 50;
    const results = await Promise.all(
      Array.from({ length: WRITERS }, (_, w) => emitOverNats(repo, "fact", `cli ${w}`, `w${w}`)),
    );
    for (const result of results) {
      expect(result, JSON.stringify(result)).toMatchObject({ transport: "nats", spooled: false });
    }
    expect(await streamState(stream)).toMatchObject({ messages: WRITERS });
    const spool = repo.path(".engram", "spool");
    expect(existsSync(spool) ? readdirSync(spool) : []).toEqual([]);
  });

  it("publishes again, after a pause, to a stream that exists but does not take its subjects yet", async () => {
    const { repo, stream } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const prefix = ctx.config.agent_bus.nats.subject_prefix;
    // What nats-server 2.9 shows while another client's create is in progress: the name is
    // registered (a lookup finds it, a create "succeeds"), its subjects not yet subscribed
    // (a publish gets 503, no responders).
    await withManager((jsm) => jsm.streams.add({ name: stream, subjects: [`${prefix}-soon`] }));
    const pauses: number[] = [];
    const sender = await openNatsSender(ctx, busUrl(), {
      // The creation completes during the sender's first pause.
      wait: async (ms) => {
        pauses.push(ms);
        if (pauses.length === 1) {
          await withManager((jsm) => jsm.streams.update(stream, { subjects: [`${prefix}.>`] }));
        }
      },
    });
    const event = asEnvelope(note("fact", "stored late", { eventId: "ev-late", sender: "w1" }));
    try {
      expect(await sender.send([event])).toEqual({ transport: "nats", spooled: false });
    } finally {
      await sender.close();
    }
    expect(pauses).toEqual([RACE_PAUSES_MS[0]]);
    expect(await streamState(stream)).toMatchObject({ messages: 1 });
    expect(existsSync(ctx.paths.spool) ? readdirSync(ctx.paths.spool) : []).toEqual([]);
  });

  it("spools after a bounded number of pauses when the stream never takes its subjects, and says which stream", async () => {
    const { repo, stream } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const prefix = ctx.config.agent_bus.nats.subject_prefix;
    await withManager((jsm) => jsm.streams.add({ name: stream, subjects: [`${prefix}-other`] }));
    const pauses: number[] = [];
    const sender = await openNatsSender(ctx, busUrl(), {
      wait: async (ms) => {
        pauses.push(ms);
      },
    });
    const event = asEnvelope(note("fact", "kept", { eventId: "ev-kept", sender: "w1" }));
    const delivery = await sender.send([event]);
    // Once per sender: the next send is spooled without another round of pauses.
    const next = await sender.send([
      asEnvelope(note("fact", "kept too", { eventId: "ev-kept-2", sender: "w1" })),
    ]);
    await sender.close();
    expect(delivery).toMatchObject({ transport: "nats", spooled: true });
    expect(next).toMatchObject({ transport: "nats", spooled: true });
    expect(pauses).toEqual(RACE_PAUSES_MS);
    expect(delivery.fallback_reason).toContain(
      `no stream took ${prefix}.w1 in ${RACE_PAUSES_MS.length + 2} publishes (stream ${stream} has subjects ${prefix}-other); its subjects must include ${prefix}.>`,
    );
    expect(await streamState(stream)).toMatchObject({ messages: 0 });
  });

  it("a creation lost to a rival with another config, while lookups lag behind it, uses the rival's stream", async () => {
    const { repo, stream } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const settings = natsSettings(ctx.config.agent_bus.nats);
    const pauses: number[] = [];
    const result = await withManager(async (jsm) => {
      let lagging = 0;
      const racing: StreamLookup = {
        streams: {
          // The lookup lags behind the rival's creation twice: the real server's answer for a
          // stream that is not there.
          info: (name, opts) =>
            lagging-- > 0 ? jsm.streams.info(`${name}_ABSENT`) : jsm.streams.info(name, opts),
          // A rival with another max age creates the stream just before this add reaches the
          // server, which answers "stream name already in use" (10058).
          add: async (config) => {
            if (pauses.length === 0) {
              await withManager((rival) =>
                rival.streams.add({
                  name: stream,
                  subjects: [`${settings.subjectPrefix}.>`],
                  max_age: nanos(3_600_000),
                }),
              );
              lagging = 2;
            }
            return jsm.streams.add(config);
          },
        },
      };
      return ensureStream(racing, settings, async (ms) => {
        pauses.push(ms);
      });
    });
    expect(pauses).toEqual([RACE_PAUSES_MS[0]]);
    // Used as it is: the rival's max age, not this config's.
    expect(result.config.name).toBe(stream);
    expect(result.config.max_age).toBe(nanos(3_600_000));
  });

  it("fails with what to do when another stream already takes the subjects (10065)", async () => {
    const { repo } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const settings = natsSettings(ctx.config.agent_bus.nats);
    await withManager((jsm) =>
      jsm.streams.add({ name: "SOMEONE_ELSES", subjects: [`${settings.subjectPrefix}.>`] }),
    );
    const pauses: number[] = [];
    await expect(
      withManager((jsm) =>
        ensureStream(jsm, settings, async (ms) => {
          pauses.push(ms);
        }),
      ),
    ).rejects.toThrow(
      `stream ${settings.stream} (${settings.subjectPrefix}.>) cannot be created: subjects overlap with an existing stream (JetStream 10065); another stream already takes ${settings.subjectPrefix}.>: name that stream in [agent_bus.nats] stream, or choose another subject_prefix`,
    );
    // Not a race: no pause, no second try.
    expect(pauses).toEqual([]);
  });

  it("a consumer created by a rival Director with other settings just before this one's create is used", async () => {
    const { repo, stream, consumer } = await natsRepo();
    const ctx = await openContext({ repo: repo.dir });
    const settings = natsSettings(ctx.config.agent_bus.nats);
    const before = await withManager(async (jsm) => {
      await ensureStream(jsm, settings);
      const racing = {
        consumers: {
          info: jsm.consumers.info.bind(jsm.consumers),
          update: jsm.consumers.update.bind(jsm.consumers),
          // The rival's create reaches the server first, with a deliver policy that cannot be
          // changed (another ack wait nats-server 2.9 would just update): the real server
          // refuses this create.
          add: async (name: string, config: Parameters<typeof jsm.consumers.add>[1]) => {
            await withManager((rival) =>
              rival.consumers.add(name, {
                durable_name: consumer,
                ack_policy: AckPolicy.Explicit,
                deliver_policy: DeliverPolicy.New,
                filter_subject: `${settings.subjectPrefix}.>`,
              }),
            );
            return jsm.consumers.add(name, config);
          },
        },
      } as unknown as JetStreamManager;
      return ensureConsumer(racing, settings);
    });
    // Created during this call (by the rival): nothing to compare a drop against.
    expect(before).toBeUndefined();
    await withManager(async (jsm) => {
      expect((await jsm.consumers.info(stream, consumer)).config.deliver_policy).toBe(
        DeliverPolicy.New,
      );
    });
  });
});
