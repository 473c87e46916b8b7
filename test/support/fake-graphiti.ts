import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface FakeEpisode {
  uuid: string;
  name: string;
  content: string;
  group_id: string;
  source: string;
  source_description: string;
  reference_time: string | null;
  created_at: string;
}

export interface AddCall {
  name: string;
  episode_body: string;
  group_id: string;
  source_description: string;
  uuid: string | null;
  reference_time: string | null;
}

const GROUP = /^[a-zA-Z0-9_-]+$/;

/**
 * A local stand-in for the Graphiti MCP server (1.0, streamable HTTP at `/mcp/`): the same tool
 * names, parameters and answers. `add_memory` queues; episodes are processed one at a time a
 * little later, and `dropNext` makes the processor lose the next one (the server's known bug).
 */
export class FakeGraphiti {
  readonly episodes: FakeEpisode[] = [];
  readonly calls: AddCall[] = [];
  readonly searches: { tool: string; query: string }[] = [];
  /** Every HTTP request the server received (a dry run must make none). */
  requests = 0;
  /** Episodes the processor failed, with the server's reason (as its log would say). */
  readonly failures: { name: string; error: string }[] = [];
  private readonly queue: AddCall[] = [];
  private drops = 0;
  private errors: string[] = [];
  private httpFaults: number[] = [];
  private http: Server | null = null;
  private readonly transports = new Map<string, StreamableHTTPServerTransport>();
  url = "";

  constructor(private readonly processDelayMs = 20) {}

  /** The next queued episode is lost while processing (answered "queued", never stored). */
  dropNext(count = 1): void {
    this.drops += count;
  }

  /** The next `add_memory` calls answer `{"error": message}` in the tool result, as the server does. */
  errorNext(message: string, count = 1): void {
    for (let i = 0; i < count; i++) this.errors.push(message);
  }

  /** The next POSTs to the MCP endpoint answer this HTTP status (429, 503...) instead. */
  httpFaultNext(status: number, count = 1): void {
    for (let i = 0; i < count; i++) this.httpFaults.push(status);
  }

