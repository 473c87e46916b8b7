import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { graphitiUrl, notionAccess } from "../core/trust/destinations.js";
import type { TargetName } from "./target-names.js";

/** The URL a target talks to, as the config and the user's trust resolve it (Tana: none). */
export function storeUrl(ctx: RepoContext, target: TargetName): string | null {
  if (target === "graphiti") return graphitiUrl(ctx.config.sync.graphiti, trustOf(ctx));
  if (target === "notion") return notionAccess(ctx.config.sync.notion, trustOf(ctx)).url;
  return null;
}

/** What the network said, by the code Node gives a failed connection. */
const NETWORK: Record<string, string> = {
  ECONNREFUSED: "connection refused (nothing listens there)",
  ECONNRESET: "the connection was reset",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name does not resolve (DNS did not answer)",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
};

/**
 * Why `url` cannot be reached, found by one plain request (any HTTP answer means the server is
 * there): "connection refused", "timed out after 5 s", or null when it answers. A store whose
 * client said only "fetch failed" is named and explained this way.
 */
export async function unreachableReason(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel().catch(() => undefined);
    return null;
  } catch (error) {
    const name = (error as Error).name;
    if (name === "TimeoutError" || name === "AbortError") {
      return `no answer within ${Math.round(timeoutMs / 1000)} s (timed out)`;
    }
    // fetch says only "fetch failed"; the cause beneath says what (a code, or "bad port").
    let deepest = error as Error;
    for (let e: unknown = error; e instanceof Error; e = e.cause) {
      const code = (e as NodeJS.ErrnoException).code;
      if (typeof code === "string" && NETWORK[code] !== undefined) {
        return `${NETWORK[code]} [${code}]`;
      }
      deepest = e;
    }
    const code = (deepest as NodeJS.ErrnoException).code;
    return typeof code === "string" ? `${deepest.message} [${code}]` : deepest.message;
  }
}

/** What to check when a store cannot be reached, with the config key that names its URL. */
export function reachAdvice(target: TargetName): string {
  const key = target === "graphiti" ? "[sync.graphiti] url" : "[sync.notion] base_url";
  return `Check that the server runs and listens at that address, that ${key} in the config names it, and that a proxy or firewall lets it through; then run the command again`;
}
