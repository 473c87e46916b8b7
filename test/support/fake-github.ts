import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type BareRepo, isoNow, type TreeEntry } from "./bare-repo.js";
import { type FaultOf, faultReply } from "./fake-github-faults.js";
import { gitDataHandlers } from "./fake-github-git.js";
import {
  DOCS,
  errorReply,
  FAKE_PERSON,
  type Handler,
  HttpError,
  type Json,
  type Reply,
  rateHeaders,
  readBody,
  send,
} from "./fake-github-http.js";
import { issueHandlers } from "./fake-github-issues.js";
import { pullHandlers } from "./fake-github-pulls.js";
import type { PullState } from "./fake-github-shapes.js";
import { GitHubStore } from "./fake-github-store.js";
import { GitHubOpenApi, type Operation } from "./openapi.js";

/**
 * A GitHub-compatible HTTP server for tests: the REST operations engram uses, backed by a
 * real bare git repository (objects, trees, commits, refs, merges) with pull requests, issues,
 * labels and reviewers kept in memory. Every request and response is validated against
 * GitHub's OpenAPI description (test/fixtures/github-openapi.json); a mismatch is recorded
 * in `violations` and answered 422 (request) or 500 (response), so tests fail loudly.
 */

export type Fault = FaultOf<FakeGitHub>;

export interface Violation {
  operationId: string;
  method: string;
  path: string;
  where: "request" | "response" | "route";
  status?: number;
  problems: string[];
}

export interface RequestRecord {
  operationId: string;
  method: string;
  path: string;
  /** The query string without its `?` (empty when none). */
  query: string;
  status: number;
}

export interface FakeGitHubOptions {
  /** An empty folder for the bare repository. */
  dir: string;
  owner?: string;
  repo?: string;
  /** The login of the token's user (the PR author). */
  login?: string;
  /** When set, requests must carry it (`Authorization: token …` or `Bearer …`). */
  token?: string;
  defaultBranch?: string;
}

/** A snapshot of a pull request, for assertions. */
export type PullSnapshot = Readonly<Omit<PullState, "labels" | "reviewers" | "teams">> & {
  labels: readonly string[];
  reviewers: readonly string[];
  teams: readonly string[];
};

/** The shared OpenAPI description, compiled once per test process. */
let openApi: GitHubOpenApi | undefined;

/**
 * The server: routes each request through the OpenAPI checks, the injected faults and the
 * handlers of the Git Data API (fake-github-git.ts), of pull requests (fake-github-pulls.ts)
 * and of issues (fake-github-issues.ts).
 */
export class FakeGitHub {
  readonly owner: string;
  readonly repo: string;
  readonly login: string;
  readonly git: BareRepo;
  readonly defaultBranch: string;
  readonly violations: Violation[] = [];
  readonly requests: RequestRecord[] = [];
  private readonly token: string | undefined;
  private readonly api: GitHubOpenApi;
  private readonly faults = new Map<string, Fault[]>();
  private readonly store: GitHubStore;
  private readonly handlers: Record<string, Handler>;
  private server: Server | undefined;

  constructor(options: FakeGitHubOptions) {
    this.store = new GitHubStore(options);
    this.owner = this.store.owner;
    this.repo = this.store.repo;
    this.login = this.store.login;
    this.git = this.store.git;
    this.defaultBranch = this.store.defaultBranch;
    this.token = options.token;
    openApi ??= new GitHubOpenApi();
    this.api = openApi;
    const store = this.store;
    this.handlers = {
      "repos/get": () => ({ status: 200, body: store.shapes.fullRepository(store.openPulls()) }),
      ...gitDataHandlers(store),
      ...pullHandlers(store),
      ...issueHandlers(store),
    };
  }

