import { readFileSync } from "node:fs";
import type { HubTls } from "../bus/hub-ports.js";
import { fileSystemError, UsageError } from "../errors.js";
import { type Command, numberOption, type ParsedArgs, repoOptions, stringOption } from "./args.js";
import { parseListen } from "./listen.js";

// `run` imports the hub on demand: see director-commands.ts.

const serve: Command = {
  name: "serve",
  summary:
    'Run the TCP hub of the agent bus: workers connect with --bus tcp://HOST:PORT; every message is acknowledged once fsynced into the buffer; a Director cycle runs every --cycle-seconds. The first stdout line is {"listening":"HOST:PORT"}; SIGTERM stops it gracefully.',
  usage:
    "director serve [--listen HOST:PORT] [--cycle-seconds N] [--tls-cert F --tls-key F --tls-ca F] [--dashboard HOST:PORT] [--repo DIR] [--config FILE] [--json]",
  options: {
    listen: {
      type: "string",
      value: "HOST:PORT",
      description: "where to listen (default 127.0.0.1:0; port 0 picks a free one)",
    },
    "cycle-seconds": {
      type: "string",
      value: "N",
      description: "seconds between Director cycles (default 60; 0 runs none)",
    },
    "tls-cert": { type: "string", value: "FILE", description: "the hub's certificate (PEM)" },
    "tls-key": { type: "string", value: "FILE", description: "the hub's private key (PEM)" },
    "tls-ca": {
      type: "string",
      value: "FILE",
      description: "the CA that signs workers' client certificates (PEM); required with TLS",
    },
    dashboard: {
      type: "string",
      value: "HOST:PORT",
      description:
        'also serve the dashboard page live there, read-only, loopback only (port 0 picks a free one); a second stdout line says {"dashboard":"URL"}',
    },
  },
  async run(args) {
    const { host, port } = parseListen(stringOption(args, "listen") ?? "127.0.0.1:0");
    const cycleSeconds = numberOption(args, "cycle-seconds") ?? 60;
    if (cycleSeconds < 0) throw new UsageError("--cycle-seconds: expected 0 or more seconds");
    const tls = tlsOptions(args);
    const dashboardText = stringOption(args, "dashboard");
    const dashboard = dashboardText === undefined ? undefined : parseListen(dashboardText);
    const { isLoopbackHost } = await import("../bus/protocol.js");
    if (dashboard && !isLoopbackHost(dashboard.host)) {
      throw new UsageError(
        `--dashboard ${dashboard.host}: the page shows memory to whoever connects; use 127.0.0.1 or ::1 (director dashboard --serve --allow-remote serves it further)`,
      );
    }
    if (!tls && !isLoopbackHost(host)) {
      throw new UsageError(
        `--listen ${host}: the hub listens beyond this machine only with TLS and client certificates (--tls-cert, --tls-key, --tls-ca); without them use 127.0.0.1 or ::1`,
      );
    }
    const [{ openContext }, { serveHub }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../director/serve.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const stop = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
    const warn = (message: string) => process.stderr.write(`director serve: ${message}\n`);
    // The page starts once the hub listens, so the hub's line stays the first one.
    let page: Promise<Error | undefined> | undefined;
    try {
      const summary = await serveHub(
        ctx,
        { host, port, cycleSeconds, tls },
        {
          stop: stop.signal,
          log: { warn },
          onListening(address) {
            process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
            if (dashboard) page = servePage(ctx, dashboard, stop, warn);
          },
        },
      );
      const failed = await page;
      if (failed) throw failed;
      return {
        json: summary,
        text:
          `stopped (${summary.stopped_by}): ${summary.connections} connection(s), ` +
          `accepted ${summary.accepted}, duplicates ${summary.duplicates}, quarantined ${summary.quarantined}, ` +
          `acknowledged ${summary.acknowledged}, ${summary.cycles} cycle(s)\n`,
      };
    } finally {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
  },
};

/**
 * The dashboard beside the hub, stopped with it. A page that cannot listen stops the hub;
 * its error is the answer (never a rejection nobody waits for while the hub runs).
 */
async function servePage(
  ctx: import("../context/repo-context.js").RepoContext,
  listen: { host: string; port: number },
  stop: AbortController,
  warn: (message: string) => void,
): Promise<Error | undefined> {
  try {
    const { serveDashboard } = await import("../director/dashboard-serve.js");
    await serveDashboard(ctx, listen, {
      stop: stop.signal,
      log: warn,
      onListening(url) {
        process.stdout.write(`${JSON.stringify({ dashboard: url })}\n`);
      },
    });
    return undefined;
  } catch (error) {
    stop.abort("dashboard");
    return error as Error;
  }
}

function tlsOptions(args: ParsedArgs): HubTls | undefined {
  const flags = ["tls-cert", "tls-key", "tls-ca"] as const;
  const given = flags.filter((flag) => stringOption(args, flag) !== undefined);
  if (given.length === 0) return undefined;
  const missing = flags.filter((flag) => !given.includes(flag));
  if (missing.length > 0) {
    throw new UsageError(
      `${missing.map((f) => `--${f}`).join(", ")}: TLS needs --tls-cert, --tls-key and --tls-ca (workers must present certificates the CA signed)`,
    );
  }
  const read = (flag: (typeof flags)[number]): Buffer => {
    const path = stringOption(args, flag) as string;
    try {
      return readFileSync(path);
    } catch (error) {
      throw fileSystemError(error, `--${flag} ${path}`, "read") ?? error;
    }
  };
  return { cert: read("tls-cert"), key: read("tls-key"), ca: read("tls-ca") };
}

/** Director commands of the agent bus (the TCP hub). */
export const BUS_COMMANDS: readonly Command[] = [serve];
