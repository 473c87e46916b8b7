import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
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
  /** When `get_episodes` and search start to list it, on the server's clock. */
  visible_at: number;
}

/**
 * A fault for one POST to the MCP endpoint. `http` answers the status instead of the call;
 * with `afterWrite` an `add_memory` is carried out (queued) first. `lost` carries it out and
 * cuts the connection. `error` answers `{"error": message}` in the tool result, `isError` a
 * tool result flagged as an error.
 */
export type GraphitiFault =
  | { kind: "http"; status: number; afterWrite?: boolean; retryAfter?: number; slow?: boolean }
  | { kind: "lost"; slow?: boolean }
  /** Carries the call out and never answers (until `stop`). */
  | { kind: "hold"; slow?: boolean }
  /** Answers at once, but the episode is listed only `visibilityLagMs` of `clock` later. */
  | { kind: "slow" }
  | { kind: "error"; message: string }
  | { kind: "isError"; message: string };

/** What a script sees of each tool call, to decide its fault. */
export interface ScriptedCall {
  tool: string;
  /** `add_memory` calls so far, this one not counted. */
  adds: number;
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
 * A bad day is scripted per tool call (`script`): the add carried out and then a 5xx, a cut
 * connection or no answer at all; `{"error"}` and `isError` results; slow adds listed only
 * later on the server's clock; 429 whose Retry-After is enforced.
 */
export class FakeGraphiti {
  readonly episodes: FakeEpisode[] = [];
  readonly calls: AddCall[] = [];
  readonly searches: { tool: string; query: string }[] = [];
  /** Every HTTP request the server received (a dry run must make none). */
  requests = 0;
  /** Episodes the processor failed, with the server's reason (as its log would say). */
  readonly failures: { name: string; error: string }[] = [];
  private readonly queue: (AddCall & { visible_at: number })[] = [];
  private slowNext = 0;
  private isErrors: string[] = [];
  private drops = 0;
  private errors: string[] = [];
  private httpFaults: number[] = [];
  /** Decides a fault per tool call (a bad day, driven by a script). */
  script: ((call: ScriptedCall) => GraphitiFault | undefined) | undefined;
  /**
   * The server's clock for eventual visibility, in ms; tests of the bins set it to the
   * Director's clock, so "later" means the same on both sides.
   */
  clock: () => number = () => Date.now();
  /**
   * A slow add (an extraction that takes minutes: faults with `slow`) is listed, and
   * searchable, this many ms of `clock` after it was made; others as soon as processed.
   */
  visibilityLagMs = 0;
  /** Requests that came before a 429's Retry-After had passed (each refused again). */
  earlyRequests = 0;
  private notBefore = 0;
  private readonly held = new Set<ServerResponse>();
  private down = false;
  private readonly sockets = new Set<Socket>();
  /** `add_memory` calls carried out whose answer was lost or was an error status. */
  lostAnswers = 0;
  private adds = 0;
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
    this.http.on("connection", (socket: Socket) => {
      if (this.down) {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.http?.listen(port, "127.0.0.1", resolve));
    const address = this.http.address() as AddressInfo;
    this.url = `http://127.0.0.1:${address.port}/mcp/`;
  }

  /** An outage: open connections are cut and new ones closed at once, until `setDown(false)`. */
  setDown(down: boolean): void {
    this.down = down;
    if (down) for (const socket of this.sockets) socket.destroy();
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.held.clear();
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
    if (req.method === "POST" && Date.now() < this.notBefore) {
      this.earlyRequests++;
      const wait = Math.ceil((this.notBefore - Date.now()) / 1000);
      res.writeHead(429, { "content-type": "text/plain", "retry-after": String(wait) });
      res.end("Too Many Requests");
      return;
    }
    const call = toolCall(body);
    const scripted = call ? this.script?.({ tool: call.name, adds: this.adds }) : undefined;
    if (call && scripted) {
      const add = call.name === "add_memory";
      if (scripted.kind === "error") {
        if (add) this.errors.unshift(scripted.message);
      } else if (scripted.kind === "isError") {
        if (add) this.isErrors.unshift(scripted.message);
      } else if (scripted.kind === "slow") {
        if (add) this.slowNext++;
      } else {
        // The call is carried out (when asked to), then the answer is an error or nothing.
        if (add && (scripted.kind !== "http" || scripted.afterWrite === true)) {
          this.addMemory(call.arguments, scripted.slow === true);
          this.lostAnswers++;
        }
        if (scripted.kind === "lost") {
          res.socket?.destroy();
          return;
        }
        if (scripted.kind === "hold") {
          this.held.add(res);
          return;
        }
        if (scripted.status === 429) {
          this.notBefore = Date.now() + (scripted.retryAfter ?? 1) * 1000;
        }
        res.writeHead(scripted.status, {
          "content-type": "text/plain",
          ...(scripted.retryAfter !== undefined
            ? { "retry-after": String(scripted.retryAfter) }
            : {}),
        });
        res.end(scripted.status === 429 ? "Too Many Requests" : "Service Unavailable");
        return;
      }
    }
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
        const failure = this.errors.shift();
        if (failure !== undefined) return answer({ error: failure });
        const flagged = this.isErrors.shift();
        if (flagged !== undefined) {
          return { content: [{ type: "text" as const, text: flagged }], isError: true };
        }
        const slow = this.slowNext > 0;
        if (slow) this.slowNext--;
        return answer(this.addMemory(a, slow));
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
        const found = this.visible()
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
          const hits = this.visible().filter(
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

  /** `add_memory`: validates, queues, and answers as the server does (no uuid). */
  private addMemory(
    a: Record<string, unknown>,
    slow = false,
  ): { message: string } | { error: string } {
    const group = typeof a.group_id === "string" ? a.group_id : "main";
    const name = String(a.name ?? "");
    if (!GROUP.test(group)) return { error: `Invalid group_id: ${group}` };
    if (name === "") return { error: "Episode name must not be empty" };
    const call: AddCall = {
      name,
      episode_body: String(a.episode_body ?? ""),
      group_id: group,
      source_description: String(a.source_description ?? ""),
      uuid: typeof a.uuid === "string" ? a.uuid : null,
      reference_time: typeof a.reference_time === "string" ? a.reference_time : null,
    };
    this.adds++;
    this.calls.push(call);
    this.queue.push({ ...call, visible_at: slow ? this.clock() + this.visibilityLagMs : 0 });
    setTimeout(() => this.process(), this.processDelayMs);
    return { message: `Episode '${name}' queued for processing in group '${group}'` };
  }

  /** Episodes per `ref:` of their provenance (one part of one item): more than one is a double. */
  copiesByRef(): Map<string, number> {
    const copies = new Map<string, number>();
    for (const e of this.episodes) {
      const ref = /ref: (\S+)$/.exec(e.source_description)?.[1] ?? e.uuid;
      copies.set(ref, (copies.get(ref) ?? 0) + 1);
    }
    return copies;
  }

  /** Episodes listed at the server's clock now (processed, and past the visibility lag). */
  private visible(): FakeEpisode[] {
    const now = this.clock();
    return this.episodes.filter((e) => e.visible_at <= now);
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
      visible_at: call.visible_at,
    };
    if (at >= 0) this.episodes[at] = episode;
    else this.episodes.push(episode);
  }
}

/** The tool name and arguments of a JSON-RPC `tools/call`, or null for anything else. */
function toolCall(body: unknown): { name: string; arguments: Record<string, unknown> } | null {
  const message = body as { method?: string; params?: { name?: string; arguments?: unknown } };
  if (message?.method !== "tools/call" || typeof message.params?.name !== "string") return null;
  return {
    name: message.params.name,
    arguments: (message.params.arguments ?? {}) as Record<string, unknown>,
  };
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