  /** Starts listening on 127.0.0.1 (a free port); returns the API base URL. */
  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ message: `fake GitHub crashed: ${String(err)}` }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    this.server = server;
    this.store.shapes.site.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return this.store.shapes.site.base;
  }

  /** Queues faults: the next requests of `operationId` get them, one each, in order. */
  inject(operationId: string, ...faults: Fault[]): void {
    if (!this.api.operations.some((op) => op.operationId === operationId)) {
      throw new Error(`inject: no operation ${operationId} in the fixture`);
    }
    this.faults.set(operationId, [...(this.faults.get(operationId) ?? []), ...faults]);
  }

  /** Requests received for one operation, or for all. */
  calls(operationId?: string): number {
    return this.requests.filter((r) => operationId === undefined || r.operationId === operationId)
      .length;
  }

  /** Requests per operation id. */
  callCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.requests) out[r.operationId] = (out[r.operationId] ?? 0) + 1;
    return out;
  }

  resetCounts(): void {
    this.requests.length = 0;
  }

  pull(number: number): PullSnapshot | undefined {
    const pr = this.store.pulls.find((p) => p.number === number);
    if (pr === undefined) return undefined;
    this.store.refresh(pr);
    return structuredClone(pr);
  }

  allPulls(): PullSnapshot[] {
    return this.store.pulls.map((pr) => this.pull(pr.number)!);
  }

  /** The sha of `refs/heads/<branch>`, or null. */
  branchSha(branch: string): string | null {
    return this.store.branchSha(branch);
  }

  /** Commits `files` (null deletes) on top of `branch` (created when missing); returns the sha. */
  seed(
    files: Record<string, string | null>,
    branch = this.defaultBranch,
    message = "seed",
  ): string {
    const parent = this.branchSha(branch);
    const entries =
      parent === null
        ? new Map<string, TreeEntry>()
        : this.git.flatten(this.git.readCommit(parent)!.tree);
    this.store.applyEdits(
      entries,
      Object.entries(files).map(([path, content]) => ({ path, content })),
    );
    const person = { ...FAKE_PERSON, date: isoNow() };
    const sha = this.git.commitTree(
      this.git.writeTree(entries),
      parent === null ? [] : [parent],
      message,
      person,
      person,
    );
    this.git.git(["update-ref", `refs/heads/${branch}`, sha]);
    return sha;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", this.url);
    const raw = await readBody(req);
    const route = this.api.match(method, url.pathname);
    if (route === null) {
      this.violations.push({
        operationId: "(none)",
        method,
        path: url.pathname,
        where: "route",
        status: 404,
        problems: ["no operation of the OpenAPI fixture matches this request"],
      });
      return send(res, 404, { message: "Not Found", documentation_url: DOCS });
    }
    const { op, params } = route;
    let reply: Reply;
    try {
      reply = this.dispatch(op, params, url, raw, req);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      reply = errorReply(err);
    }
    const problems = this.api.checkResponse(op, reply.status, reply.body);
    if (problems.length > 0) {
      this.violations.push({
        operationId: op.operationId,
        method,
        path: url.pathname,
        where: "response",
        status: reply.status,
        problems,
      });
      reply = {
        status: 500,
        body: {
          message: `fake GitHub: response does not match the OpenAPI description:\n${problems.join("\n")}`,
        },
      };
    }
    this.requests.push({
      operationId: op.operationId,
      method,
      path: url.pathname,
      query: url.search.slice(1),
      status: reply.status,
    });
    const headers = { ...rateHeaders(), ...reply.headers };
    send(res, reply.status, reply.body, headers);
  }

  private dispatch(
    op: Operation,
    params: Record<string, string>,
    url: URL,
    raw: Buffer,
    req: IncomingMessage,
  ): Reply {
    if (this.token !== undefined) {
      const auth = req.headers.authorization ?? "";
      if (
        auth !== `token ${this.token}` &&
        auth !== `Bearer ${this.token}` &&
        auth !== `bearer ${this.token}`
      ) {
        throw new HttpError(401, "Bad credentials");
      }
    }
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        throw new HttpError(400, "Problems parsing JSON");
      }
    }
    const problems = [
      ...this.api.checkQuery(op, url.searchParams),
      ...this.api.checkRequest(op, body),
    ];
    if (problems.length > 0) {
      this.violations.push({
        operationId: op.operationId,
        method: op.method,
        path: url.pathname,
        where: "request",
        problems,
      });
      throw new HttpError(422, `Invalid request.\n\n${problems.join("\n")}`);
    }
    if (params.owner !== this.owner || params.repo !== this.repo)
      throw new HttpError(404, "Not Found");
    const fault = this.faults.get(op.operationId)?.shift();
    if (fault?.kind === "concurrent") fault.act(this);
    else if (fault !== undefined) return faultReply(this.store, fault, (body ?? {}) as Json);
    if (this.git.isEmpty() && op.operationId.startsWith("git/get-")) {
      throw new HttpError(409, "Git Repository is empty.");
    }
    return this.handlers[op.operationId]!({
      params,
      query: url.searchParams,
      body: (body ?? {}) as Json,
    });
  }
}
