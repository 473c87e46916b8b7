import type { IncomingMessage, ServerResponse } from "node:http";
import { FakeTanaStore, InputError } from "./fake-tana-store.js";
import { LocalHttp } from "./local-http.js";

/** Tana's Input API limits (tana-input-api-samples README). */
export const TANA_LIMITS = { perSecond: 1, maxNodes: 100, maxChars: 5000 };

export interface FakeTanaOptions {
  token: string;
  localToken: string;
  /** Enforce one call per second per token (429 past it); off for a pure speed test. */
  rateLimit?: boolean;
}

export interface InputCall {
  at: number;
  status: number;
  nodes: number;
  chars: number;
  /** Milliseconds since the previous accepted call of the token (null for the first). */
  gap: number | null;
}

/** Every node, field and value of a tree, as the client counts them (the stricter count). */
function countNodes(nodes: unknown): number {
  if (!Array.isArray(nodes)) return 0;
  let n = 0;
  for (const node of nodes) {
    n++;
    n += countNodes((node as { children?: unknown }).children);
  }
  return n;
}

class Listener {
  private readonly http = new LocalHttp();

  constructor(
    private readonly handle: (
      req: IncomingMessage,
      body: string,
    ) => { status: number; body: unknown; headers?: Record<string, string> },
  ) {}

  get url(): string {
    return this.http.url;
  }

  start(): Promise<string> {
    return this.http.start((req, res) => this.serve(req, res));
  }

  setDown(down: boolean): void {
    this.http.setDown(down);
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const out = this.handle(req, Buffer.concat(chunks).toString("utf8"));
      res.writeHead(out.status, { "content-type": "application/json", ...out.headers });
      res.end(JSON.stringify(out.body));
    });
  }
}

/**
 * A local Tana for tests: the Input API (`addToNodeV2`: Bearer token, one call per second per
 * token or 429, at most 100 nodes and 5000 characters per call or 400, `{children: [...]}`
 * answers) and the desktop app's Local API (health, workspaces, tags, search, read, update,
 * field content, trash), over one shared store of nodes.
 */
export class FakeTana {
  readonly store = new FakeTanaStore();
  readonly calls: InputCall[] = [];
  /** Calls refused for coming too early, too big or too many nodes. */
  refused = { rate: 0, nodes: 0, chars: 0 };
  localRequests = 0;
  /** Input API calls carried out whose answer was an error (`failAfterWrite`). */
  lostAnswers = 0;
  private afterWrite: number[] = [];
  private lastAccepted: number | null = null;
  private readonly input = new Listener((req, body) => this.inputApi(req, body));
  private readonly local = new Listener((req, body) => this.localApi(req, body));

  constructor(private readonly options: FakeTanaOptions) {}

  /** Accepted calls that broke a limit (possible only with the rate limit off): for the bench. */
  get overLimit(): number {
    return this.calls.filter(
      (c) =>
        c.status === 200 &&
        ((c.gap !== null && c.gap < 1000) ||
          c.nodes > TANA_LIMITS.maxNodes ||
          c.chars > TANA_LIMITS.maxChars),
    ).length;
  }

  get inputUrl(): string {
    return `${this.input.url}/addToNodeV2`;
  }

  get localUrl(): string {
    return this.local.url;
  }

  async start(): Promise<void> {
    await this.input.start();
    await this.local.start();
  }

  async stop(): Promise<void> {
    await this.input.stop();
    await this.local.stop();
  }

  /** The next accepted Input API calls create their nodes, then answer this status (a 5xx). */
  failAfterWrite(status = 503, count = 1): void {
    for (let i = 0; i < count; i++) this.afterWrite.push(status);
  }

  /** Nodes per engram key (`engram <key> <hash>` descriptions): more than one is a double. */
  copiesByKey(): Map<string, number> {
    const copies = new Map<string, number>();
    for (const node of this.store.nodes.values()) {
      const key = /^engram (\S+) /.exec(node.description)?.[1];
      if (key !== undefined && !node.inTrash) copies.set(key, (copies.get(key) ?? 0) + 1);
    }
    return copies;
  }

  /** The desktop app quits (the Local API refuses connections) or starts again. */
  setLocalDown(down: boolean): void {
    this.local.setDown(down);
  }

  setInputDown(down: boolean): void {
    this.input.setDown(down);
  }

