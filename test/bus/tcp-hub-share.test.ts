/**
 * One sender's share of the TCP hub's intake (issue 40): a client that floods the buffer is
 * read no further once it holds `agent_bus.sender_share` of the buffer's budgets while the
 * buffer is past its high-water mark; another sender's notes still arrive, none lost. A
 * sender is its address (127.0.0.2 here), whatever id it names.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { note } from "../support/envelopes.js";
import {
  hello,
  journalKeys,
  makeRepo,
  Peer,
  registerHubHooks,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

// 100 events at most, a compaction due past 80; past that one sender may hold 25 of them.
const CONFIG =
  "[memory]\nbuffer_max_events = 100\nbuffer_keep_recent_events = 10\n\n[agent_bus]\nsender_share = 0.25\n";

function notes(prefix: string, count: number, from = 1) {
  return Array.from({ length: count }, (_, i) =>
    note("fact", `${prefix} note ${from + i}`, {
      eventId: `ev_${prefix}_${from + i}`,
      seq: from + i,
      sender: `${prefix}-${from + i}`,
    }),
  );
}

async function welcomed(port: number, localAddress: string): Promise<Peer> {
  const peer = await Peer.open(port, localAddress);
  peer.send(hello());
  await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
  return peer;
}

function ackedSoFar(peer: Peer): number {
  let through = 0;
  for (const m of peer.messages) {
    if (m.message_type === "bus_ack.v1")
      through = Math.max(through, m.payload.through_seq as number);
  }
  return through;
}

describe("director serve: one sender's share of the buffer", () => {
  it("holds back a flooding address at its share past the high-water mark; another sender's notes all arrive", async () => {
    const repo = await makeRepo(CONFIG);
    // Cycles on, none due during the test: a sender held alone waits for one.
    const hub = await serve(repo.dir, ["--json", "--cycle-seconds", "3600"]);
    const flood = await welcomed(hub.port, "127.0.0.2");
    flood.send(...notes("flood", 200));
    // The buffer passes its high-water mark (80) on the flood alone, which holds 81 > 25.
    await flood.ackedThrough(81);

    const honest = await welcomed(hub.port, "127.0.0.1");
    honest.send(...notes("honest", 10));
    await honest.ackedThrough(10);

    const r = await stop(hub);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split("\n").pop() as string);
    expect(summary.held_back).toBeGreaterThanOrEqual(1);
    // Read no further than the mark: the rest of the flood waits unacknowledged (resent elsewhere).
    expect(ackedSoFar(flood)).toBe(81);
    const keys = journalKeys(repo);
    for (let i = 1; i <= 10; i++) expect(keys).toContain(eventIdKey(`ev_honest_${i}`));
    expect(keys.filter((k) => k.startsWith("ih:")).length).toBe(91);
  });

  it("reads a held sender again once a compaction brings the buffer under its mark", async () => {
    const repo = await makeRepo(CONFIG);
    // Cycles on, none due during the test: a sender held alone waits for one.
    const hub = await serve(repo.dir, ["--json", "--cycle-seconds", "3600"]);
    const flood = await welcomed(hub.port, "127.0.0.2");
    flood.send(...notes("flood", 200));
    await flood.ackedThrough(81);

    // 30 more: the buffer passes its hard budget (100), a compaction makes room, and the flood
    // goes on from where it was held.
    const honest = await welcomed(hub.port, "127.0.0.1");
    honest.send(...notes("honest", 30));
    await honest.ackedThrough(30);
    await flood.ackedThrough(82);

    const r = await stop(hub);
    expect(r.code).toBe(0);
    // Every honest note is in the buffer or was compacted (its key is in the seen list).
    const keys = new Set(journalKeys(repo));
    const seen = new Set(
      readFileSync(repo.path(".engram", "buffer", "seen.keys"), "utf8").split("\n"),
    );
    for (let i = 1; i <= 30; i++) {
      const key = eventIdKey(`ev_honest_${i}`);
      expect(keys.has(key) || seen.has(key)).toBe(true);
    }
  });
});
