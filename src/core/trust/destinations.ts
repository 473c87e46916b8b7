import type { GitHubConfig, GraphitiSyncConfig, NotionSyncConfig } from "../../schema/config.js";
import type { TanaSyncConfig } from "../../schema/tana-config.js";
import { ConfigError } from "../errors.js";

/**
 * The one place that decides where engram sends requests and which credential goes with
 * them (docs/security.md). The repository is untrusted input: its config may have come from
 * anyone's pull request. So every destination and every token variable comes from the
 * environment (or the user's own config file outside the repository); the repository's
 * config may name a destination only when the environment allows its host
 * (`ENGRAM_ALLOW_HOSTS`), and a token variable only when it is the service's own or the
 * environment allows it (`ENGRAM_ALLOW_TOKEN_VARS`). Pure: the environment comes in as data.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Hosts a repository's config may send to, comma-separated: `host` (https on 443),
 * `host:port` (https or tls:// on that port), `scheme://host[:port]` (that scheme and port);
 * `:*` is any port.
 */
export const ALLOW_HOSTS_VAR = "ENGRAM_ALLOW_HOSTS";
/** Variable names (comma-separated) a repository's config may read a token from. */
export const ALLOW_TOKEN_VARS_VAR = "ENGRAM_ALLOW_TOKEN_VARS";

/** What the caller knows about who wrote the config. */
export interface Trust {
  env: Env;
  /**
   * True when the config file is the user's own: given with `--config` and outside the
   * repository. Then its destinations and variable names are the user's choice.
   */
  userConfig: boolean;
  /** The config file as the user knows it, for messages. */
  file: string;
}

export type ServiceName = "github" | "notion" | "tana" | "tana-local" | "graphiti";

export interface ServiceRule {
  /** The config key naming the destination. */
  urlKey: string;
  /** The environment variable naming the destination; it wins over the config. */
  urlVar: string;
  /** Used when neither names one; undefined: the service is off without one. */
  defaultUrl: string | undefined;
  /** The config key naming the token variable, when the config has one. */
  tokenKey: string | undefined;
  /** The service's own token variable. */
  tokenVar: string | undefined;
}

/** Every destination engram sends to, with where it and its credential may come from. */
export const SERVICES: Readonly<Record<ServiceName, ServiceRule>> = {
  github: {
    urlKey: "github.api_url",
    urlVar: "GITHUB_API_URL",
    defaultUrl: "https://api.github.com",
    tokenKey: undefined,
    tokenVar: "GITHUB_TOKEN",
  },
  notion: {
    urlKey: "sync.notion.base_url",
    urlVar: "ENGRAM_NOTION_URL",
    defaultUrl: "https://api.notion.com",
    tokenKey: "sync.notion.token_env",
    tokenVar: "NOTION_TOKEN",
  },
  tana: {
    urlKey: "sync.tana.endpoint",
    urlVar: "ENGRAM_TANA_ENDPOINT",
    defaultUrl: "https://europe-west1-tagr-prod.cloudfunctions.net/addToNodeV2",
    tokenKey: "sync.tana.token_env",
    tokenVar: "TANA_TOKEN",
  },
  "tana-local": {
    urlKey: "sync.tana.local_api_url",
    urlVar: "ENGRAM_TANA_LOCAL_URL",
    defaultUrl: undefined,
    tokenKey: "sync.tana.local_token_env",
    tokenVar: "TANA_LOCAL_TOKEN",
  },
  graphiti: {
    urlKey: "sync.graphiti.url",
    urlVar: "ENGRAM_GRAPHITI_URL",
    defaultUrl: "http://localhost:8000/mcp/",
    tokenKey: undefined,
    tokenVar: undefined,
  },
};

export interface Destination {
  url: string;
  from: "environment" | "config" | "default";
}

/** The `[section] key` form users read in config files. */
function shown(key: string): string {
  const dot = key.lastIndexOf(".");
  return `[${key.slice(0, dot)}] ${key.slice(dot + 1)}`;
}

function refuse(t: Trust, key: string, message: string): never {
  throw new ConfigError(`${t.file}: ${shown(key)}: ${message}`, t.file, [{ key, message }]);
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
}

function httpUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return undefined;
  return new URL(value);
}

/** The port a scheme means when a URL or an entry names none. */
const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443, nats: 4222 };

/** One `ENGRAM_ALLOW_HOSTS` entry: a scheme, a host and a port (`undefined`: any, from `:*`). */
interface HostEntry {
  schemes: readonly string[];
  host: string;
  port: number | undefined;
}

/**
 * An entry as the user wrote it. With a scheme (`http://x:8080`, `tcp://bus:7070`) it means
 * exactly that scheme and port (the scheme's own when none is written); without one it means
 * the encrypted schemes: `example.com` is https://example.com:443, `example.com:8443` is
 * https or tls:// on 8443. `:*` is any port.
 */
