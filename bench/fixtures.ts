import { Rng } from "../test/support/random.js";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// ---------------------------------------------------------------------------------------
// Vocabulary of a plausible software project

export const COMPONENTS = [
  "auth-service",
  "billing",
  "payments",
  "search-indexer",
  "api-gateway",
  "scheduler",
  "notifications",
  "user-profile",
  "ci-pipeline",
  "build-cache",
  "feature-flags",
  "rate-limiter",
  "session-store",
  "webhooks",
  "audit-log",
  "metrics",
  "tracing",
  "migrations",
  "object-storage",
  "queue-worker",
  "email-sender",
  "pdf-renderer",
  "image-resizer",
  "graphql-schema",
  "admin-ui",
  "mobile-sync",
  "cdn-purge",
  "secrets-manager",
  "config-loader",
  "cron-jobs",
  "retry-policy",
  "circuit-breaker",
  "orm-layer",
  "postgres-replica",
  "redis-cache",
  "kafka-consumer",
  "elasticsearch",
  "s3-uploader",
  "invoice-export",
  "tax-engine",
  "onboarding-flow",
  "i18n-bundles",
  "websocket-hub",
  "oauth-callback",
  "csv-importer",
  "data-warehouse",
  "sso-saml",
  "license-check",
  "deploy-bot",
  "canary-release",
] as const;

export const DIRS = [
  "src/api",
  "src/auth",
  "src/billing",
  "src/db",
  "src/jobs",
  "src/ui/components",
  "src/lib",
  "src/search",
  "src/workers",
  "test/integration",
  "test/e2e",
  "scripts",
  "infra/terraform",
  ".github/workflows",
] as const;

export const FILE_NAMES = [
  "router",
  "client",
  "retry",
  "schema",
  "handler",
  "index",
  "config",
  "worker",
  "cache",
  "session",
  "token",
  "migrate",
  "queue",
  "limits",
  "webhook",
  "invoice",
  "export",
  "feature-flags",
  "logger",
  "pool",
] as const;

export const ERROR_TYPES = [
  "ECONNRESET",
  "ETIMEDOUT",
  "TypeError",
  "OOMKilled",
  "RateLimitExceeded",
  "DeadlockDetected",
  "SchemaMismatch",
  "FlakyTest",
  "AssertionError",
  "PermissionDenied",
  "MergeConflict",
  "LockTimeout",
  "BadGateway",
  "ENOSPC",
  "SerializationFailure",
  "UnhandledRejection",
] as const;

export const TOOLS = [
  "vitest",
  "pnpm",
  "docker",
  "terraform",
  "eslint",
  "tsc",
  "playwright",
  "k6",
  "psql",
  "redis-cli",
  "pgbouncer",
  "opentelemetry",
  "prettier",
  "esbuild",
  "helm",
  "sentry",
] as const;

export const STAGES = [
  "plan",
  "clone",
  "install",
  "build",
  "test",
  "lint",
  "review",
  "push",
  "open-pr",
  "merge",
] as const;
export const CAUSES = [
  "the connection pool is exhausted",
  "two migrations run at once",
  "the fixture clock crosses midnight UTC",
  "the cache key ignores the tenant id",
  "retries are not idempotent",
  "the container has only 512 MB of memory",
  "the lock file is stale",
  "a test reuses the same port",
  "the replica lags behind the primary",
  "the webhook secret rotates mid-request",
  "the feature flag defaults to on in CI",
  "the queue redelivers before the visibility timeout",
  "the JSON body is larger than 1 MB",
  "the timezone is not pinned",
  "the build cache key misses the lockfile hash",
];
export const FIXES = [
  "a per-test database schema",
  "an exponential backoff with jitter",
  "a unique index and an upsert",
  "pinning TZ=UTC in the test runner",
  "raising the pool size to 20",
  "an advisory lock around migrations",
  "a dedicated port per worker",
  "reading from the primary after writes",
  "streaming the body instead of buffering it",
  "adding the lockfile hash to the cache key",
  "an idempotency key on every POST",
  "a circuit breaker with a 30 s cool-down",
];
export const SETTINGS = [
  "timeout",
  "pool size",
  "batch size",
  "retry budget",
  "TTL",
  "page size",
  "concurrency",
];
export const UNITS = ["ms", "seconds", "connections", "items", "requests per minute", "MB"];
export const CLAUSES = [
  "This was confirmed on two separate runs.",
  "The same pattern shows up in staging.",
  "Nobody documented it before; the README is now updated.",
  "It only happens under load, so unit tests do not catch it.",
  "The dashboards show the spike right after deploys.",
  "Reverting the last change made it go away.",
  "Check the runbook before touching production.",
  "The owners agreed in the review thread.",
  "Keep this in mind when touching the retry code.",
  "It costs about a minute per CI run.",
];

export function filePath(rng: Rng): string {
  return `${rng.pickSkewed(DIRS)}/${rng.pickSkewed(FILE_NAMES)}.ts`;
}

export const NOTE_KINDS = [
  "fact",
  "decision",
  "lesson",
  "convention",
  "incident",
  "question",
] as const;
export type NoteKind = (typeof NOTE_KINDS)[number];

