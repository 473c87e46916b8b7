/** The TCP hub (`director serve`) through the real bins: lifecycle and drift. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HubUnavailableError, TcpBusClient } from "../../src/bus/tcp-client.js";
import { eventIdKey } from "../../src/core/ingest/normalize.js";
import { readCatalog } from "../../src/repo/memory-tree.js";
import { describeResult, director, jsonOf, worker } from "../support/bins.js";
import { git } from "../support/repo.js";
import {
  dirs,
  freePort,
  journalKeys,
  makeRepo,
  noteWithId,
  registerHubHooks,
  serve,
  stop,
} from "./tcp-hub-fixtures.js";

registerHubHooks();

describe("director serve: lifecycle", () => {
  it("stops gracefully on SIGTERM: acknowledged events kept, lock released, exit 0", async () => {
    const repo = await makeRepo();
    const hub = await serve(repo.dir, ["--json"]);
    const client = new TcpBusClient({ host: "127.0.0.1", port: hub.port });
    const sent = Array.from({ length: 200 }, (_, i) => noteWithId(`ev_term_${i}`, `term ${i}`));
    await client.send(sent);
    expect(existsSync(repo.path(".engram", "director.lock"))).toBe(true);
    // Another Director command on the same state is refused at once, naming the hub.
    const run = await director(["run", "--json"], { cwd: repo.dir });
    expect(run.code, describeResult(run)).toBe(3);
    expect(run.stderr).toContain("held by director serve");
    const r = await stop(hub, "SIGTERM");
    await client.close();
    expect(r.code, describeResult(r)).toBe(0);
    const [first, second] = r.stdout.trim().split("\n");
    expect(JSON.parse(first as string)).toEqual({ listening: hub.address });
    expect(JSON.parse(second as string)).toMatchObject({
      stopped_by: "SIGTERM",
      accepted: 200,
      acknowledged: 200,
    });
    expect(existsSync(repo.path(".engram", "director.lock"))).toBe(false);
    expect(journalKeys(repo)).toEqual(sent.map((e) => eventIdKey(e.event_id as string)));
  });

  it("refuses to listen beyond loopback without TLS, and half a TLS setup", async () => {
    const repo = await makeRepo();
    const wide = await director(["serve", "--listen", "0.0.0.0:0", "--repo", repo.dir], {
      cwd: repo.dir,
    });
    expect(wide.code, describeResult(wide)).toBe(2);
    expect(wide.stderr).toContain("--tls-cert");
    const half = await director(
      ["serve", "--listen", "127.0.0.1:0", "--tls-cert", "x.pem", "--repo", repo.dir],
      { cwd: repo.dir },
    );
    expect(half.code, describeResult(half)).toBe(2);
    expect(half.stderr).toContain("--tls-key, --tls-ca");
    const bad = await director(["serve", "--listen", "nope", "--repo", repo.dir], {
      cwd: repo.dir,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--listen");
  });

  it("worker emit falls back to the local spool when nothing listens (exit 0: durable)", async () => {
    const repo = await makeRepo();
    const port = await freePort();
    const r = await worker(
      [
        "emit",
        "--kind",
        "fact",
        "--text",
        "spooled while the hub is down",
        "--bus",
        `tcp://127.0.0.1:${port}`,
        "--json",
      ],
      { cwd: repo.dir, env: { ENGRAM_BUS_CONNECT_TIMEOUT_MS: "400" } },
    );
    const out = jsonOf<{
      spooled: boolean;
      transport: string;
      fallback_reason: string;
      path: string;
      event_id: string;
    }>(r);
    expect(out).toMatchObject({ spooled: true, transport: "tcp" });
    expect(out.fallback_reason).toContain(`127.0.0.1:${port}`);
    expect(readFileSync(out.path, "utf8")).toContain(out.event_id);
    expect(readdirSync(repo.path(".engram", "spool"))).toHaveLength(1);
    // The in-process client says the same with the envelopes it still owes.
    const client = new TcpBusClient({ host: "127.0.0.1", port, unreachableMs: 200 });
    const error = await client.send([noteWithId("ev_owed", "owed")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubUnavailableError);
    expect((error as HubUnavailableError).unacked.map((e) => e.event_id)).toEqual(["ev_owed"]);
    await client.close();
  });

  it("runs Director cycles and tells connected workers what was written", async () => {
    const repo = await makeRepo(
      "[memory]\nbuffer_max_events = 20\nbuffer_keep_recent_events = 5\n",
    );
    const hub = await serve(repo.dir, ["--cycle-seconds", "1"]);
    const seen: { message_type: string; payload: Record<string, unknown> }[] = [];
    let announced: () => void = () => {};
    const firstAnnounce = new Promise<void>((resolve) => {
      announced = resolve;
    });
    const client = new TcpBusClient({
      host: "127.0.0.1",
      port: hub.port,
      onMessage: (m) => {
        seen.push(m);
        // The snapshot that follows an announcement belongs to the same broadcast.
        if (m.message_type === "engram_catalog_snapshot.v1") {
          if (seen.some((s) => s.message_type === "engram_announce.v1")) announced();
        }
      },
    });
    await client.send(
      Array.from({ length: 30 }, (_, i) =>
        noteWithId(`ev_cyc_${i}`, `the cache layer needs rule number ${i}`),
      ),
    );
    await firstAnnounce;
    const at = seen.findIndex((m) => m.message_type === "engram_announce.v1");
    const announce = seen[at];
    const snapshot = seen.slice(at).find((m) => m.message_type === "engram_catalog_snapshot.v1");
    expect(announce, JSON.stringify(seen.map((m) => m.message_type))).toBeDefined();
    // Later cycles (one a second) may write again: the broadcast is checked against itself
    // and against files still on disk, not against the catalog of whatever cycle ran last.
    expect(snapshot?.payload).toMatchObject({
      catalog_version: announce?.payload.catalog_version,
      catalog_hash: announce?.payload.catalog_hash,
    });
    const entries = snapshot?.payload.entries as { path: string; hash: string }[];
    const engrams = announce?.payload.engrams as { path: string; hash: string }[];
    expect(engrams.length).toBeGreaterThan(0);
    for (const e of engrams) {
      expect(entries.some((c) => c.path === e.path && c.hash === e.hash)).toBe(true);
    }
    const catalog = await readCatalog(repo.dir);
    expect(catalog.catalog_version).toBeGreaterThanOrEqual(
      announce?.payload.catalog_version as number,
    );
    await client.close();
    expect((await stop(hub)).code).toBe(0);
  });
});

describe("director serve: the buffer's hard budgets", () => {
  it("compacts the oldest slice before a group commit would pass buffer_max_events", async () => {
    const repo = await makeRepo(
      "[memory]\nbuffer_max_events = 20\nbuffer_keep_recent_events = 5\n",
    );
    // No cycles: only the group commits can keep the buffer within its budget.
    const hub = await serve(repo.dir, ["--json"]);
    const client = new TcpBusClient({ host: "127.0.0.1", port: hub.port });
    const sent: string[] = [];
    // Sends of 1 to 37 envelopes: some fit, some pass the budget in one commit.
    for (const size of [7, 1, 37, 12, 3, 25]) {
      const group = Array.from({ length: size }, (_, i) =>
        noteWithId(`ev_room_${sent.length + i}`, `the queue needs rule number ${sent.length + i}`),
      );
      await client.send(group);
      sent.push(...group.map((e) => e.event_id as string));
      // Acknowledged means stored, and never more than the budget in the buffer.
      expect(journalKeys(repo).length).toBeLessThanOrEqual(20);
    }
    await client.close();
    const r = await stop(hub);
    expect(r.code, describeResult(r)).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split("\n")[1] as string);
    expect(summary).toMatchObject({ accepted: sent.length, acknowledged: sent.length });
    // Every event once: in the buffer or compacted, none lost, none doubled.
    const buffered = journalKeys(repo);
    const compacted = readFileSync(repo.path(".engram", "buffer", "seen.keys"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(buffered.length).toBeLessThanOrEqual(20);
    expect(compacted.length).toBeGreaterThan(0);
    const all = [...compacted, ...buffered];
    expect(all).toEqual(sent.map(eventIdKey));
    expect(readdirSync(repo.path("memory", "st")).some((d) => d !== ".gitkeep")).toBe(true);
  });
});

describe("director serve: drift", () => {
  it("sends sync_required.v1 to a worker behind main, nothing to one in sync", async () => {
    const origin = await makeRepo("[policy.sync_main]\nmax_commits_behind = 1\n");
    git(origin.dir, ["add", "-A"]);
    git(origin.dir, ["commit", "-q", "-m", "memory layout"]);
    const behind = dirs.dir("engram-behind-");
    git(behind, ["clone", "-q", origin.dir, "."]);
    for (let i = 0; i < 3; i++)
      git(origin.dir, ["commit", "-q", "--allow-empty", "-m", `main ${i}`]);
    const mainSha = git(origin.dir, ["rev-parse", "HEAD"]).trim();
    const current = dirs.dir("engram-current-");
    git(current, ["clone", "-q", origin.dir, "."]);
    const hub = await serve(origin.dir);
    const emit = (cwd: string) =>
      worker(
        [
          "emit",
          "--kind",
          "fact",
          "--text",
          "drift check",
          "--bus",
          `tcp://127.0.0.1:${hub.port}`,
          "--json",
        ],
        { cwd },
      );
    const late = jsonOf<{ spooled: boolean; sync_required?: Record<string, unknown> }>(
      await emit(behind),
    );
    expect(late.spooled).toBe(false);
    expect(late.sync_required).toMatchObject({
      reason: "behind_main",
      main_sha_expected: mainSha,
      required_action: "merge_main",
      commits_behind: 3,
      policy: { max_commits_behind: 1 },
    });
    const fresh = jsonOf<{ spooled: boolean; sync_required?: unknown }>(await emit(current));
    expect(fresh.spooled).toBe(false);
    expect(fresh.sync_required).toBeUndefined();
    expect((await stop(hub)).code).toBe(0);
  });
});