function parseHostEntry(entry: string): HostEntry {
  const bad = () =>
    new ConfigError(
      `${ALLOW_HOSTS_VAR}: ${JSON.stringify(entry)} is not HOST, HOST:PORT or SCHEME://HOST[:PORT] (PORT may be *)`,
      ALLOW_HOSTS_VAR,
    );
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(entry)?.[1];
  const anyPort = entry.endsWith(":*");
  const text = anyPort ? entry.slice(0, -2) : entry;
  const url = URL.canParse(scheme ? text : `https://${text}`)
    ? new URL(scheme ? text : `https://${text}`)
    : undefined;
  if (url === undefined || url.hostname === "" || !/^\/?$/.test(url.pathname) || url.search) {
    throw bad();
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") throw bad();
  const named = scheme ?? "https";
  const port = anyPort ? undefined : url.port !== "" ? Number(url.port) : DEFAULT_PORTS[named];
  if (!anyPort && port === undefined) throw bad();
  const schemes = scheme ? [scheme] : url.port !== "" || anyPort ? ["https", "tls"] : ["https"];
  return { schemes, host: url.hostname.toLowerCase(), port };
}

function portOf(url: URL): number | undefined {
  return url.port !== "" ? Number(url.port) : DEFAULT_PORTS[url.protocol.slice(0, -1)];
}

/**
 * Whether `ENGRAM_ALLOW_HOSTS` lets the config name this URL: an entry matches the scheme,
 * host and port as written (`parseHostEntry`), so allowing an https host never allows it on
 * plain http. A malformed entry is an error naming it.
 */
export function hostAllowed(url: URL, env: Env): boolean {
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const host = url.hostname.toLowerCase();
  const port = portOf(url);
  return list(env[ALLOW_HOSTS_VAR])
    .map(parseHostEntry)
    .some(
      (e) =>
        e.host === host && e.schemes.includes(scheme) && (e.port === undefined || e.port === port),
    );
}

/** The entry that allows exactly this URL, for messages: `example.com`, `http://127.0.0.1:4567`. */
export function allowEntryFor(url: URL): string {
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === "https") return url.host.toLowerCase();
  return `${scheme}://${url.hostname.toLowerCase()}:${portOf(url) ?? "*"}`;
}

/**
 * Where `service` is: the environment's variable, else the config's value when the user wrote
 * the config, it is the default's origin or its host is allowed, else the default. A
 * repository config naming any other host is refused with what to set instead.
 */
export function destination(
  service: ServiceName,
  configured: string | undefined,
  t: Trust,
): Destination | undefined {
  const rule = SERVICES[service];
  const fromEnv = t.env[rule.urlVar]?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    if (httpUrl(fromEnv) === undefined) {
      throw new ConfigError(
        `${rule.urlVar}: expected an http(s) URL, got ${JSON.stringify(fromEnv)}`,
        rule.urlVar,
      );
    }
    return { url: fromEnv, from: "environment" };
  }
  if (configured === undefined || configured === rule.defaultUrl) {
    return rule.defaultUrl === undefined ? undefined : { url: rule.defaultUrl, from: "default" };
  }
  const url = httpUrl(configured);
  if (url === undefined) refuse(t, rule.urlKey, `expected an http(s) URL, got ${configured}`);
  const fallback = rule.defaultUrl === undefined ? undefined : new URL(rule.defaultUrl);
  if (t.userConfig || url.origin === fallback?.origin || hostAllowed(url, t.env)) {
    return { url: configured, from: "config" };
  }
  refuse(
    t,
    rule.urlKey,
    `names ${url.host}, a host the environment does not allow: the repository's config ` +
      `cannot choose where engram sends credentials or memory. Set ${rule.urlVar}=${configured} ` +
      `to send there, or add ${allowEntryFor(url)} to ${ALLOW_HOSTS_VAR}` +
      (rule.defaultUrl === undefined
        ? ", or remove the key"
        : `, or remove the key (default ${rule.defaultUrl})`),
  );
}

/**
 * The variable a token is read from: the service's own, or the config's `token_env` when the
 * user wrote the config or `ENGRAM_ALLOW_TOKEN_VARS` lists it. A repository config naming
 * any other variable (`AWS_SECRET_ACCESS_KEY`) is refused.
 */
export function tokenVariable(service: ServiceName, configured: string | undefined, t: Trust) {
  const rule = SERVICES[service];
  const own = rule.tokenVar;
  if (own === undefined) return undefined;
  if (configured === undefined || configured === own || rule.tokenKey === undefined) return own;
  if (t.userConfig || list(t.env[ALLOW_TOKEN_VARS_VAR]).includes(configured.toLowerCase())) {
    return configured;
  }
  refuse(
    t,
    rule.tokenKey,
    `names the variable ${configured}, which the environment does not allow: the repository's ` +
      `config cannot choose which secret engram sends. Put the token in ${own}, or add ` +
      `${configured} to ${ALLOW_TOKEN_VARS_VAR}`,
  );
}

export interface Access {
  url: string;
  from: Destination["from"];
  /** The variable the token is read from (for messages), and its value ("" when unset). */
  tokenVar: string;
  token: string;
}

function access(
  service: ServiceName,
  url: string | undefined,
  tokenEnv: string | undefined,
  t: Trust,
): Access | undefined {
  const where = destination(service, url, t);
  if (where === undefined) return undefined;
  const tokenVar = tokenVariable(service, tokenEnv, t) ?? "";
  return { ...where, tokenVar, token: tokenVar === "" ? "" : (t.env[tokenVar]?.trim() ?? "") };
}

export function githubAccess(config: GitHubConfig, t: Trust): Access {
  return access("github", config.api_url, undefined, t) as Access;
}

export function notionAccess(config: NotionSyncConfig, t: Trust): Access {
  return access("notion", config.base_url, config.token_env, t) as Access;
}

export function tanaAccess(
  config: TanaSyncConfig,
  t: Trust,
): { input: Access; local: Access | undefined } {
  return {
    input: access("tana", config.endpoint, config.token_env, t) as Access,
    local: access("tana-local", config.local_api_url, config.local_token_env, t),
  };
}

export function graphitiUrl(config: GraphitiSyncConfig, t: Trust): string {
  return (destination("graphiti", config.url, t) as Destination).url;
}
