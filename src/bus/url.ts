import { UsageError } from "../errors.js";
import { NATS_CREDENTIAL_HINT } from "./nats-credentials.js";

/** Where a worker's envelopes go, or where the Director reads them from. */
export type BusUrl =
  | { kind: "spool" }
  | { kind: "tcp"; host: string; port: number; tls: boolean }
  | { kind: "nats"; servers: string }
  | { kind: "git"; remote: string };

export const BUS_URL_FORMS =
  "spool | tcp://HOST:PORT | tls://HOST:PORT | nats://HOST:PORT | git:REMOTE";

/**
 * Parses a `--bus` value (or an `agent_bus.sources` entry). `flag` names where it came from,
 * so a bad value is reported against the flag or config key the user typed.
 */
export function parseBusUrl(text: string, flag = "--bus"): BusUrl {
  const value = text.trim();
  if (value === "" || value === "spool") return { kind: "spool" };
  if (value.startsWith("git:")) {
    const remote = value.slice("git:".length);
    if (remote.length === 0) throw new UsageError(`${flag}: git: needs a remote, e.g. git:origin`);
    return { kind: "git", remote };
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*@/.test(value)) {
    // Not echoed: what stands before the @ is a secret. A credential is the environment's.
    throw new UsageError(
      `${flag}: a bus URL carries no credential (USER:PASSWORD@ or TOKEN@): set ${NATS_CREDENTIAL_HINT} in the environment, or ENGRAM_TLS_CERT and ENGRAM_TLS_KEY for tls://`,
    );
  }
  const match = /^(tcp|tls|nats):\/\/(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/.exec(value);
  if (!match) {
    throw new UsageError(`${flag}: expected ${BUS_URL_FORMS}, got "${text}"`);
  }
  const [, scheme, rawHost, rawPort] = match as unknown as [string, string, string, string];
  const port = Number(rawPort);
  if (port > 65_535) throw new UsageError(`${flag}: port ${port} is out of range`);
  const host = rawHost.startsWith("[") ? rawHost.slice(1, -1) : rawHost;
  if (scheme === "nats") return { kind: "nats", servers: `${rawHost}:${port}` };
  return { kind: "tcp", host, port, tls: scheme === "tls" };
}

export function formatBusUrl(url: BusUrl): string {
  switch (url.kind) {
    case "spool":
      return "spool";
    case "git":
      return `git:${url.remote}`;
    case "nats":
      return `nats://${url.servers}`;
    case "tcp":
      return `${url.tls ? "tls" : "tcp"}://${url.host.includes(":") ? `[${url.host}]` : url.host}:${url.port}`;
  }
}
