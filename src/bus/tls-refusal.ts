/**
 * TLS failures that no retry mends: the hub refused this worker's certificate (a TLS alert
 * back from an older hub; a current one says so in `protocol_incompatibility.v1`), or the worker does not trust the hub's certificate (its chain does not reach
 * `ENGRAM_TLS_CA`, it expired, or it names another host). A worker then says so and spools
 * nothing; a hub that is down is a bad day, this is a setup to fix.
 */

/** The alerts a hub sends when it refuses the client's certificate. */
const REFUSED_ALERT =
  /^ERR_SSL_.*ALERT_(?:UNKNOWN_CA|BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_(?:REVOKED|EXPIRED|UNKNOWN|REQUIRED)|ACCESS_DENIED|DECRYPT_ERROR)$/;

/** Node's codes for a peer certificate that fails verification (OpenSSL's X509 errors). */
const UNTRUSTED = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** What a worker says when a hub refuses its certificate (a TLS alert, or the hub's refusal). */
export const CERTIFICATE_REFUSED =
  "the hub refused this worker's certificate (ENGRAM_TLS_CERT: is it signed by the CA the hub's --tls-ca names?)";

/** What a TLS error says about the certificates, when it is one no retry mends. */
export function tlsRefusal(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  if (REFUSED_ALERT.test(code)) return CERTIFICATE_REFUSED;
  if (UNTRUSTED.has(code)) {
    return "the hub's certificate is not trusted (ENGRAM_TLS_CA must name the CA that signed it, for this host)";
  }
  return undefined;
}