/** One sentence of a note of the given kind. */
export function noteSentence(rng: Rng, kind: NoteKind, component: string): string {
  switch (kind) {
    case "decision":
      return `Use ${rng.pick(TOOLS)} for ${component} ${rng.pick(SETTINGS)} checks instead of ${rng.pick(TOOLS)}.`;
    case "fact":
      return `${component} reads its ${rng.pick(SETTINGS)} from ${filePath(rng)}; the default is ${rng.int(2, 500)} ${rng.pick(UNITS)}.`;
    case "lesson":
      return `${component} tests flake when ${rng.pick(CAUSES)}; fix it with ${rng.pick(FIXES)}.`;
    case "convention":
      return `Every change to ${filePath(rng)} needs a matching entry in ${filePath(rng)} and a ${component} owner review.`;
    case "incident":
      return `${rng.pick(ERROR_TYPES)} in ${component} during ${rng.pick(STAGES)}: ${rng.pick(CAUSES)}, fixed by ${rng.pick(FIXES)}.`;
    case "question":
      return `Should ${component} retry ${rng.pick(ERROR_TYPES)} or fail fast when ${rng.pick(CAUSES)}?`;
  }
}

/** A note text of `min..max` characters: one sentence, then clauses until long enough. */
export function noteText(
  rng: Rng,
  kind: NoteKind,
  component: string,
  min: number,
  max: number,
): string {
  let text = noteSentence(rng, kind, component);
  const target = rng.int(min, max);
  while (text.length < target) {
    text += ` ${rng.chance(0.5) ? rng.pick(CLAUSES) : noteSentence(rng, kind === "decision" ? "fact" : kind, rng.pickSkewed(COMPONENTS))}`;
  }
  if (text.length > max) text = `${text.slice(0, max - 1).trimEnd()}.`;
  return text;
}

/**
 * A fake credential of a shape the redactor knows, built at run time (never a literal in the
 * source), and its random core: the part that must never reach the buffer.
 */
export function fakeSecret(rng: Rng): { text: string; core: string } {
  switch (rng.int(0, 5)) {
    case 0: {
      const core = rng.chars(ALNUM, 36);
      return { text: `token ${"gh"}p_${core}`, core };
    }
    case 1: {
      const core = `${"AK"}IA${rng.chars(UPPER_DIGITS, 16)}`;
      return { text: `key ${core}`, core };
    }
    case 2: {
      const core = rng.chars(ALNUM, 14);
      return { text: `password=${core}`, core };
    }
    case 3: {
      const core = rng.chars(ALNUM, 12);
      return { text: `https://deploy:${core}@registry.internal.example/v2/`, core };
    }
    case 4: {
      const core = rng.chars(ALNUM, 24);
      return { text: `${"xo"}xb-${rng.int(1000000, 9999999)}-${core}`, core };
    }
    default: {
      const core = rng.chars(ALNUM, 32);
      return { text: `Authorization: Bearer ${core}`, core };
    }
  }
}

/** How many of the planted secret cores appear in `text` (they are alphanumeric runs). */
export function countLeakedSecrets(text: string, cores: ReadonlySet<string>): number {
  let leaked = 0;
  for (const token of text.split(/[^A-Za-z0-9]+/)) if (cores.has(token)) leaked++;
  return leaked;
}

// ---------------------------------------------------------------------------------------
// Queries

export interface BenchQuery {
  text: string;
  kind: "component" | "term" | "phrase" | "path" | "error" | "question" | "decision" | "miss";
}

/**
 * ~200 varied recall queries: component names, tools, error types, file paths, short
 * phrases, natural-language questions, decision-like phrasings and a few that match nothing.
 */
export function generateQueries(count = 200, seed = 0x5eed_0004): BenchQuery[] {
  const rng = new Rng(seed);
  const makers: (() => BenchQuery)[] = [
    () => ({ kind: "component", text: rng.pick(COMPONENTS) }),
    () => ({ kind: "term", text: rng.pick(TOOLS) }),
    () => ({ kind: "error", text: rng.pick(ERROR_TYPES) }),
    () => ({ kind: "path", text: filePath(rng) }),
    () => ({ kind: "phrase", text: `${rng.pick(COMPONENTS)} ${rng.pick(SETTINGS)}` }),
    () => ({ kind: "phrase", text: `${rng.pick(ERROR_TYPES)} ${rng.pick(COMPONENTS)}` }),
    () => ({
      kind: "question",
      text: `why do the ${rng.pick(COMPONENTS)} tests flake when ${rng.pick(CAUSES)}`,
    }),
    () => ({
      kind: "question",
      text: `how do we handle ${rng.pick(ERROR_TYPES)} during ${rng.pick(STAGES)}`,
    }),
    () => ({ kind: "decision", text: `use ${rng.pick(TOOLS)} for ${rng.pick(COMPONENTS)}` }),
    () => ({ kind: "term", text: rng.pick(FIXES) }),
    () => ({
      kind: "miss",
      text: rng.pick([
        "kubernetes operator helm upgrade",
        "quantum flux capacitor",
        "zebra",
        "blockchain ledger",
      ]),
    }),
  ];
  const out: BenchQuery[] = [];
  for (let i = 0; i < count; i++) out.push((makers[i % makers.length] as () => BenchQuery)());
  return out;
}
