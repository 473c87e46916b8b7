/**
 * The credential a worker gives a NATS server: from the environment only (the user's own),
 * never from the repository's config nor from a bus URL, which anyone's pull request may
 * change. A repository's `[worker] bus` reaches a NATS host only when the environment allows
 * it (`ENGRAM_ALLOW_HOSTS`), so the credential goes nowhere the user did not choose. A
 * Director draining a source gives it the same credential, on the same terms.
 */
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "@nats-io/transport-node";
import {
  ALLOW_HOSTS_VAR,
  allowEntryFor,
  type Env,
  hostAllowed,
  type Trust,
} from "../core/trust/destinations.js";
import { fileSystemError, UsageError } from "../errors.js";

export const NATS_USER_VAR = "ENGRAM_NATS_USER";
export const NATS_PASSWORD_VAR = "ENGRAM_NATS_PASSWORD";
export const NATS_TOKEN_VAR = "ENGRAM_NATS_TOKEN";
export const NATS_CREDS_VAR = "ENGRAM_NATS_CREDS";

/** What to set, for messages. */
export const NATS_CREDENTIAL_HINT = `${NATS_USER_VAR} and ${NATS_PASSWORD_VAR}, ${NATS_TOKEN_VAR}, or ${NATS_CREDS_VAR} (a .creds file)`;

export interface NatsCredential {
  /** Connection options carrying it. */
  options: Pick<ConnectionOptions, "user" | "pass" | "token" | "authenticator">;
  /** The variables it came from, for messages (never the secret). */
  from: string;
}

/** The worker's NATS credential, when the environment gives one; a half or double one is exit 2. */
export async function natsCredentialFromEnv(
  env: Env = process.env,
): Promise<NatsCredential | undefined> {
  const get = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const user = get(NATS_USER_VAR);
  const pass = get(NATS_PASSWORD_VAR);
  const token = get(NATS_TOKEN_VAR);
  const creds = get(NATS_CREDS_VAR);
  const kinds = [
    user !== undefined || pass !== undefined ? `${NATS_USER_VAR}/${NATS_PASSWORD_VAR}` : "",
    token !== undefined ? NATS_TOKEN_VAR : "",
    creds !== undefined ? NATS_CREDS_VAR : "",
  ].filter((k) => k !== "");
  if (kinds.length > 1) {
    throw new UsageError(`${kinds.join(" and ")} are all set: a NATS bus takes one credential`);
  }
  if (user !== undefined || pass !== undefined) {
    if (user === undefined || pass === undefined) {
      const missing = user === undefined ? NATS_USER_VAR : NATS_PASSWORD_VAR;
      throw new UsageError(`${missing} is not set: a NATS user and password go together`);
    }
    return { options: { user, pass }, from: `${NATS_USER_VAR}/${NATS_PASSWORD_VAR}` };
  }
  if (token !== undefined) return { options: { token }, from: NATS_TOKEN_VAR };
  if (creds !== undefined) {
    return { options: { authenticator: await credsFile(creds) }, from: NATS_CREDS_VAR };
  }
  return undefined;
}

/**
 * The environment's credential for a source a Director drains: one the user named (`--bus`)
 * gets it; one the config names (`agent_bus.sources`, `[worker] bus`) only when the config is
 * the user's own or the environment allows the host, as a worker's bus. Otherwise `withheld`
 * says why none was given.
 */
export async function natsCredentialForSource(
  trust: Trust,
  where: URL,
  userChosen: boolean,
): Promise<{ credential?: NatsCredential; withheld?: string }> {
  const credential = await natsCredentialFromEnv(trust.env);
  if (credential === undefined) return {};
  if (userChosen || trust.userConfig || hostAllowed(where, trust.env)) return { credential };
  return {
    withheld: `${credential.from} was not given to ${where.host}, a host the repository's config names and the environment does not allow: add ${allowEntryFor(where)} to ${ALLOW_HOSTS_VAR}`,
  };
}

/**
 * A `.creds` file (a user JWT and its NKey seed), checked now rather than at the server. The
 * NATS client is loaded only here: bus URLs are parsed by every worker command.
 */
async function credsFile(path: string): Promise<ConnectionOptions["authenticator"]> {
  const { credsAuthenticator } = await import("@nats-io/transport-node");
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw fileSystemError(error, `${NATS_CREDS_VAR} ${path}`, "read") ?? error;
  }
  const authenticator = credsAuthenticator(new Uint8Array(bytes));
  try {
    // Parses the file and signs a nonce: a file that cannot would fail every connection.
    authenticator("engram");
  } catch (error) {
    throw new UsageError(
      `${NATS_CREDS_VAR} ${path}: not a NATS credentials file (a user JWT and an NKey seed): ${(error as Error).message}`,
    );
  }
  return authenticator;
}
