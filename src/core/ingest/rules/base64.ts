/**
 * Credentials wrapped in base64 (a `.dockerconfigjson`, a Kubernetes secret, an `auth`
 * field): a base64 run is decoded and scanned when it holds the base64 form of a known
 * token prefix. The keywords are those prefixes encoded at each of the three byte
 * alignments, so the decoding runs only where one of them occurs.
 */
import type { SecretRule } from "./types.js";

/** Token prefixes worth looking for inside base64 (the rules' own prefixes are added by the caller). */
const WRAPPED_PREFIXES = [
  "ghp_",
  "gho_",
  "ghs_",
  "ghu_",
  "ghr_",
  "github_pat_",
  "AKIA",
  "ASIA",
  "glpat-",
  "sk_live_",
  "xoxb-",
  "xoxp-",
  "npm_",
  "sk-ant-",
  "sk-proj-",
  "-----BEGIN",
  "hvs.",
  "AIza",
  // A wrapped env file or config (`token=...`, `"password": ...`) and a wrapped JWT.
  "password",
  "PASSWORD",
  "Password",
  "passwd",
  "secret",
  "SECRET",
  "token",
  "TOKEN",
  "Token",
  "api_key",
  "API_KEY",
  "apikey",
  "apiKey",
  "Authorization",
  "Bearer ",
  "eyJhbGci",
  "eyJ0eXAi",
  "eyJraWQi",
];

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * The base64 characters that depend only on `prefix` (its characters as Latin-1 bytes), when
 * it starts `pad` bytes into a group: the characters made of its bits alone. Encoded here, not
 * through Buffer: every process that redacts makes some 700 of these.
 */
function stableEncoding(prefix: string, pad: number): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (let i = 0; i < pad + prefix.length; i++) {
    value = ((value << 8) | (i < pad ? 0 : prefix.charCodeAt(i - pad) & 0xff)) & 0xffff;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += BASE64[(value >> bits) & 63];
    }
  }
  // Characters before `first` mix in the padding bytes; a last partial one, the bytes after.
  return out.slice(Math.ceil((8 * pad) / 6));
}

/** The keywords of base64 text holding one of `prefixes` (at any of the three byte alignments). */
export function base64Keywords(prefixes: readonly string[] = []): readonly string[] {
  return [
    ...new Set(
      [...WRAPPED_PREFIXES, ...prefixes].flatMap((p) =>
        [0, 1, 2].map((pad) => stableEncoding(p, pad).toLowerCase()),
      ),
    ),
  ].filter((k) => k.length >= 4);
}

/** Decodes a base64 (or base64url) run to text, or undefined when it is not text. */
export function decodeBase64Text(run: string): string | undefined {
  const text = Buffer.from(run.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("latin1");
  // Mostly printable: a wrapped credential is text.
  let printable = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 10 || c === 13 || c === 9) printable++;
  }
  return text.length > 0 && printable / text.length > 0.9 ? text : undefined;
}

export const BASE64_RULE_ID = "base64-encoded-secret";

/** The rule, given the detector of plain (unwrapped) secrets. */
export function base64Rule(
  holdsSecret: (text: string) => boolean,
  prefixes: readonly string[] = [],
): SecretRule {
  return {
    id: BASE64_RULE_ID,
    keywords: base64Keywords(prefixes),
    // The encoded prefix can sit anywhere in the run.
    lookback: Number.POSITIVE_INFINITY,
    pattern: "(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}",
    check: (secret) => {
      const text = decodeBase64Text(secret);
      return text !== undefined && holdsSecret(text);
    },
  };
}
