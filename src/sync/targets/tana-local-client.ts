import { SyncTargetError } from "./target.js";

/** A node as `/nodes/search` lists it (supertag-cli `types/local-api.ts`). */
export interface LocalNode {
  id: string;
  name: string;
  description?: string;
  tags: { id: string; name: string }[];
  tagIds: string[];
  inTrash: boolean;
}

/** A child as `/nodes/{id}/children` lists it (supertag-cli `types/local-api.ts`). */
export interface LocalChild {
  id: string;
  name: string;
  description?: string;
  inTrash: boolean;
}

export interface LocalTag {
  id: string;
  name: string;
}

export interface TanaLocalOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  /** Waits out a Retry-After (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
}

/** A `/nodes/search` query (operators `textContains`, `hasType`, `and`, `or`, ...). */
export type LocalQuery = { [key: string]: string | LocalQuery | LocalQuery[] };

/** 429 answers waited out in place before the caller hears of them. */
const RATE_RETRIES = 2;
/** The longest Retry-After waited out in place; a longer one goes to the caller. */
const MAX_WAIT_MS = 10_000;

/** The page size of listings: search pages through larger sets. */
export const LOCAL_PAGE = 100;

/**
 * Tana's Local API (the desktop app's REST server, default `http://localhost:8262`): reads,
 * updates, field values and trash, which the write-only Input API cannot do. Only there while
 * the app runs: a refused connection is "unavailable", never an error to stop on.
 */
export class TanaLocalClient {
  private readonly base: string;
  calls = 0;

  constructor(private readonly options: TanaLocalOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
  }

  /** `GET /health` (no auth): null when healthy, else why not. */
  async health(timeoutMs: number): Promise<string | null> {
    try {
      const r = await fetch(`${this.base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!r.ok) return `Tana Local API /health answered ${r.status}`;
      const json = (await r.json()) as { status?: string; nodeSpaceReady?: boolean };
      if (json.status !== "ok" || json.nodeSpaceReady === false) {
        return `Tana Local API not ready (${json.status ?? "no status"})`;
      }
      return null;
    } catch (error) {
      return `Tana Local API unreachable (is the desktop app running?): ${(error as Error).message}`;
    }
  }

  async workspaces(): Promise<{ id: string; name: string }[]> {
    return (await this.request("GET", "/workspaces")) as { id: string; name: string }[];
  }

  async listTags(workspaceId: string): Promise<LocalTag[]> {
    return (await this.request("GET", `/workspaces/${enc(workspaceId)}/tags`, undefined, {
      limit: "1000",
    })) as LocalTag[];
  }

  /** `POST /tags/{id}/fields`: adds a field to an existing tag, returns its id. */
  async addField(tagId: string, name: string, dataType: string): Promise<string> {
    const r = (await this.request("POST", `/tags/${enc(tagId)}/fields`, {
      name,
      dataType: dataType === "instance" ? "instance" : dataType,
      isMultiValue: dataType === "instance",
    })) as { fieldId: string };
    return r.fieldId;
  }

  /** One page of `/nodes/search` (the query in OpenAPI deepObject form). */
  async search(query: LocalQuery, page: { limit: number; offset: number }): Promise<LocalNode[]> {
    const params: Record<string, string> = {
      limit: String(page.limit),
      offset: String(page.offset),
    };
    deepObject("query", query, params);
    return (await this.request("GET", "/nodes/search", undefined, params)) as LocalNode[];
  }

  /** Every node the query finds, page after page. */
  async searchAll(query: LocalQuery): Promise<LocalNode[]> {
    const out: LocalNode[] = [];
    for (let offset = 0; ; offset += LOCAL_PAGE) {
      const page = await this.search(query, { limit: LOCAL_PAGE, offset });
      out.push(...page);
      if (page.length < LOCAL_PAGE) return out;
    }
  }

  /** `GET /nodes/{id}`: null when the node does not exist. */
  async readNode(id: string): Promise<{ name?: string; markdown?: string } | null> {
    try {
      return (await this.request("GET", `/nodes/${enc(id)}`)) as {
        name?: string;
        markdown?: string;
      };
    } catch (error) {
      if (error instanceof SyncTargetError && /\b404\b/.test(error.message)) return null;
      throw error;
    }
  }

  /** `GET /nodes/{id}/children`, every page: a node's children as the app holds them. */
  async children(id: string): Promise<LocalChild[]> {
    const out: LocalChild[] = [];
    for (let offset = 0; ; offset += LOCAL_PAGE) {
      const page = (await this.request("GET", `/nodes/${enc(id)}/children`, undefined, {
        limit: String(LOCAL_PAGE),
        offset: String(offset),
      })) as { children?: LocalChild[]; hasMore?: boolean };
      const children = Array.isArray(page.children) ? page.children : [];
      out.push(...children);
      if (page.hasMore !== true || children.length === 0) return out;
    }
  }

  async updateNode(id: string, update: { name?: string; description?: string }): Promise<void> {
    await this.request("POST", `/nodes/${enc(id)}/update`, update);
  }

  async setFieldContent(id: string, attributeId: string, content: string): Promise<void> {
    await this.request("POST", `/nodes/${enc(id)}/fields/${enc(attributeId)}/content`, { content });
  }

  async trash(id: string): Promise<void> {
    await this.request("POST", `/nodes/${enc(id)}/trash`, {});
  }

  /** A request; a 429 is waited out (its Retry-After, if short) and asked again, twice. */
  private async request(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    query?: Record<string, string>,
  ): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(method, path, body, query);
      } catch (error) {
        const wait = ((error as SyncTargetError).retryAfterSeconds ?? 0) * 1000;
        const limited = error instanceof SyncTargetError && error.kind === "rate_limited";
        if (!limited || attempt >= RATE_RETRIES || wait > MAX_WAIT_MS) throw error;
        await (this.options.sleep ?? sleep)(wait);
      }
    }
  }

  private async once(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    query?: Record<string, string>,
  ): Promise<unknown> {
    const url = `${this.base}${path}${query ? `?${new URLSearchParams(query).toString()}` : ""}`;
    let response: Response;
    try {
      this.calls++;
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.options.token}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new SyncTargetError(
        `Tana Local API unreachable: ${(error as Error).message}`,
        "unavailable",
        undefined,
        { cause: error },
      );
    }
    const text = await response.text();
    if (!response.ok) {
      const message = `Tana Local API ${method} ${path}: ${response.status} ${text.slice(0, 200)}`;
      if (response.status === 429) {
        const seconds = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
        throw new SyncTargetError(message, "rate_limited", Number.isFinite(seconds) ? seconds : 1);
      }
      const kind =
        response.status === 401 || response.status === 403
          ? "auth"
          : response.status >= 500
            ? "unavailable"
            : "validation";
      throw new SyncTargetError(message, kind);
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new SyncTargetError(`Tana Local API ${path}: not JSON`, "unavailable", undefined, {
        cause: error,
      });
    }
  }
}

const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `{and: [{hasType: "x"}]}` as `query[and][0][hasType]=x` (OpenAPI deepObject, exploded). */
function deepObject(prefix: string, value: unknown, out: Record<string, string>): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) deepObject(`${prefix}[${i}]`, v, out);
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) deepObject(`${prefix}[${k}]`, v, out);
  } else if (value !== undefined) {
    out[prefix] = String(value);
  }
}