  async start(port = 0): Promise<void> {
    this.http = createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.http?.listen(port, "127.0.0.1", resolve));
    const address = this.http.address() as AddressInfo;
    this.url = `http://127.0.0.1:${address.port}/mcp/`;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    for (const t of this.transports.values()) await t.close().catch(() => undefined);
    this.transports.clear();
    const http = this.http;
    this.http = null;
    if (http === null) return;
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests++;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/health" && req.method === "GET") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ status: "healthy", service: "graphiti-mcp" }));
      return;
    }
    if (path !== "/mcp/" && path !== "/mcp") {
      res.statusCode = 404;
      res.end("not found");
      return;
    }
    const fault = req.method === "POST" ? this.httpFaults.shift() : undefined;
    if (fault !== undefined) {
      res.writeHead(fault, { "content-type": "text/plain", "retry-after": "0" });
      res.end(fault === 429 ? "Too Many Requests" : "Service Unavailable");
      return;
    }
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? this.transports.get(sessionId) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.transports.set(id, transport as StreamableHTTPServerTransport);
        },
      });
      await this.mcpServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }

  private mcpServer(): McpServer {
    const server = new McpServer({ name: "Graphiti Agent Memory", version: "1.0.2" });
    const answer = (value: unknown) => ({
      content: [{ type: "text" as const, text: JSON.stringify(value) }],
      structuredContent: { result: value } as Record<string, unknown>,
    });
    const groupsOf = (g: string | string[] | undefined): string[] =>
      g === undefined ? ["main"] : Array.isArray(g) ? g : [g];
    server.registerTool(
      "add_memory",
      {
        inputSchema: {
          name: z.string(),
          episode_body: z.string(),
          group_id: z.string().optional(),
          source: z.string().default("text"),
          source_description: z.string().default(""),
          uuid: z.string().optional(),
          reference_time: z.string().optional(),
        },
      },
      async (a) => {
        const group = a.group_id ?? "main";
        const failure = this.errors.shift();
        if (failure !== undefined) return answer({ error: failure });
        if (!GROUP.test(group)) return answer({ error: `Invalid group_id: ${group}` });
        if (a.name === "") return answer({ error: "Episode name must not be empty" });
        const call: AddCall = {
          name: a.name,
          episode_body: a.episode_body,
          group_id: group,
          source_description: a.source_description,
          uuid: a.uuid ?? null,
          reference_time: a.reference_time ?? null,
        };
        this.calls.push(call);
        this.queue.push(call);
        setTimeout(() => this.process(), this.processDelayMs);
        return answer({ message: `Episode '${a.name}' queued for processing in group '${group}'` });
      },
    );
    server.registerTool(
      "get_episodes",
      {
        inputSchema: {
          group_ids: z.union([z.string(), z.array(z.string())]).optional(),
          max_episodes: z.number().int().default(10),
        },
      },
      async (a) => {
        const groups = groupsOf(a.group_ids);
        const found = this.episodes
          .filter((e) => groups.includes(e.group_id))
          .slice(-a.max_episodes)
          .reverse();
        if (found.length === 0) return answer({ message: "No episodes found", episodes: [] });
        return answer({ message: "Episodes retrieved successfully", episodes: found });
      },
    );
    server.registerTool("delete_episode", { inputSchema: { uuid: z.string() } }, async (a) => {
      const i = this.episodes.findIndex((e) => e.uuid === a.uuid);
      if (i < 0) return answer({ error: `Episode ${a.uuid} not found` });
      this.episodes.splice(i, 1);
      return answer({ message: `Episode ${a.uuid} deleted successfully` });
    });
    server.registerTool("get_status", {}, async () =>
      answer({ status: "ok", message: "Graphiti MCP server is running and connected to neo4j" }),
    );
    const search = (tool: string) =>
      server.registerTool(
        tool,
        {
          inputSchema: {
            query: z.string(),
            group_ids: z.union([z.string(), z.array(z.string())]).optional(),
            max_nodes: z.number().int().optional(),
            max_facts: z.number().int().optional(),
          },
        },
        async (a) => {
          this.searches.push({ tool, query: a.query });
          if (a.query.trim() === "") return answer({ error: "Query must not be empty" });
          const groups = groupsOf(a.group_ids);
          const terms = unescapeLucene(a.query).toLowerCase();
          const hits = this.episodes.filter(
            (e) =>
              groups.includes(e.group_id) && `${e.name} ${e.content}`.toLowerCase().includes(terms),
          );
          return tool === "search_nodes"
            ? answer({
                message: "Nodes retrieved successfully",
                nodes: hits.map((e) => ({ uuid: e.uuid, name: e.name, group_id: e.group_id })),
              })
            : answer({
                message: "Facts retrieved successfully",
                facts: hits.map((e) => ({ uuid: e.uuid, fact: e.name, group_id: e.group_id })),
              });
        },
      );
    search("search_nodes");
    search("search_memory_facts");
    return server;
  }

  /** One episode at a time, as the server's per-group worker does. */
  private process(): void {
    const call = this.queue.shift();
    if (call === undefined) return;
    if (this.drops > 0) {
      this.drops--;
      return;
    }
    const at = call.uuid === null ? -1 : this.episodes.findIndex((e) => e.uuid === call.uuid);
    if (call.uuid !== null && at < 0) {
      // graphiti_core reads a given uuid as "load this episode": a new one is not found.
      this.failures.push({ name: call.name, error: `node ${call.uuid} not found` });
      return;
    }
    const uuid = call.uuid ?? randomUUID();
    const episode: FakeEpisode = {
      uuid,
      name: call.name,
      content: call.episode_body,
      group_id: call.group_id,
      source: "text",
      source_description: call.source_description,
      reference_time: call.reference_time,
      created_at: new Date(0).toISOString(),
    };
    if (at >= 0) this.episodes[at] = episode;
    else this.episodes.push(episode);
  }
}

/** The fake searches substrings; an escaped query must mean the same words. */
function unescapeLucene(query: string): string {
  return query.replace(/\\(.)/g, "$1");
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}
