import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BareRepo, isoNow, type Person, type TreeEntry, ZERO_SHA } from "./bare-repo.js";
import { type LabelState, type PullState, Shapes } from "./fake-github-shapes.js";
import { GitHubOpenApi, type Operation } from "./openapi.js";

/**
 * A GitHub-compatible HTTP server for tests: the REST operations engram uses, backed by a
 * real bare git repository (objects, trees, commits, refs, merges) with pull requests,
 * labels and reviewers kept in memory. Every request and response is validated against
 * GitHub's OpenAPI description (test/fixtures/github-openapi.json); a mismatch is recorded
 * in `violations` and answered 422 (request) or 500 (response), so tests fail loudly.
 */

export type Fault =
  /** pulls/create: another writer opened the same PR first; the fake opens it, then says 422. */
  | { kind: "already-exists" }
  | { kind: "secondary-rate-limit"; retryAfter?: number }
  | { kind: "primary-rate-limit"; status?: 403 | 429; resetInSeconds?: number }
  | { kind: "server-error"; status?: 500 | 502 | 503 }
  | { kind: "actions-not-permitted" }
  /** Another writer acts just before this request is handled; then it proceeds normally. */
  | { kind: "concurrent"; act: (fake: FakeGitHub) => void };

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

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, unknown>[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Json = Record<string, unknown>;
type Handler = (ctx: Context) => Reply;

interface Context {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Json;
}

const DOCS = "https://docs.github.com/rest";
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const FAKE_PERSON = { name: "GitHub", email: "noreply@github.com" };

/** The shared OpenAPI description, compiled once per test process. */
let openApi: GitHubOpenApi | undefined;

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
  private readonly pulls: PullState[] = [];
  private readonly labels = new Map<string, LabelState>();
  private readonly handlers: Record<string, Handler>;
  private nextNumber = 1;
  private nextId = 1000;
  private server: Server | undefined;
  private readonly shapes: Shapes;

  constructor(options: FakeGitHubOptions) {
    this.owner = options.owner ?? "octo-org";
    this.repo = options.repo ?? "memory-repo";
    this.login = options.login ?? "engram-bot";
    this.token = options.token;
    this.defaultBranch = options.defaultBranch ?? "main";
    this.git = BareRepo.init(options.dir, this.defaultBranch);
    this.shapes = new Shapes({
      base: "",
      owner: this.owner,
      repo: this.repo,
      login: this.login,
      defaultBranch: this.defaultBranch,
    });
    openApi ??= new GitHubOpenApi();
    this.api = openApi;
    this.handlers = {
      "repos/get": () => ({ status: 200, body: this.shapes.fullRepository(this.openPulls()) }),
      "git/get-ref": (c) => this.getRef(c),
      "git/get-commit": (c) => this.getCommit(c),
      "git/get-tree": (c) => this.getTree(c),
      "git/create-blob": (c) => this.createBlob(c),
      "git/create-tree": (c) => this.createTree(c),
      "git/create-commit": (c) => this.createCommit(c),
      "git/create-ref": (c) => this.createRef(c),
      "git/update-ref": (c) => this.updateRef(c),
      "pulls/list": (c) => this.listPulls(c),
      "pulls/get": (c) => ({ status: 200, body: this.pullJson(this.pullOf(c), true) }),
      "pulls/create": (c) => this.createPull(c),
      "pulls/update": (c) => this.updatePull(c),
      "pulls/merge": (c) => this.mergePull(c),
      "pulls/request-reviewers": (c) => this.requestReviewers(c),
      "issues/add-labels": (c) => this.addLabels(c),
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
    this.shapes.site.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
    return this.shapes.site.base;
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
    const pr = this.pulls.find((p) => p.number === number);
    if (pr === undefined) return undefined;
    this.refresh(pr);
    return structuredClone(pr);
  }

  allPulls(): PullSnapshot[] {
    return this.pulls.map((pr) => this.pull(pr.number)!);
  }

  /** The sha of `refs/heads/<branch>`, or null. */
  branchSha(branch: string): string | null {
    return this.git.refSha(`refs/heads/${branch}`);
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
    this.applyEdits(
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

  private openPulls(): number {
    return this.pulls.filter((p) => p.state === "open").length;
  }

  private labelsOf(pr: PullState): LabelState[] {
    return pr.labels.map((name) => this.labels.get(name.toLowerCase())!);
  }

  private pullJson(pr: PullState, full: boolean): Record<string, unknown> {
    const baseSha = this.branchSha(pr.base) ?? ZERO_SHA;
    const facts = { baseSha, labels: this.labelsOf(pr), openPulls: this.openPulls() };
    if (!full) return this.shapes.pullJson(pr, facts);
    const known = baseSha !== ZERO_SHA;
    return this.shapes.pullJson(pr, facts, {
      stats: known
        ? this.git.diffStats(baseSha, pr.headSha)
        : { additions: 0, deletions: 0, files: 0, commits: 0 },
      clean: pr.state === "open" && known && this.git.mergeTree(baseSha, pr.headSha) !== null,
      rebaseable: known && this.git.isAncestor(baseSha, pr.headSha),
    });
  }

  // --- HTTP plumbing -------------------------------------------------------------------

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
    else if (fault !== undefined) return this.faultReply(fault, (body ?? {}) as Json);
    if (this.git.isEmpty() && op.operationId.startsWith("git/get-")) {
      throw new HttpError(409, "Git Repository is empty.");
    }
    return this.handlers[op.operationId]!({
      params,
      query: url.searchParams,
      body: (body ?? {}) as Json,
    });
  }

  private faultReply(fault: Exclude<Fault, { kind: "concurrent" }>, body: Json): Reply {
    switch (fault.kind) {
      case "already-exists": {
        const head = stripOwner(String(body.head));
        const base = String(body.base);
        if (!this.pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
          this.openPull({
            head,
            base,
            title: "Opened by another writer",
            body: null,
            draft: false,
          });
        }
        throw new HttpError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: `A pull request already exists for ${this.owner}:${head}.`,
          },
        ]);
      }
      case "secondary-rate-limit":
        throw new HttpError(
          403,
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
          undefined,
          { "retry-after": String(fault.retryAfter ?? 60) },
        );
      case "primary-rate-limit": {
        const reset = Math.floor(Date.now() / 1000) + (fault.resetInSeconds ?? 60);
        throw new HttpError(
          fault.status ?? 403,
          "API rate limit exceeded for installation ID 1.",
          undefined,
          {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "5000",
            "x-ratelimit-reset": String(reset),
            "x-ratelimit-resource": "core",
          },
        );
      }
      case "server-error":
        throw new HttpError(fault.status ?? 502, "Server Error");
      case "actions-not-permitted":
        throw new HttpError(
          403,
          "GitHub Actions is not permitted to create or approve pull requests.",
        );
    }
  }

  // --- git data --------------------------------------------------------------------------

  private getRef(c: Context): Reply {
    const ref = `refs/${c.params.ref}`;
    const sha = this.git.refSha(ref);
    if (sha === null) throw new HttpError(404, "Not Found");
    return {
      status: 200,
      body: this.shapes.refJson(ref, sha, this.git.objectType(sha) ?? "commit"),
    };
  }

  private getCommit(c: Context): Reply {
    const commit = this.git.readCommit(c.params.commit_sha!);
    if (commit === null) throw new HttpError(404, "Not Found");
    return { status: 200, body: this.shapes.commitJson(commit) };
  }

  private getTree(c: Context): Reply {
    const sha = c.params.tree_sha!;
    if (this.git.objectType(sha) !== "tree") throw new HttpError(404, "Not Found");
    const entries = c.query.has("recursive")
      ? [...this.git.flatten(sha)].map(([path, e]) => ({ path, ...e }))
      : this.git.listTree(sha);
    return { status: 200, body: this.shapes.treeJson(sha, entries) };
  }

  private createBlob(c: Context): Reply {
    const encoding = String(c.body.encoding ?? "utf-8");
    if (encoding !== "utf-8" && encoding !== "utf8" && encoding !== "base64") {
      throw new HttpError(422, `encoding must be utf-8 or base64, not ${encoding}`);
    }
    const content = Buffer.from(String(c.body.content), encoding === "base64" ? "base64" : "utf8");
    const [sha] = this.git.writeBlobs([content]);
    return {
      status: 201,
      body: { sha: sha!, url: this.shapes.apiUrl(`git/blobs/${sha}`) },
      headers: { location: this.shapes.apiUrl(`git/blobs/${sha}`) },
    };
  }

  private createTree(c: Context): Reply {
    const baseTree = c.body.base_tree as string | undefined;
    let entries = new Map<string, TreeEntry>();
    if (baseTree !== undefined) {
      if (this.git.objectType(baseTree) !== "tree")
        throw new HttpError(422, "base_tree is not a valid tree oid");
      entries = this.git.flatten(baseTree);
    }
    const edits: { path: string; content?: string | null; entry?: TreeEntry }[] = [];
    for (const [i, item] of (c.body.tree as Json[]).entries()) {
      const path = item.path;
      if (
        typeof path !== "string" ||
        path === "" ||
        path.startsWith("/") ||
        path.endsWith("/") ||
        path.split("/").some((s) => s === "" || s === "." || s === ".." || s === ".git")
      ) {
        throw new HttpError(422, `tree.path contains a malformed path component`, [
          { resource: "Tree", field: `tree[${i}].path`, code: "invalid" },
        ]);
      }
      const hasSha = "sha" in item;
      const hasContent = "content" in item;
      if (hasSha && hasContent) {
        throw new HttpError(
          422,
          "Must supply either tree.sha or tree.content. Request will be rejected if both are present.",
        );
      }
      if (!hasSha && !hasContent)
        throw new HttpError(422, "Must supply either tree.sha or tree.content.");
      const mode = String(item.mode ?? "");
      const type = String(item.type ?? "");
      const expectedType = mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob";
      if (type !== expectedType)
        throw new HttpError(422, `tree.type ${type} does not match mode ${mode}`);
      if (hasContent) {
        if (type !== "blob") throw new HttpError(422, "tree.content requires type blob");
        edits.push({ path, content: String(item.content) });
      } else if (item.sha === null) {
        edits.push({ path, content: null });
      } else {
        const sha = String(item.sha);
        if (type !== "commit" && this.git.objectType(sha) !== type) {
          throw new HttpError(422, `tree.sha ${sha} is not a valid ${type}`);
        }
        edits.push({ path, entry: { mode, type: type as TreeEntry["type"], sha } });
      }
    }
    this.applyEdits(entries, edits);
    const sha = this.git.writeTree(entries);
    return {
      status: 201,
      body: this.shapes.treeJson(sha, this.git.listTree(sha)),
      headers: { location: this.shapes.apiUrl(`git/trees/${sha}`) },
    };
  }

  /** Applies path edits to a flattened tree: inline content, an entry, or null to delete. */
  private applyEdits(
    entries: Map<string, TreeEntry>,
    edits: readonly { path: string; content?: string | null; entry?: TreeEntry }[],
  ): void {
    const contents = edits.filter((e) => typeof e.content === "string");
    const shas = this.git.writeBlobs(contents.map((e) => Buffer.from(e.content as string, "utf8")));
    const blobOf = new Map(contents.map((e, i) => [e, shas[i]!]));
    for (const edit of edits) {
      // A path replaces whatever was there, file or folder.
      for (const existing of [...entries.keys()]) {
        if (existing === edit.path || existing.startsWith(`${edit.path}/`))
          entries.delete(existing);
      }
      const blob = blobOf.get(edit);
      if (blob !== undefined) entries.set(edit.path, { mode: "100644", type: "blob", sha: blob });
      else if (edit.entry?.type === "tree") {
        for (const [path, e] of this.git.flatten(edit.entry.sha))
          entries.set(`${edit.path}/${path}`, e);
      } else if (edit.entry !== undefined) entries.set(edit.path, edit.entry);
    }
  }

  private createCommit(c: Context): Reply {
    const tree = String(c.body.tree);
    if (this.git.objectType(tree) !== "tree") throw new HttpError(422, "Tree SHA does not exist");
    const parents = ((c.body.parents as string[] | undefined) ?? []).map(String);
    for (const parent of parents) {
      if (this.git.objectType(parent) !== "commit") {
        throw new HttpError(422, "Parent SHA does not exist or is not a commit object");
      }
    }
    const now = isoNow();
    const author = personOf(c.body.author as Json | undefined, {
      name: this.login,
      email: `${this.login}@users.noreply.github.com`,
      date: now,
    });
    const committer = personOf(c.body.committer as Json | undefined, author);
    const sha = this.git.commitTree(tree, parents, String(c.body.message), author, committer);
    return {
      status: 201,
      body: this.shapes.commitJson(this.git.readCommit(sha)!),
      headers: { location: this.shapes.apiUrl(`git/commits/${sha}`) },
    };
  }

  private createRef(c: Context): Reply {
    const ref = String(c.body.ref);
    const sha = String(c.body.sha);
    if (!/^refs\/[^/]+\/.+/.test(ref) || ref.split("/").some((s) => s === "" || s === "..")) {
      throw new HttpError(422, "Reference name is not valid");
    }
    if (this.git.objectType(sha) === null) throw new HttpError(422, "Object does not exist");
    if (this.git.refSha(ref) !== null || !this.git.updateRef(ref, sha, ZERO_SHA)) {
      throw new HttpError(422, "Reference already exists");
    }
    this.afterRefMove(ref);
    return {
      status: 201,
      body: this.shapes.refJson(ref, sha, this.git.objectType(sha) ?? "commit"),
      headers: { location: this.shapes.apiUrl(`git/${ref}`) },
    };
  }

  private updateRef(c: Context): Reply {
    const ref = `refs/${c.params.ref}`;
    const sha = String(c.body.sha);
    const old = this.git.refSha(ref);
    if (old === null) throw new HttpError(422, "Reference does not exist");
    if (this.git.objectType(sha) !== "commit") throw new HttpError(422, "Object does not exist");
    if (c.body.force !== true && !this.git.isAncestor(old, sha)) {
      throw new HttpError(422, "Update is not a fast forward");
    }
    if (!this.git.updateRef(ref, sha, old)) throw new HttpError(422, "Reference cannot be updated");
    this.afterRefMove(ref);
    return {
      status: 200,
      body: this.shapes.refJson(ref, sha, this.git.objectType(sha) ?? "commit"),
    };
  }

  /** GitHub closes an open PR whose head is moved to a commit its base already has. */
  private afterRefMove(ref: string): void {
    for (const pr of this.pulls)
      if (pr.state === "open" && `refs/heads/${pr.head}` === ref) this.refresh(pr);
  }

  // --- pull requests ---------------------------------------------------------------------

  /**
   * Brings an open PR up to date with the repository, as GitHub does on push: a head moved
   * into its base (or deleted) closes it; a base that came to contain the unchanged head
   * marks it merged.
   */
  private refresh(pr: PullState): void {
    if (pr.state !== "open") return;
    const head = this.branchSha(pr.head);
    const base = this.branchSha(pr.base);
    const now = isoNow();
    if (head === null || base === null) {
      Object.assign(pr, { state: "closed", closedAt: now, updatedAt: now });
      return;
    }
    const moved = head !== pr.headSha;
    pr.headSha = head;
    if (!this.git.isAncestor(head, base)) return;
    if (moved) Object.assign(pr, { state: "closed", closedAt: now, updatedAt: now });
    else
      Object.assign(pr, {
        state: "closed",
        closedAt: now,
        updatedAt: now,
        merged: true,
        mergedAt: now,
        mergeCommitSha: head,
      });
  }

  private pullOf(c: Context): PullState {
    const pr = this.pulls.find(
      (p) => p.number === Number(c.params.pull_number ?? c.params.issue_number),
    );
    if (pr === undefined) throw new HttpError(404, "Not Found");
    this.refresh(pr);
    return pr;
  }

  private listPulls(c: Context): Reply {
    for (const pr of this.pulls) this.refresh(pr);
    const state = c.query.get("state") ?? "open";
    const headFilter = c.query.get("head");
    const baseFilter = c.query.get("base");
    let list = this.pulls.filter((p) => state === "all" || p.state === state);
    // GitHub ignores a head filter without the `owner:` part: it lists every PR.
    if (headFilter?.includes(":")) {
      const [owner, branch] = [
        headFilter.slice(0, headFilter.indexOf(":")),
        headFilter.slice(headFilter.indexOf(":") + 1),
      ];
      list = list.filter((p) => owner === this.owner && p.head === branch);
    }
    if (baseFilter !== null) list = list.filter((p) => p.base === baseFilter);
    const sort = c.query.get("sort") ?? "created";
    const direction = c.query.get("direction") ?? (sort === "created" ? "desc" : "desc");
    const key = (p: PullState) =>
      sort === "updated"
        ? `${p.updatedAt}#${String(p.number).padStart(9, "0")}`
        : String(p.number).padStart(9, "0");
    list = [...list].sort((a, b) => key(a).localeCompare(key(b)) * (direction === "asc" ? 1 : -1));
    const perPage = Math.min(Math.max(Number(c.query.get("per_page") ?? 30), 1), 100);
    const page = Math.max(Number(c.query.get("page") ?? 1), 1);
    const pages = Math.max(Math.ceil(list.length / perPage), 1);
    const slice = list.slice((page - 1) * perPage, page * perPage);
    const headers: Record<string, string> = {};
    if (page < pages) {
      const link = (n: number) => {
        const q = new URLSearchParams(c.query);
        q.set("page", String(n));
        q.set("per_page", String(perPage));
        return `<${this.shapes.apiUrl(`pulls?${q}`)}>`;
      };
      headers.link = `${link(page + 1)}; rel="next", ${link(pages)}; rel="last"`;
    }
    return { status: 200, body: slice.map((p) => this.pullJson(p, false)), headers };
  }

  private createPull(c: Context): Reply {
    const headInput = String(c.body.head);
    if (headInput.includes(":") && headInput.slice(0, headInput.indexOf(":")) !== this.owner) {
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "head", code: "invalid" },
      ]);
    }
    const head = stripOwner(headInput);
    const base = String(c.body.base);
    const headSha = this.branchSha(head);
    const baseSha = this.branchSha(base);
    if (headSha === null)
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "head", code: "invalid" },
      ]);
    if (baseSha === null)
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "base", code: "invalid" },
      ]);
    for (const pr of this.pulls) this.refresh(pr);
    if (this.pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
      throw new HttpError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `A pull request already exists for ${this.owner}:${head}.`,
        },
      ]);
    }
    if (this.git.isAncestor(headSha, baseSha)) {
      throw new HttpError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `No commits between ${base} and ${head}`,
        },
      ]);
    }
    const pr = this.openPull({
      head,
      base,
      title: String(c.body.title ?? head),
      body: typeof c.body.body === "string" ? c.body.body : null,
      draft: c.body.draft === true,
    });
    if (typeof c.body.maintainer_can_modify === "boolean")
      pr.maintainerCanModify = c.body.maintainer_can_modify;
    return {
      status: 201,
      body: this.pullJson(pr, true),
      headers: { location: this.shapes.apiUrl(`pulls/${pr.number}`) },
    };
  }

  private openPull(init: {
    head: string;
    base: string;
    title: string;
    body: string | null;
    draft: boolean;
  }): PullState {
    const now = isoNow();
    const pr: PullState = {
      ...init,
      number: this.nextNumber++,
      id: this.nextId++,
      headSha: this.branchSha(init.head) ?? ZERO_SHA,
      state: "open",
      merged: false,
      mergedAt: null,
      mergeCommitSha: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
      labels: [],
      reviewers: [],
      teams: [],
      maintainerCanModify: false,
    };
    this.pulls.push(pr);
    return pr;
  }

  private updatePull(c: Context): Reply {
    const pr = this.pullOf(c);
    const b = c.body;
    if (typeof b.base === "string" && this.branchSha(b.base) === null) {
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "base", code: "invalid" },
      ]);
    }
    if (b.state === "open" && pr.state === "closed") {
      if (pr.merged)
        throw new HttpError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: "state cannot be changed. The pull request has already been merged.",
          },
        ]);
      if (this.branchSha(pr.head) === null)
        throw new HttpError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: "state cannot be changed. The head branch was deleted.",
          },
        ]);
    }
    const now = isoNow();
    if (typeof b.title === "string") pr.title = b.title;
    if (typeof b.body === "string") pr.body = b.body;
    if (typeof b.base === "string") pr.base = b.base;
    if (typeof b.maintainer_can_modify === "boolean")
      pr.maintainerCanModify = b.maintainer_can_modify;
    if (b.state === "closed" && pr.state === "open")
      Object.assign(pr, { state: "closed", closedAt: now });
    if (b.state === "open" && pr.state === "closed") {
      Object.assign(pr, { state: "open", closedAt: null, headSha: this.branchSha(pr.head)! });
    }
    pr.updatedAt = now;
    return { status: 200, body: this.pullJson(pr, true) };
  }

  private mergePull(c: Context): Reply {
    const pr = this.pullOf(c);
    if (pr.state !== "open") throw new HttpError(405, "Pull Request is not mergeable");
    if (pr.draft) throw new HttpError(405, "Pull Request is still a draft");
    const head = pr.headSha;
    if (typeof c.body.sha === "string" && c.body.sha !== head) {
      throw new HttpError(409, "Head branch was modified. Review and try the merge again.");
    }
    const base = this.branchSha(pr.base)!;
    const method = String(c.body.merge_method ?? "merge");
    const now = isoNow();
    const person: Person = {
      name: this.login,
      email: `${this.login}@users.noreply.github.com`,
      date: now,
    };
    const committer: Person = { ...FAKE_PERSON, date: now };
    let sha: string;
    if (method === "rebase") {
      // Only the fast-forward case: enough for a memory branch built on its base.
      if (!this.git.isAncestor(base, head))
        throw new HttpError(405, "This branch can't be rebased");
      sha = head;
    } else {
      const tree = this.git.mergeTree(base, head);
      if (tree === null) throw new HttpError(405, "Pull Request is not mergeable");
      const title = typeof c.body.commit_title === "string" ? c.body.commit_title : null;
      const message = typeof c.body.commit_message === "string" ? c.body.commit_message : pr.title;
      sha =
        method === "squash"
          ? this.git.commitTree(
              tree,
              [base],
              `${title ?? `${pr.title} (#${pr.number})`}\n\n${message}\n`,
              person,
              committer,
            )
          : this.git.commitTree(
              tree,
              [base, head],
              `${title ?? `Merge pull request #${pr.number} from ${this.owner}/${pr.head}`}\n\n${message}\n`,
              person,
              committer,
            );
    }
    if (!this.git.updateRef(`refs/heads/${pr.base}`, sha, base)) {
      throw new HttpError(409, "Base branch was modified. Review and try the merge again.");
    }
    Object.assign(pr, {
      state: "closed",
      merged: true,
      mergedAt: now,
      closedAt: now,
      updatedAt: now,
      mergeCommitSha: sha,
    });
    return {
      status: 200,
      body: { sha, merged: true, message: "Pull Request successfully merged" },
    };
  }

  private requestReviewers(c: Context): Reply {
    const pr = this.pullOf(c);
    const reviewers = ((c.body.reviewers as string[] | undefined) ?? []).map(String);
    const teams = ((c.body.team_reviewers as string[] | undefined) ?? []).map(String);
    if (reviewers.some((r) => r.toLowerCase() === this.login.toLowerCase())) {
      throw new HttpError(422, "Review cannot be requested from pull request author.");
    }
    for (const r of reviewers) if (!pr.reviewers.includes(r)) pr.reviewers.push(r);
    for (const t of teams) if (!pr.teams.includes(t)) pr.teams.push(t);
    pr.updatedAt = isoNow();
    return { status: 201, body: this.pullJson(pr, false) };
  }

  private addLabels(c: Context): Reply {
    const pr = this.pullOf(c);
    const names = ((c.body.labels as unknown[] | undefined) ?? []).map((l) =>
      typeof l === "string" ? l : String((l as Json).name),
    );
    for (const name of names) {
      const key = name.toLowerCase();
      if (!this.labels.has(key)) this.labels.set(key, { id: this.nextId++, name, color: "ededed" });
      const label = this.labels.get(key)!;
      if (!pr.labels.some((l) => l.toLowerCase() === key)) pr.labels.push(label.name);
    }
    pr.updatedAt = isoNow();
    return { status: 200, body: this.labelsOf(pr).map((l) => this.shapes.labelJson(l)) };
  }
}

function stripOwner(head: string): string {
  const colon = head.indexOf(":");
  return colon < 0 ? head : head.slice(colon + 1);
}

function personOf(value: Json | undefined, fallback: Person): Person {
  if (value === undefined) return fallback;
  return {
    name: String(value.name ?? fallback.name),
    email: String(value.email ?? fallback.email),
    date: typeof value.date === "string" ? value.date : fallback.date,
  };
}

function errorReply(err: HttpError): Reply {
  const documentation_url = DOCS;
  const body =
    err.status === 422
      ? {
          message: err.message,
          ...(err.errors && { errors: err.errors }),
          documentation_url,
          status: "422",
        }
      : { message: err.message, documentation_url, status: String(err.status) };
  return { status: err.status, body, headers: err.headers };
}

function rateHeaders(): Record<string, string> {
  return {
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-used": "1",
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
    "x-ratelimit-resource": "core",
    "x-github-api-version-selected": "2022-11-28",
  };
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    ...(body !== undefined && { "content-type": "application/json; charset=utf-8" }),
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
