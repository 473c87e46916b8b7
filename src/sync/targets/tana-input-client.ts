import {
  bodyChars,
  nodeCount,
  type TanaCallBody,
  type TanaLimits,
} from "../../core/sync/tana-nodes.js";
import { SyncTargetError } from "./target.js";

/** A node the Input API created, as it answers (`{children: [{nodeId, name, ...}]}`). */
export interface TanaCreated {
  nodeId: string;
  name?: string;
  children?: TanaCreated[];
}

export interface TanaInputOptions {
  endpoint: string;
  token: string;
  callsPerSecond: number;
  limits: TanaLimits;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** The node a call targets does not exist (any more): its mapping is stale. */
export class TanaNodeGoneError extends SyncTargetError {
  constructor(
    message: string,
    readonly nodeId: string,
  ) {
    super(message, "validation");
  }
}

/** 429 answers retried in place (after waiting out Retry-After) before giving up. */
const RATE_RETRIES = 3;

/**
 * Tana's Input API (`addToNodeV2`): write-only, one call a second per token, at most 100 nodes
 * and 5000 characters a call. Calls are spaced from the end of the previous one, not its
 * start: Tana counts a call when it arrives, which is somewhere before its answer, so a call
 * sent a full interval after the last answer can never arrive early, however the network
 * jitters. A call over the limits is refused here, before Tana sees it.
 */
export class TanaInputClient {
  calls = 0;
  private notBefore = 0;
  private readonly intervalMs: number;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: TanaInputOptions) {
    this.intervalMs = 1000 / options.callsPerSecond;
    this.fetch = options.fetch ?? fetch;
  }

  /** Waits until the interval since the last answer (or a Retry-After) has passed. */
  private async turn(): Promise<void> {
    const wait = this.notBefore - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
  }

  /**
   * One call. `beforeSend` runs once the call's turn has come, just before each request
   * leaves (a journal of what may have reached Tana writes there).
   */
  async post(body: TanaCallBody, beforeSend?: () => void): Promise<TanaCreated[]> {
    const chars = bodyChars(body);
    const nodes = nodeCount(body.nodes);
    const { limits } = this.options;
    if (chars > limits.max_chars || nodes > limits.max_nodes) {
      throw new SyncTargetError(
        `Input API call of ${nodes} nodes and ${chars} characters is over the limits (${limits.max_nodes}, ${limits.max_chars})`,
        "validation",
      );
    }
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        await this.turn();
        beforeSend?.();
        this.calls++;
        response = await this.fetch(this.options.endpoint, {
          method: "POST",
          headers: {
            authorization: `Bearer ${this.options.token}`,
            "content-type": "application/json",
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (error) {
        this.notBefore = performance.now() + this.intervalMs;
        throw new SyncTargetError(
          `Tana Input API unreachable: ${(error as Error).message}`,
          "unavailable",
          undefined,
          { cause: error },
        );
      }
      const text = await response.text();
      this.notBefore = performance.now() + this.intervalMs;
      if (response.status === 429) {
        const seconds = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
        if (Number.isFinite(seconds) && seconds > 0) {
          this.notBefore = Math.max(this.notBefore, performance.now() + seconds * 1000);
        }
      }
      if (response.ok) return parseCreated(text);
      const detail = errorDetail(text);
      if (response.status === 429 && attempt < RATE_RETRIES) continue;
      throw failure(response, detail, body.targetNodeId);
    }
  }

  /** Whether the endpoint answers at all: a GET without the token, which creates nothing. */
  async reachable(timeoutMs: number): Promise<string | null> {
    try {
      await fetch(this.options.endpoint, { method: "GET", signal: AbortSignal.timeout(timeoutMs) });
      return null;
    } catch (error) {
      return `Tana Input API unreachable: ${(error as Error).message}`;
    }
  }
}

function parseCreated(text: string): TanaCreated[] {
  try {
    const json = JSON.parse(text) as { children?: TanaCreated[] };
    if (!Array.isArray(json.children)) throw new Error("no children");
    return json.children;
  } catch (error) {
    throw new SyncTargetError(
      `Tana Input API answered without the created nodes: ${(error as Error).message}`,
      "unavailable",
    );
  }
}

function errorDetail(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    const detail = json.error ?? json.message;
    if (typeof detail === "string") return detail.slice(0, 300);
  } catch {
    // Not JSON: the text itself, cut.
  }
  return text.slice(0, 300);
}

function failure(
  response: Response,
  detail: string,
  targetNodeId: string | undefined,
): SyncTargetError {
  const message = `Tana Input API ${response.status}: ${detail}`;
  const status = response.status;
  if (status === 429) {
    const seconds = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
    return new SyncTargetError(message, "rate_limited", Number.isFinite(seconds) ? seconds : 1);
  }
  if (status === 401 || status === 403) return new SyncTargetError(message, "auth");
  if (status === 404 && targetNodeId !== undefined) {
    return new TanaNodeGoneError(message, targetNodeId);
  }
  if (status >= 400 && status < 500) return new SyncTargetError(message, "validation");
  return new SyncTargetError(message, "unavailable");
}
