import type { IncomingMessage, ServerResponse } from "node:http";
import { listObject, NotionHttpError, userObject, validation } from "./fake-notion-shapes.js";
import { checkRichText, FAKE_LIMITS, FakeNotionStore } from "./fake-notion-store.js";
import { LocalHttp } from "./local-http.js";

const JITTER_MS = 25;

/** A fault the next matching requests get instead of their answer. */
export type NotionFault = (
  | {
      kind: "status";
      status: 400 | 429 | 529 | 500 | 502 | 503 | 401;
      retryAfter?: number;
      /** The request is carried out first (a page is created), then the error is answered. */
      afterWrite?: boolean;
    }
  /** Processes the request (if `process`) and then never answers: the client times out. */
  | { kind: "hang"; process: boolean }
  /** Carries the request out, then cuts the connection: the answer is lost. */
  | { kind: "lost" }
  /** Carries the request out at once and answers `ms` later (the page exists before its answer). */
  | { kind: "delay"; ms: number }
) & {
  /** Only requests of this method get the fault (others pass it by). */
  method?: string;
  /** Only requests whose path matches (e.g. /^\/v1\/pages$/ for page creations). */
  path?: RegExp;
};

/** What a script sees of each request, to decide its fault. */
export interface ScriptedRequest {
  method: string;
  path: string;
  /** Pages created so far, this request's own creation not yet counted. */
  creates: number;
}

export interface FakeNotionOptions {
  token: string;
  /** The server's own rate limit: at most `perSecond` requests in any rolling second. */
  perSecond?: number;
  /**
   * Eventual visibility: a new page is missing from data source queries until this many ms of
   * the server's clock (`clock`) have passed since it was created. Retrieval by id sees it.
   */
  visibilityLagMs?: number;
}

export interface RequestRecord {
  at: number;
  method: string;
  path: string;
  status: number;
}

/**
 * A local Notion-compatible server (API 2025-09-03) for tests: the endpoints the sync target
 * uses, Notion's error bodies, its size limits and a rate limit, and faults on demand (429
 * with Retry-After, 5xx, hangs, 401, a schema change, the whole server down).
 */
export class FakeNotion {
  readonly store = new FakeNotionStore();
  readonly requests: RequestRecord[] = [];
  /** Requests beyond the rate limit, and requests before a Retry-After had passed. */
  rateViolations = 0;
  earlyRequests = 0;
  private faults: NotionFault[] = [];
  /** Decides a fault per request (after the queued ones): a bad day, driven by a script. */
  script: ((request: ScriptedRequest) => NotionFault | undefined) | undefined;
  /**
   * The server's clock for eventual visibility, in ms. Tests of the bins set it to the
   * Director's clock (SOURCE_DATE_EPOCH), so "later" means the same on both sides.
   */
  clock: () => number = () => Date.now();
  /** Answers held back by `hang` and `delay` faults (released, or cut, by `stop`). */
  private readonly held = new Set<ServerResponse>();
  /** Page creations whose answer was lost (a cut connection, a hang, an error after the write). */
  lostAnswers = 0;
  private notBefore = 0;
  private readonly arrivals: number[] = [];
  private readonly http = new LocalHttp();
  private requestId = 0;

  constructor(private readonly options: FakeNotionOptions) {
    this.store.visibleAt = (created) => created + (this.options.visibilityLagMs ?? 0);
    this.store.now = () => this.clock();
  }

  start(): Promise<string> {
    return this.http.start((req, res) => void this.handle(req, res));
  }

  get url(): string {
    return this.http.url;
  }

  stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.held.clear();
    return this.http.stop();
  }

  /** Pages created so far (every creation, doubles included). */
  get creates(): number {
    let n = 0;
    for (const count of this.store.createdKeys.values()) n += count;
    return n;
  }

  /** Queues faults; each is used by one request. */
  inject(fault: NotionFault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push(fault);
  }

  setDown(down: boolean): void {
    this.http.setDown(down);
  }

  /** A person edits a database: the property disappears. */
  removeProperty(databaseTitle: string, property: string): void {
    for (const ds of this.store.dataSources.values()) {
      if (ds.title === databaseTitle) delete ds.properties[property];
    }
  }

  /** Page creations per sync key: more than one is a double. */
  doubles(): string[] {
    return [...this.store.createdKeys].filter(([, n]) => n > 1).map(([k]) => k);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const method = (req.method ?? "GET").toUpperCase();
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const record: RequestRecord = { at, method, path, status: 0 };
    this.requests.push(record);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const fail = (error: NotionHttpError) =>
      send(error.status, error.body(`req-${++this.requestId}`), error.headers);
    try {
      this.checkRate(at);
      if (req.headers.authorization !== `Bearer ${this.options.token}`) {
        throw new NotionHttpError(401, "unauthorized", "API token is invalid.");
      }
      if (req.headers["notion-version"] !== "2025-09-03") {
        throw new NotionHttpError(
          400,
          "missing_version",
          "Notion-Version header failed validation.",
        );
      }
      const index = this.faults.findIndex(
        (f) => (f.method === undefined || f.method === method) && (f.path?.test(path) ?? true),
      );
      const fault =
        index >= 0
          ? this.faults.splice(index, 1)[0]
          : this.script?.({ method, path, creates: this.creates });
      if (fault?.kind === "status" && fault.afterWrite !== true) {
        if (fault.status === 429 || fault.status === 529) {
          this.notBefore = Math.max(this.notBefore, at + (fault.retryAfter ?? 1) * 1000);
        }
        throw statusError(fault);
      }
      if (raw.length > FAKE_LIMITS.payload) {
        throw validation(
          `Request body too large: ${raw.length} bytes, the limit is ${FAKE_LIMITS.payload}.`,
        );
      }
      let body: Record<string, unknown> = {};
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          throw new NotionHttpError(400, "invalid_json", "Error parsing JSON body.");
        }
      }
      checkRichText(body, "body");
      if (fault?.kind === "hang" && !fault.process) {
        record.status = -1;
        return;
      }
      const answer = this.route(method, path, body);
      const created = method === "POST" && path === "/v1/pages";
      if (fault?.kind === "hang") {
        // The work is done (or not), but the answer never comes.
        record.status = -1;
        this.held.add(res);
        if (created) this.lostAnswers++;
        return;
      }
      if (fault?.kind === "lost") {
        record.status = -1;
        if (created) this.lostAnswers++;
        res.socket?.destroy();
        return;
      }
      if (fault?.kind === "status") {
        // 5xx after the write: the page exists, the client hears of a failure.
        if (created) this.lostAnswers++;
        throw statusError(fault);
      }
      if (fault?.kind === "delay") {
        this.held.add(res);
        const timer = setTimeout(() => {
          this.held.delete(res);
          if (!res.destroyed) send(200, answer);
        }, fault.ms);
        res.on("close", () => {
          this.held.delete(res);
          clearTimeout(timer);
        });
        return;
      }
      send(200, answer);
    } catch (error) {
      if (error instanceof NotionHttpError) fail(error);
      else
        send(500, {
          object: "error",
          status: 500,
          code: "internal_server_error",
          message: String(error),
        });
    }
  }

  /** Rolling-window limit and Retry-After: a request too soon is counted and refused. */
  private checkRate(at: number): void {
    if (at < this.notBefore) {
      this.earlyRequests++;
      throw new NotionHttpError(429, "rate_limited", "Retry-After not respected.", {
        "retry-after": String(Math.ceil((this.notBefore - at) / 1000)),
      });
    }
    const limit = this.options.perSecond;
    if (limit === undefined) return;
    // Arrival times are read when this process gets to the request; a busy event loop (the
    // bench runs client and server in one process) can bring two arrivals a few ms closer
    // than they were sent, so the window allows 25 ms of that jitter.
    while (this.arrivals.length > 0 && (this.arrivals[0] as number) <= at - 1000 + JITTER_MS) {
      this.arrivals.shift();
    }
    this.arrivals.push(at);
    if (this.arrivals.length > limit) {
      this.rateViolations++;
      throw new NotionHttpError(429, "rate_limited", "Rate limit exceeded.", {
        "retry-after": "1",
      });
    }
  }

  private route(method: string, path: string, body: Record<string, unknown>): unknown {
    const s = this.store;
    const list = (results: unknown[], type: string) => listObject(results, null, type);
    const routes: [string, RegExp, (id: string) => unknown][] = [
      ["GET", /^\/v1\/users\/me$/, () => userObject()],
      ["POST", /^\/v1\/databases$/, () => s.createDatabase(body)],
      ["GET", /^\/v1\/databases\/([^/]+)$/, (id) => s.databaseObject(id)],
      ["GET", /^\/v1\/data_sources\/([^/]+)$/, (id) => s.dataSourceObject(id)],
      ["PATCH", /^\/v1\/data_sources\/([^/]+)$/, (id) => s.updateDataSource(id, body)],
      [
        "POST",
        /^\/v1\/data_sources\/([^/]+)\/query$/,
        (id) =>
          list(
            s.query(id, body).slice(0, Math.min(Number(body.page_size ?? 100), 100)),
            "page_or_data_source",
          ),
      ],
      ["POST", /^\/v1\/pages$/, () => s.createPage(body)],
      ["GET", /^\/v1\/pages\/([^/]+)$/, (id) => s.pageObject(id)],
      ["PATCH", /^\/v1\/pages\/([^/]+)$/, (id) => s.updatePage(id, body)],
      [
        "PATCH",
        /^\/v1\/blocks\/([^/]+)\/children$/,
        (id) => list(s.addChildren(id, (body.children as unknown[]) ?? []), "block"),
      ],
      [
        "GET",
        /^\/v1\/blocks\/([^/]+)\/children$/,
        (id) =>
          list(
            s.page(id).children.map((c) => s.blockObject(c)),
            "block",
          ),
      ],
      ["DELETE", /^\/v1\/blocks\/([^/]+)$/, (id) => s.deleteBlock(id)],
    ];
    for (const [verb, pattern, answer] of routes) {
      const hit = verb === method ? pattern.exec(path) : null;
      if (hit) return answer(hit[1] ?? "");
    }
    throw new NotionHttpError(400, "invalid_request_url", `Invalid request URL: ${method} ${path}`);
  }
}

function statusError(fault: Extract<NotionFault, { kind: "status" }>): NotionHttpError {
  const code = {
    400: "validation_error",
    429: "rate_limited",
    529: "service_overload",
    500: "internal_server_error",
    502: "bad_gateway",
    503: "service_unavailable",
    401: "unauthorized",
  }[fault.status];
  return new NotionHttpError(
    fault.status,
    code,
    fault.status === 429
      ? "You have been rate limited. Please try again in a few minutes."
      : "Injected fault.",
    fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {},
  );
}
