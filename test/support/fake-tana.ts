import type { IncomingMessage, ServerResponse } from "node:http";
import { type Answer, localApi } from "./fake-tana-local.js";
import { FakeTanaStore, InputError } from "./fake-tana-store.js";
import { LocalHttp } from "./local-http.js";

/** Tana's Input API limits (tana-input-api-samples README). */
export const TANA_LIMITS = { perSecond: 1, maxNodes: 100, maxChars: 5000 };

/** The call rate of the stand-ins in tests that are not about pacing (enforced all the same). */
export const QUICK_TANA_RATE = 20;

export interface FakeTanaOptions {
  token: string;
  localToken: string;
  /** Enforce the call rate per token (429 past it); off for a pure speed test. */
  rateLimit?: boolean;
  /**
   * Calls a second the rate limit allows (Tana's 1 by default). Tests that are not about
   * pacing raise it, on both sides (`calls_per_second` in the client's config), so that they
   * do not wait out real seconds; the limit is still enforced at that rate.
   */
  perSecond?: number;
  /** Search shows a node only this many ms of `clock` after it was made (the app's index). */
  searchLagMs?: number;
}

/** What a script makes of a request instead of its plain answer: a bad day. */
export type TanaFault =
  /** This status; `afterWrite`: the Input API call is carried out first (the nodes exist). */
  | { kind: "status"; status: number; retryAfter?: number; afterWrite?: boolean }
  /** Carried out, then the connection is cut: the answer is lost. */
  | { kind: "lost" }
  /** Carried out at once, answered `ms` later: the nodes exist before their answer. */
  | { kind: "delay"; ms: number };

/** What a script sees of a request. */
export interface TanaRequest {
  method: string;
  path: string;
  /** The query string, decoded (`query[and][1][textContains]=Ada`). */
  query: string;
  /** Input API calls carried out so far (this one not yet counted). */
  writes: number;
  /** The request body as sent (empty for Local API requests). */
  body: string;
}

/** How the stand-in answers one request: an answer (maybe held back), or a cut connection. */
type Outcome = { answer: Answer; delayMs?: number } | { cut: true };

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
  /** Answers held back by a delay (cut by `stop`). */
  private readonly held = new Set<ServerResponse>();

  constructor(private readonly handle: (req: IncomingMessage, body: string) => Outcome) {}

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
    for (const res of this.held) res.destroy();
    this.held.clear();
    return this.http.stop();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const out = this.handle(req, Buffer.concat(chunks).toString("utf8"));
      if ("cut" in out) {
        res.socket?.destroy();
        return;
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(out.answer.status, {
          "content-type": "application/json",
          ...out.answer.headers,
        });
        res.end(JSON.stringify(out.answer.body));
      };
      if (out.delayMs === undefined) return send();
      this.held.add(res);
      const timer = setTimeout(() => {
        this.held.delete(res);
        send();
      }, out.delayMs);
      res.on("close", () => {
        this.held.delete(res);
        clearTimeout(timer);
      });
    });
  }
}

/**
 * A local Tana for tests: the Input API (`addToNodeV2`: Bearer token, one call per second per
 * token or 429, at most 100 nodes and 5000 characters per call or 400, `{children: [...]}`
 * answers) and the desktop app's Local API (health, workspaces, tags, search, read, update,
 * field content, trash), over one shared store of nodes. A bad day on demand: scripts give
 * 429 with a Retry-After that is enforced (a request before it is counted in `earlyRequests`),
 * 5xx before or after the write, lost and late answers; search lags behind writes
 * (`searchLagMs` on `clock`); either server goes down mid-run.
 */
export class FakeTana {
  readonly store = new FakeTanaStore();
  readonly calls: InputCall[] = [];
  /** Calls refused for coming too early, too big or too many nodes. */
  refused = { rate: 0, nodes: 0, chars: 0 };
  localRequests = 0;
  /** Input API calls carried out whose answer was an error (`failAfterWrite`). */
  lostAnswers = 0;
  /** Input API calls carried out (their nodes made), answered or not. */
  writes = 0;
  /** Requests that came before a Retry-After had passed. */
  earlyRequests = 0;
  /** Decides a fault per Input API call that passed authentication. */
  inputScript: ((request: TanaRequest) => TanaFault | undefined) | undefined;
  /** Decides a fault per authenticated Local API request (health checks pass it by). */
  localScript: ((request: TanaRequest) => TanaFault | undefined) | undefined;
  private afterWrite: number[] = [];
  private lastAccepted: number | null = null;
  /** The clock Retry-After is enforced on (ms); a test that injects the client's sleep sets it. */
  retryClock: () => number = () => performance.now();
  /** Retry-After in force, per API (`retryClock` ms). */
  private readonly notBefore = { input: 0, local: 0 };
  private readonly input = new Listener((req, body) => this.inputApi(req, body));
  private readonly local = new Listener((req, body) => this.localApi(req, body));

  constructor(private readonly options: FakeTanaOptions) {
    this.store.searchLagMs = options.searchLagMs ?? 0;
  }