  private inputApi(req: IncomingMessage, text: string) {
    if (req.method !== "POST") return { status: 405, body: { error: "Method not allowed" } };
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      return { status: 401, body: { error: "Invalid token" } };
    }
    const now = performance.now();
    const gap = this.lastAccepted === null ? null : now - this.lastAccepted;
    const record = (status: number, nodes: number) => {
      this.calls.push({ at: now, status, nodes, chars: text.length, gap });
    };
    if (this.options.rateLimit !== false && gap !== null && gap < 1000 / TANA_LIMITS.perSecond) {
      this.refused.rate++;
      record(429, 0);
      return {
        status: 429,
        body: { error: "Too many requests: one call per second per token" },
        headers: { "retry-after": "1" },
      };
    }
    let body: { targetNodeId?: unknown; nodes?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      record(400, 0);
      return { status: 400, body: { error: "Body is not JSON" } };
    }
    const nodes = countNodes(body.nodes);
    if (text.length > TANA_LIMITS.maxChars) {
      this.refused.chars++;
      record(400, nodes);
      return {
        status: 400,
        body: {
          error: `Request too large: ${text.length} characters, max ${TANA_LIMITS.maxChars}`,
        },
      };
    }
    if (nodes > TANA_LIMITS.maxNodes) {
      this.refused.nodes++;
      record(400, nodes);
      return {
        status: 400,
        body: { error: `Too many nodes: ${nodes}, max ${TANA_LIMITS.maxNodes}` },
      };
    }
    try {
      const children = this.store.addToNode(body);
      this.lastAccepted = now;
      const lost = this.afterWrite.shift();
      if (lost !== undefined) {
        // The nodes exist; the client hears of a failure.
        this.lostAnswers++;
        record(lost, nodes);
        return { status: lost, body: { error: "Service unavailable" } };
      }
      record(200, nodes);
      return { status: 200, body: { children } };
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      record(error.status, nodes);
      return { status: error.status, body: { error: error.message } };
    }
  }

  private localApi(req: IncomingMessage, text: string) {
    this.localRequests++;
    const url = new URL(req.url ?? "/", "http://local");
    const path = url.pathname;
    if (path === "/health") {
      return {
        status: 200,
        body: { status: "ok", timestamp: new Date(0).toISOString(), nodeSpaceReady: true },
      };
    }
    if (req.headers.authorization !== `Bearer ${this.options.localToken}`) {
      return { status: 401, body: { error: "Unauthorized" } };
    }
    const json = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
    const store = this.store;
    const notFound = { status: 404, body: { error: `Not found: ${path}` } };
    if (req.method === "GET" && path === "/workspaces")
      return { status: 200, body: [store.workspace] };
    let m = /^\/workspaces\/([^/]+)\/tags$/.exec(path);
    if (req.method === "GET" && m) {
      if (m[1] !== store.workspace.id) return notFound;
      const tags = [...store.nodes.values()].filter((n) => n.kind === "tag" && !n.inTrash);
      return { status: 200, body: tags.map((t) => ({ id: t.id, name: t.name })) };
    }
    m = /^\/tags\/([^/]+)\/fields$/.exec(path);
    if (req.method === "POST" && m) {
      const tag = store.nodes.get(m[1] as string);
      if (tag?.kind !== "tag") return notFound;
      const created = store.addToNode({
        targetNodeId: "SCHEMA",
        nodes: [{ name: json.name, supertags: [{ id: "SYS_T02" }] }],
      })[0];
      return {
        status: 200,
        body: {
          tagId: tag.id,
          tagName: tag.name,
          fieldId: created?.nodeId,
          fieldName: json.name,
          dataType: json.dataType,
          message: "Field added",
        },
      };
    }
    if (req.method === "GET" && path === "/nodes/search") {
      const query: Record<string, string> = {};
      for (const [k, v] of url.searchParams) {
        const q = /^query\[(\w+)\]$/.exec(k);
        if (q) query[q[1] as string] = v;
      }
      const limit = Number(url.searchParams.get("limit") ?? "50");
      const offset = Number(url.searchParams.get("offset") ?? "0");
      if (limit > 100) return { status: 400, body: { error: "limit at most 100" } };
      const found = store.search(query).slice(offset, offset + limit);
      return { status: 200, body: found.map((n) => store.searchShape(n)) };
    }
    m = /^\/nodes\/([^/]+)(?:\/(update|trash|fields\/([^/]+)\/content))?$/.exec(path);
    const node = m ? store.nodes.get(decodeURIComponent(m[1] as string)) : undefined;
    if (m === null || node === undefined) return notFound;
    if (req.method === "GET" && m[2] === undefined) {
      return {
        status: 200,
        body: {
          markdown: `- ${node.name}`,
          name: node.name,
          description: node.description || null,
        },
      };
    }
    if (req.method !== "POST") return notFound;
    if (m[2] === "update") {
      if (typeof json.name === "string") node.name = json.name;
      if (typeof json.description === "string") node.description = json.description;
      return {
        status: 200,
        body: {
          nodeId: node.id,
          name: node.name,
          description: node.description,
          message: "Node updated",
        },
      };
    }
    if (m[2] === "trash") {
      node.inTrash = true;
      return {
        status: 200,
        body: {
          nodeId: node.id,
          nodeName: node.name,
          trashNodeId: "wsTrash01",
          message: "Moved to trash",
        },
      };
    }
    const attribute = decodeURIComponent(m[3] as string);
    if (store.nodes.get(attribute)?.kind !== "field") return notFound;
    const content = String(json.content ?? "");
    const refs = [...content.matchAll(/\[\[\^([A-Za-z0-9_-]+)\]\]/g)].map((r) => `ref:${r[1]}`);
    node.fields.set(attribute, refs.length > 0 ? refs : [content]);
    return {
      status: 200,
      body: { nodeId: node.id, attributeId: attribute, content, message: "Field updated" },
    };
  }
}
