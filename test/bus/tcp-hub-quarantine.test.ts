/**
 * The TCP hub and a sender of garbage (issue 40): 200,000 two-byte lines from one loopback
 * client once made a 57 MB quarantine. Through `director serve`: a run of alike lines is one
 * record, and one sender (by its address, whatever id it names) holds at most its share.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { envelope, note } from "../support/envelopes.js";
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

describe("director serve: the quarantine's disk budget", () => {
  it("keeps a flood of two-byte lines as a few small records and goes on serving", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir);
    const peer = await Peer.open(hub.port);
    peer.send(hello());
    await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
    const lines = 50_000;
    for (let sent = 0; sent < lines; sent += 5_000) peer.socket.write("x\n".repeat(5_000));
    peer.send(note("fact", "after the flood", { eventId: "ev_after", seq: lines + 1 }));
    await peer.ackedThrough(lines + 1);
    expect(journalKeys(repo)).toEqual([eventIdKey("ev_after")]);
    peer.socket.end();
    expect((await stop(hub)).code).toBe(0);
    const path = repo.path(".engram", "quarantine.ndjson");
    expect(statSync(path).size).toBeLessThan(64 * 1024);
    const records = readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { count?: number; source: string });
    expect(records.reduce((n, r) => n + (r.count ?? 1), 0)).toBe(lines);
  });

  it("holds one address to its share, whatever sender ids it names", async () => {
    const repo = await makeRepo("[quarantine]\nmax_records = 16\n");
    const hub = await serve(repo.dir);
    // Lines rejected for different reasons in turn: no two neighbours make a run.
    for (const id of ["a", "b", "c"]) {
      const peer = await Peer.open(hub.port);
      peer.send(envelope("protocol_hello.v1", { protocol_version: "1" }, { sender: id }));
      await peer.waitFor((m) => m.message_type === "protocol_welcome.v1", "welcome");
      peer.socket.write(`${id}\n{}\n`.repeat(50));
      await peer.ackedThrough(100);
      peer.socket.end();
      await peer.closed;
    }
    expect((await stop(hub)).code).toBe(0);
    const kept = ["quarantine.1.ndjson", "quarantine.ndjson"]
      .map((name) => repo.path(".engram", name))
      .filter(existsSync)
      .flatMap((path) => readFileSync(path, "utf8").split("\n"))
      .filter((l) => l !== "");
    // A generation holds 8 records, one sender a quarter of them.
    expect(kept.length).toBeLessThanOrEqual(2);
    const dropped = JSON.parse(
      readFileSync(repo.path(".engram", "quarantine-dropped.json"), "utf8"),
    );
    expect(dropped.lines + kept.length).toBe(300);
    expect(Object.keys(dropped.by_sender)).toEqual(["tcp/127.0.0.1"]);
  });
});
