import { isLoopbackHost } from "../bus/protocol.js";
import { openContext } from "../context/repo-context.js";
import { UsageError } from "../errors.js";
import { type Command, repoOptions, stringOption } from "./args.js";
import { parseListen } from "./listen.js";

/** `worker mcp`: engram's MCP server, over stdio (the default) or streamable HTTP. */
export const mcp: Command = {
  name: "mcp",
  summary:
    'Serve this repository\'s memory over MCP (Model Context Protocol): tools memory_recall, memory_context, memory_freshness, memory_emit, memory_status; resources MEMORY.md, the catalog and each engram. Stdio by default; with --http HOST:PORT, streamable HTTP at /mcp (first stdout line {"listening":"HOST:PORT"}; SIGTERM stops it).',
  usage: "worker mcp [--http HOST:PORT] [--worker ID] [--repo DIR] [--config FILE] [--json]",
  options: {
    http: {
      type: "string",
      value: "HOST:PORT",
      description: "serve streamable HTTP here instead of stdio (loopback only; port 0 picks one)",
    },
    worker: { type: "string", value: "ID", description: "worker id for notes and recall signals" },
  },
  async run(args) {
    const listen = stringOption(args, "http");
    const where = listen === undefined ? undefined : parseListen(listen);
    if (where && !isLoopbackHost(where.host)) {
      throw new UsageError(
        `--http ${where.host}: the MCP server listens on this machine only (127.0.0.1, ::1 or localhost); it has no authentication of its own`,
      );
    }
    const ctx = await openContext(repoOptions(args));
    // Loaded here, not at start-up: the SDK is only needed by this command.
    const { createMemoryServer } = await import("../mcp/memory-server.js");
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
        const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
        const transport = new StdioServerTransport();
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
        onListening(address) {
          process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
        },
      });
      return {
        json: summary,
        text: `stopped (${summary.stopped_by}): ${summary.sessions} session(s), ${summary.refused} request(s) refused\n`,
      };
    } finally {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
  },
};
