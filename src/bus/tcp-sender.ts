/**
 * The `tcp://` and `tls://` sender of `worker` commands: a `TcpBusClient` set up from the
 * repository and the environment, falling back to the local spool.
 */
import { existsSync, readFileSync } from "node:fs";
import type { RepoContext } from "../context/repo-context.js";
import { fileSystemError, UsageError } from "../errors.js";
import { mergeBaseOf } from "../git/rev-reads.js";
import { findMainAndHead } from "../repo/main-drift.js";
import { readCatalog } from "../repo/memory-tree.js";
import { type BusSender, type Delivery, spoolSender } from "./delivery.js";
import type { WorkerView } from "./hub-drift.js";
import { HubRefusedError } from "./hub-errors.js";
import {
  DEFAULT_UNREACHABLE_MS,
  HubUnavailableError,
  TcpBusClient,
  type TcpClientOptions,
} from "./tcp-client.js";
import { type BusUrl, formatBusUrl } from "./url.js";

/** How long `worker` commands wait for an unreachable hub: `ENGRAM_BUS_CONNECT_TIMEOUT_MS`. */
function unreachableMsFromEnv(): number {
  const text = process.env.ENGRAM_BUS_CONNECT_TIMEOUT_MS;
  if (text === undefined || text === "") return DEFAULT_UNREACHABLE_MS;
  const ms = Number(text);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new UsageError(`ENGRAM_BUS_CONNECT_TIMEOUT_MS: expected milliseconds, got "${text}"`);
  }
  return ms;
}

/** A `tls://` worker's certificate, key and CA: `ENGRAM_TLS_CERT`, `ENGRAM_TLS_KEY`, `ENGRAM_TLS_CA`. */
export function clientTlsFromEnv(): { cert: Buffer; key: Buffer; ca?: Buffer } {
  const read = (name: string, required: boolean): Buffer | undefined => {
    const path = process.env[name];
    if (path === undefined || path === "") {
      if (!required) return undefined;
      throw new UsageError(
        `${name}: a tls:// bus needs a client certificate: set ENGRAM_TLS_CERT and ENGRAM_TLS_KEY (and ENGRAM_TLS_CA for the hub's CA) to PEM files`,
      );
    }
    try {
      return readFileSync(path);
    } catch (error) {
      throw fileSystemError(error, `${name} ${path}`, "read") ?? error;
    }
  };
  const ca = read("ENGRAM_TLS_CA", false);
  return {
    cert: read("ENGRAM_TLS_CERT", true) as Buffer,
    key: read("ENGRAM_TLS_KEY", true) as Buffer,
    ...(ca ? { ca } : {}),
  };
}

/**
 * What this worker's hello says: where its branch left main, and the catalog it sees. Only
 * that: the verdict is the hub's to make, and each git call is a process start (fifty
 * workers starting at once on two cores pay for every one).
 */
async function helloView(ctx: RepoContext): Promise<WorkerView> {
  const [ancestor, catalog] = await Promise.all([
    mainAncestor(ctx.repoDir).catch(() => undefined),
    readCatalog(ctx.repoDir).catch(() => undefined),
  ]);
  return { main_ancestor_sha: ancestor, catalog_hash_seen: catalog?.hash };
}

/** The merge base of HEAD and main (as `worker check` finds main), read through git. */
async function mainAncestor(repoDir: string): Promise<string | undefined> {
  if (!existsSync(repoDir)) return undefined;
  const { main, head } = await findMainAndHead(repoDir, undefined);
  if (!main || head === undefined) return undefined;
  return head === main.sha ? head : mergeBaseOf(repoDir, head, main.sha);
}

/**
 * The `tcp://` and `tls://` sender of `worker` commands: durable when it returns, either
 * acknowledged by the hub or, when the hub stays unreachable, written to the local spool
 * (`spooled: true` with the reason). The local spool is never forwarded to the hub by
 * itself: on the Director's machine `director run` drains it; elsewhere it waits for
 * `worker resend` (or a `director ingest` of its files).
 */
export function tcpSender(
  ctx: RepoContext,
  url: Extract<BusUrl, { kind: "tcp" }>,
  options: Partial<TcpClientOptions> = {},
): BusSender {
  const client = new TcpBusClient({
    host: url.host,
    port: url.port,
    tls: url.tls ? clientTlsFromEnv() : undefined,
    hello: () => helloView(ctx),
    unreachableMs: unreachableMsFromEnv(),
    ...options,
  });
  return {
    async send(envelopes): Promise<Delivery> {
      try {
        await client.send(envelopes);
      } catch (error) {
        if (error instanceof HubRefusedError) {
          throw new UsageError(
            `${formatBusUrl(url)}: ${error.reason}; nothing was sent or spooled: fix the certificate, or choose another bus`,
          );
        }
        if (!(error instanceof HubUnavailableError)) throw error;
        const fallback = await spoolSender(ctx).send(error.unacked);
        return { ...fallback, transport: "tcp", fallback_reason: error.reason };
      }
      return {
        transport: "tcp",
        spooled: false,
        ...(client.syncRequired ? { sync_required: client.syncRequired } : {}),
      };
    },
    close: () => client.close(),
  };
}
