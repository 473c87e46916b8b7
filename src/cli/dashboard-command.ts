import { resolve } from "node:path";
import { shownPath } from "../context/within.js";
import { UsageError } from "../errors.js";
import { type Command, repoOptions, stringOption } from "./args.js";
import { parseListen } from "./listen.js";

// `run` imports its work on demand: see director-commands.ts.

/** `director dashboard`: the static page of memory, or (--serve) the same page served live. */
export const DASHBOARD_COMMAND: Command = {
  name: "dashboard",
  summary:
    'Write a self-contained page of memory (index.html, app.js, style.css; no network fetch): catalog, tiers and buffer against their budgets, MEMORY.md, decisions, searchable engrams with their provenance, workers, sync targets and versions. --serve serves it live on loopback; its first stdout line is {"listening":"URL"}.',
  usage:
    "director dashboard [--out DIR] | director dashboard --serve [--listen HOST:PORT] [--allow-remote] [--repo DIR] [--config FILE] [--json]",
  options: {
    out: {
      type: "string",
      value: "DIR",
      description:
        "where to write the page (default: dashboard/ in the state folder, .engram/dashboard/)",
    },
    serve: {
      type: "boolean",
      description:
        "serve the page over HTTP, read-only, read afresh on each request, until SIGTERM",
    },
    listen: {
      type: "string",
      value: "HOST:PORT",
      description: "with --serve: where to listen (default 127.0.0.1:0; port 0 picks a free one)",
    },
    "allow-remote": {
      type: "boolean",
      description:
        "with --serve: allow a non-loopback --listen (memory is then readable from the network)",
    },
  },
  async run(args) {
    const serve = args.values.serve === true;
    const out = stringOption(args, "out");
    if (serve && out !== undefined) throw new UsageError("--out and --serve: choose one");
    if (
      !serve &&
      (stringOption(args, "listen") !== undefined || args.values["allow-remote"] === true)
    ) {
      throw new UsageError("--listen and --allow-remote go with --serve");
    }
    const { openContext } = await import("../context/repo-context.js");
    const ctx = await openContext(repoOptions(args));
    if (serve)
      return serveCommand(ctx, args.values["allow-remote"] === true, stringOption(args, "listen"));
    const { writeDashboard } = await import("../director/dashboard.js");
    const { join } = await import("node:path");
    const dir = out === undefined ? join(ctx.paths.root, "dashboard") : resolve(out);
    const written = await writeDashboard(ctx, dir);
    return {
      json: written,
      text:
        `wrote ${shownPath(process.cwd(), join(dir, "index.html"))}: ` +
        `catalog version ${written.catalog_version}, ${written.engrams} engram(s), ${written.decisions} decision(s), ${written.workers} worker(s)\n`,
    };
  },
};

async function serveCommand(
  ctx: import("../context/repo-context.js").RepoContext,
  allowRemote: boolean,
  listenText: string | undefined,
) {
  const { host, port } = parseListen(listenText ?? "127.0.0.1:0");
  const [{ isLoopbackHost }, { serveDashboard }] = await Promise.all([
    import("../bus/protocol.js"),
    import("../director/dashboard-serve.js"),
  ]);
  if (!allowRemote && !isLoopbackHost(host)) {
    throw new UsageError(
      `--listen ${host}: the dashboard shows memory to whoever connects; it listens beyond this machine only with --allow-remote, otherwise use 127.0.0.1 or ::1`,
    );
  }
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    const summary = await serveDashboard(
      ctx,
      { host, port },
      {
        stop: stop.signal,
        log: (message) => process.stderr.write(`director dashboard: ${message}\n`),
        onListening(url) {
          process.stdout.write(`${JSON.stringify({ listening: url })}\n`);
        },
      },
    );
    return {
      json: summary,
      text: `stopped (${summary.stopped_by}): ${summary.requests} request(s)\n`,
    };
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}