  /** The stand-in's clock (ms) for search lag; tests of the bins set it to the Director's. */
  set clock(now: () => number) {
    this.store.now = now;
  }

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

  /** Calls a second the stand-in accepts; the client's `calls_per_second` to match it. */
  get perSecond(): number {
    return this.options.perSecond ?? TANA_LIMITS.perSecond;
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

  /** A request before the Retry-After in force: counted, and refused again. */
  private early(api: "input" | "local"): Outcome | null {
    const wait = this.notBefore[api] - this.retryClock();
    if (wait <= 0) return null;
    this.earlyRequests++;
    return plain(429, { error: "Retry-After not respected" }, String(Math.ceil(wait / 1000)));
  }

  /** A status fault before the work: a 429 sets the Retry-After it announces. */
  private refuse(api: "input" | "local", fault: TanaFault & { kind: "status" }): Outcome {
    const retry = fault.status === 429 ? String(fault.retryAfter ?? 1) : undefined;
    if (retry !== undefined) {
      this.notBefore[api] = this.retryClock() + Number(retry) * 1000;
    }
    return plain(fault.status, { error: `scripted ${fault.status}` }, retry);
  }

  private inputApi(req: IncomingMessage, text: string): Outcome {
    if (req.method !== "POST") return plain(405, { error: "Method not allowed" });
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      return plain(401, { error: "Invalid token" });
    }
    const now = performance.now();
    const gap = this.lastAccepted === null ? null : now - this.lastAccepted;
    const record = (status: number, nodes: number) => {
      this.calls.push({ at: now, status, nodes, chars: text.length, gap });
    };
    const early = this.early("input");
    if (early !== null) {
      record(429, 0);
      return early;
    }
    if (this.options.rateLimit !== false && gap !== null && gap < 1000 / this.perSecond) {
      this.refused.rate++;
      record(429, 0);
      const error = `Too many requests: ${this.perSecond} call(s) per second per token`;
      return plain(429, { error }, "1");
    }
    let body: { targetNodeId?: unknown; nodes?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      record(400, 0);
      return plain(400, { error: "Body is not JSON" });
    }
    const nodes = countNodes(body.nodes);
    if (text.length > TANA_LIMITS.maxChars) {
      this.refused.chars++;
      record(400, nodes);
      return plain(400, {
        error: `Request too large: ${text.length} characters, max ${TANA_LIMITS.maxChars}`,
      });
    }
    if (nodes > TANA_LIMITS.maxNodes) {
      this.refused.nodes++;
      record(400, nodes);
      return plain(400, { error: `Too many nodes: ${nodes}, max ${TANA_LIMITS.maxNodes}` });
    }
    const fault = this.inputScript?.({
      method: "POST",
      path: "/addToNodeV2",
      query: "",
      writes: this.writes,
      body: text,
    });
    if (fault?.kind === "status" && fault.afterWrite !== true) {
      record(fault.status, nodes);
      return this.refuse("input", fault);
    }
    let children: ReturnType<FakeTanaStore["addToNode"]>;
    try {
      children = this.store.addToNode(body);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      record(error.status, nodes);
      return plain(error.status, { error: error.message });
    }
    this.writes++;
    this.lastAccepted = now;
    const lost = this.afterWrite.shift() ?? (fault?.kind === "status" ? fault.status : undefined);
    if (lost !== undefined) {
      // The nodes exist; the client hears of a failure.
      this.lostAnswers++;
      record(lost, nodes);
      return plain(lost, { error: "Service unavailable" });
    }
    if (fault?.kind === "lost") {
      this.lostAnswers++;
      record(-1, nodes);
      return { cut: true };
    }
    record(200, nodes);
    const answer = { answer: { status: 200, body: { children } } };
    return fault?.kind === "delay" ? { ...answer, delayMs: fault.ms } : answer;
  }

  private localApi(req: IncomingMessage, text: string): Outcome {
    this.localRequests++;
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://local");
    const authorized = req.headers.authorization === `Bearer ${this.options.localToken}`;
    if (url.pathname !== "/health" && authorized) {
      const early = this.early("local");
      if (early !== null) return early;
      const fault = this.localScript?.({
        method,
        path: url.pathname,
        query: decodeURIComponent(url.search),
        writes: this.writes,
        body: "",
      });
      if (fault?.kind === "status" && fault.afterWrite !== true) return this.refuse("local", fault);
      const answer = localApi(this.store, method, url, text, authorized);
      if (fault?.kind === "status") return plain(fault.status, { error: "after the write" });
      if (fault?.kind === "lost") return { cut: true };
      return fault?.kind === "delay" ? { answer, delayMs: fault.ms } : { answer };
    }
    return { answer: localApi(this.store, method, url, text, authorized) };
  }
}

function plain(status: number, body: unknown, retryAfter?: string): Outcome {
  return {
    answer: {
      status,
      body,
      ...(retryAfter !== undefined ? { headers: { "retry-after": retryAfter } } : {}),
    },
  };
}
