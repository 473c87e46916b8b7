import { HttpError, type Json, type Reply, stripOwner } from "./fake-github-http.js";
import type { GitHubStore } from "./fake-github-store.js";

/** Failures a test injects into the next requests of an operation, as GitHub words them. */
export type FaultOf<Fake> =
  /** pulls/create: another writer opened the same PR first; the fake opens it, then says 422. */
  | { kind: "already-exists" }
  | { kind: "secondary-rate-limit"; retryAfter?: number }
  | { kind: "primary-rate-limit"; status?: 403 | 429; resetInSeconds?: number }
  | { kind: "server-error"; status?: 500 | 502 | 503 }
  | { kind: "actions-not-permitted" }
  /** Another writer acts just before this request is handled; then it proceeds normally. */
  | { kind: "concurrent"; act: (fake: Fake) => void };

/** The reply (always an HttpError thrown) for one injected fault. */
export function faultReply(
  s: GitHubStore,
  fault: Exclude<FaultOf<unknown>, { kind: "concurrent" }>,
  body: Json,
): Reply {
  switch (fault.kind) {
    case "already-exists": {
      const head = stripOwner(String(body.head));
      const base = String(body.base);
      if (!s.pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
        s.openPull({
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
          message: `A pull request already exists for ${s.owner}:${head}.`,
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
