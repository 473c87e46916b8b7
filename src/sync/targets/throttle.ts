/** Rate-limit headers seen on the last response, for the health report. */
export interface RateHeaders {
  limit: number | null;
  remaining: number | null;
  reset: string | null;
}

const number = (v: string | null) => (v === null || v === "" ? null : Number(v));

/**
 * A `fetch` that starts requests at most `perSecond` times a second, evenly spaced, and holds
 * every request after a 429 or 529 until its `Retry-After` has passed. Shared by all requests
 * of one target, so the official client's own retries are paced too.
 */
export class ThrottledFetch {
  private nextStart = 0;
  private notBefore = 0;
  private chain: Promise<void> = Promise.resolve();
  rate: RateHeaders = { limit: null, remaining: null, reset: null };
  requests = 0;
  private readonly spacingMs: number;

  constructor(
    perSecond: number,
    private readonly inner: typeof fetch = fetch,
  ) {
    // A margin of 5% keeps timer jitter from ever packing one request too many into a second.
    this.spacingMs = (1000 / perSecond) * 1.05;
  }

  readonly fetch = async (url: string, init?: RequestInit): Promise<Response> => {
    await this.slot();
    this.requests++;
    const response = await this.inner(url, init);
    const h = response.headers;
    if (h.get("x-ratelimit-limit") !== null || h.get("x-ratelimit-remaining") !== null) {
      this.rate = {
        limit: number(h.get("x-ratelimit-limit")),
        remaining: number(h.get("x-ratelimit-remaining")),
        reset: h.get("x-ratelimit-reset"),
      };
    }
    if (response.status === 429 || response.status === 529) {
      const seconds = Number.parseInt(h.get("retry-after") ?? "", 10);
      const wait = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000;
      this.notBefore = Math.max(this.notBefore, Date.now() + wait);
    }
    return response;
  };

  /** Waits for this request's turn; turns are handed out in order. */
  private slot(): Promise<void> {
    const turn = this.chain.then(async () => {
      const start = Math.max(Date.now(), this.nextStart, this.notBefore);
      const wait = start - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 1));
      this.nextStart = Math.max(Date.now(), start) + this.spacingMs;
    });
    this.chain = turn;
    return turn;
  }
}
