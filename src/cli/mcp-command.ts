import { UsageError } from "../errors.js";
import { RESOURCE_URIS, TOOL_NAMES } from "../mcp/tool-names.js";
import { type Command, numberOption, repoOptions, stringOption } from "./args.js";
import { parseListen } from "./listen.js";

/** `worker mcp`: engram's MCP server, over stdio (the default) or streamable HTTP. */
export const mcp: Command = {
  name: "mcp",
  summary: `Serve this repository's memory over MCP (Model Context Protocol): tools ${TOOL_NAMES.join(", ")}; resources ${RESOURCE_URIS.join(", ")}. Stdio by default; with --http HOST:PORT, streamable HTTP at /mcp (first stdout line {"listening":"HOST:PORT"}; SIGTERM stops it).`,
  usage:
    "worker mcp [--http HOST:PORT [--max-sessions N] [--session-idle SECONDS]] [--worker ID] [--repo DIR] [--config FILE] [--json]",
  options: {
    http: {
      type: "string",
      value: "HOST:PORT",
      description: "serve streamable HTTP here instead of stdio (loopback only; port 0 picks one)",
    },
    "max-sessions": {
      type: "string",
      value: "N",
      description:
        "with --http: most sessions open at once; a new one over it gets 503 (default 100)",
    },
    "session-idle": {
      type: "string",
      value: "SECONDS",
      description: "with --http: close a session unused for this long (default 900)",
    },
    worker: { type: "string", value: "ID", description: "worker id for notes and recall signals" },
  },
  async run(args) {
    const listen = stringOption(args, "http");
    const where = listen === undefined ? undefined : parseListen(listen);
    const maxSessions = numberOption(args, "max-sessions");
    const idleSeconds = numberOption(args, "session-idle");
    if (maxSessions !== undefined && (!Number.isInteger(maxSessions) || maxSessions < 1)) {
      throw new UsageError(
        `--max-sessions: expected a whole number of 1 or more, got ${maxSessions}`,
      );
    }
    if (idleSeconds !== undefined && !(idleSeconds >= 1 && idleSeconds <= 7 * 86_400)) {
      throw new UsageError(`--session-idle: expected seconds from 1 to 604800, got ${idleSeconds}`);
    }
    if (where === undefined && (maxSessions !== undefined || idleSeconds !== undefined)) {
      throw new UsageError("--max-sessions and --session-idle apply to --http only");
    }
    // Imported here, not at the top: see the note in worker-commands.ts.
    const [{ isLoopbackHost }, { openContext }] = await Promise.all([
      import("../bus/protocol.js"),
      import("../context/repo-context.js"),
    ]);
    if (where && !isLoopbackHost(where.host)) {
      throw new UsageError(
        `--http ${where.host}: the MCP server listens on this machine only (127.0.0.1, ::1 or localhost); it has no authentication of its own`,
      );
    }
    const ctx = await openContext(repoOptions(args));
    // Loaded here, not at start-up: the SDK is only needed by this command.
    const { createMemoryServer, signalsSent } = await import("../mcp/memory-server.js");
    const { LoadedMemory } = await import("../mcp/loaded-memory.js");
    const serverOptions = {
      version: "0.1.0",
      worker: stringOption(args, "worker"),
      memory: new LoadedMemory(ctx),
    };
    const stop = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
    try {
      if (where === undefined) {
        const { stdioTransport } = await import("../mcp/stdio.js");
        const transport = stdioTransport();
        const closed = new Promise<string>((resolveClosed) => {
          transport.onclose = () => resolveClosed("stdin closed");
          stop.signal.addEventListener("abort", () => resolveClosed(String(stop.signal.reason)));
          process.stdin.once("end", () => resolveClosed("stdin closed"));
        });
        await createMemoryServer(ctx, serverOptions).connect(transport);
        const stoppedBy = await closed;
        await transport.close().catch(() => undefined);
        // stdout belongs to the protocol: nothing more is printed there.
        return { json: { stopped_by: stoppedBy }, text: "" };
      }
      const { serveMcpHttp } = await import("../mcp/http.js");
      const summary = await serveMcpHttp({
        ...where,
        newServer: () => createMemoryServer(ctx, serverOptions),
        stop: stop.signal,
        maxSessions,
        sessionIdleMs: idleSeconds === undefined ? undefined : idleSeconds * 1000,
        onListening(address) {
          process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
        },
      });
      return {
        json: summary,
        text: `stopped (${summary.stopped_by}): ${summary.sessions} session(s), ${summary.expired} expired, ${summary.refused} request(s) refused\n`,
      };
    } finally {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      await signalsSent();
    }
  },
};
