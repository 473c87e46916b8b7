/**
 * Reproducible bench data: a seeded PRNG, a small software-project vocabulary, agent-bus
 * envelopes (NDJSON) and sealed engram repositories. The same seed gives the same bytes.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openContext, type RepoContext } from "../src/context/repo-context.js";
import {
  catalogEntryFor,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../src/core/model/engram.js";
import { renderFocusFor } from "../src/core/rendering/focus.js";
import { initRepository } from "../src/director/init.js";
import type { Catalog, CatalogEntry, Engram, EngramBody } from "../src/schema/engram.js";
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

const DIRS = [
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

const FILE_NAMES = [
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

const STAGES = [
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
const CAUSES = [
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
const FIXES = [
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
const SETTINGS = [
  "timeout",
  "pool size",
  "batch size",
  "retry budget",
  "TTL",
  "page size",
  "concurrency",
];
const UNITS = ["ms", "seconds", "connections", "items", "requests per minute", "MB"];
const CLAUSES = [
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

function filePath(rng: Rng): string {
  return `${rng.pickSkewed(DIRS)}/${rng.pickSkewed(FILE_NAMES)}.ts`;
}

const NOTE_KINDS = ["fact", "decision", "lesson", "convention", "incident", "question"] as const;
type NoteKind = (typeof NOTE_KINDS)[number];

/** One sentence of a note of the given kind. */
function noteSentence(rng: Rng, kind: NoteKind, component: string): string {
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
function noteText(rng: Rng, kind: NoteKind, component: string, min: number, max: number): string {
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
function fakeSecret(rng: Rng): { text: string; core: string } {
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
// Envelopes

export interface EnvelopeFileOptions {
  seed: number;
  /** Lines in the file, duplicates and bad lines included. */
  lines: number;
  workers: number;
  /** Share of lines that resend an earlier envelope (same event_id, new seq). */
  duplicateRate: number;
  /** Share of lines that are malformed or invalid (they must land in the quarantine). */
  badRate: number;
  /** Share of memory notes that carry a fake secret. */
  secretRate: number;
  /** Note text length range (characters). */
  noteChars: [number, number];
  /** Free-text length range of progress and error messages. */
  messageChars: [number, number];
  /** Adds a rationale to decisions, of this length range. */
  rationaleChars?: [number, number];
}

export interface EnvelopeFileStats {
  path: string;
  lines: number;
  bytes: number;
  unique: number;
  duplicates: number;
  bad: number;
  secrets: number;
  /** The random part of every planted secret (to check that none reaches the buffer). */
  secret_cores: string[];
  by_type: Record<string, number>;
}

const BASE_TIME = Date.UTC(2026, 10, 2, 9, 0, 0);

/**
 * Writes an NDJSON file of agent-bus envelopes from `workers` workers: ~60% heartbeats, ~15%
 * task progress, ~5% worker errors, ~15% memory notes, plus resends (same `event_id`) and a
 * few bad lines. Written in chunks, so memory stays flat whatever the size.
 */
export function writeEnvelopeFile(path: string, options: EnvelopeFileOptions): EnvelopeFileStats {
  const rng = new Rng(options.seed);
  const workers = Array.from({ length: options.workers }, (_, i) => ({
    id: `worker-${String(i + 1).padStart(2, "0")}`,
    run_id: `run-${rng.int(100000, 999999)}`,
    seq: 0,
    issue: rng.int(1, 400),
    stage: 0,
    component: rng.pickSkewed(COMPONENTS),
  }));
  const mainSha = rng.hex(40);
  const catalogHash = `sha256:${rng.hex(64)}`;
  const recent: Record<string, unknown>[] = [];
  const stats: EnvelopeFileStats = {
    path,
    lines: 0,
    bytes: 0,
    unique: 0,
    duplicates: 0,
    bad: 0,
    secrets: 0,
    secret_cores: [],
    by_type: {},
  };
  const fd = openSync(path, "w");
  let chunk: string[] = [];
  let chunkChars = 0;
  const flush = () => {
    const data = Buffer.from(chunk.join(""), "utf8");
    writeSync(fd, data);
    stats.bytes += data.length;
    chunk = [];
    chunkChars = 0;
  };
  const emit = (line: string) => {
    chunk.push(line, "\n");
    chunkChars += line.length + 1;
    stats.lines++;
    if (chunkChars > 1 << 20) flush();
  };
  const messageOf = (range: [number, number], first: string) => {
    let text = first;
    const target = rng.int(range[0], range[1]);
    while (text.length < target) {
      text += rng.chance(0.4)
        ? `\n    at ${rng.pick(FILE_NAMES)}.${rng.pick(["run", "handle", "next", "flush"])} (${filePath(rng)}:${rng.int(1, 400)}:${rng.int(1, 80)})`
        : ` ${rng.pick(CLAUSES)}`;
    }
    return text.slice(0, range[1]);
  };

  try {
    for (let i = 0; i < options.lines; i++) {
      const w = rng.pick(workers);
      const sentAt = new Date(BASE_TIME + i * 40 + rng.int(0, 30)).toISOString();
      if (rng.chance(options.badRate)) {
        stats.bad++;
        if (rng.chance(0.5)) {
          emit(
            `{"schema_version":"agentbus-envelope/v1","message_type":"heartbeat.v1","sent_at":"${sentAt}","sender":{"role":"wor`,
          );
        } else {
          // task_progress.v1 without its required `stage`: an invalid payload.
          emit(
            JSON.stringify({
              schema_version: "agentbus-envelope/v1",
              message_type: "task_progress.v1",
              sent_at: sentAt,
              sender: { role: "worker", id: w.id },
              seq: ++w.seq,
              payload: { progress: 0.5 },
              event_id: `ev_${rng.hex(32)}`,
            }),
          );
        }
        continue;
      }
      if (recent.length > 0 && rng.chance(options.duplicateRate)) {
        // A resend after a reconnect: same event_id, the connection's new seq and time.
        const original = rng.pick(recent);
        stats.duplicates++;
        emit(JSON.stringify({ ...original, seq: rng.int(0, 50), sent_at: sentAt }));
        continue;
      }
      const r = rng.next();
      let messageType: string;
      let payload: Record<string, unknown>;
      if (r < 0.63) {
        messageType = "heartbeat.v1";
        if (rng.chance(0.02)) w.stage = (w.stage + 1) % STAGES.length;
        if (rng.chance(0.005)) w.issue = rng.int(1, 400);
        payload = {
          stage: STAGES[w.stage],
          issue: w.issue,
          attempt: rng.int(1, 3),
          progress: Math.round(rng.next() * 1000) / 1000,
          main_ancestor_sha: mainSha,
          catalog_hash_seen: catalogHash,
        };
      } else if (r < 0.79) {
        messageType = "task_progress.v1";
        payload = {
          stage: STAGES[w.stage],
          issue: w.issue,
          status: rng.pick(["started", "running", "running", "completed", "blocked"]),
          progress: Math.round(rng.next() * 1000) / 1000,
          message: messageOf(options.messageChars, `${rng.pick(STAGES)} of ${w.component}:`),
          duration_ms: rng.int(10, 600000),
        };
      } else if (r < 0.84) {
        messageType = "worker_error.v1";
        const errorType = rng.pickSkewed(ERROR_TYPES);
        payload = {
          error_type: errorType,
          message: messageOf(
            options.messageChars,
            `${errorType}: ${rng.pick(CAUSES)} in ${w.component}`,
          ),
          retryable: rng.chance(0.6),
          issue: w.issue,
          stage: STAGES[w.stage],
          attempt: rng.int(1, 5),
        };
      } else {
        messageType = "memory_note.v1";
        const kind = rng.pick(NOTE_KINDS);
        const component = rng.chance(0.5) ? w.component : rng.pickSkewed(COMPONENTS);
        let text = noteText(rng, kind, component, options.noteChars[0], options.noteChars[1]);
        if (rng.chance(options.secretRate)) {
          const secret = fakeSecret(rng);
          stats.secrets++;
          stats.secret_cores.push(secret.core);
          text = `${text.slice(0, Math.max(20, text.length - 70))} (${secret.text})`;
        }
        payload = {
          kind,
          text,
          topics: [component, ...rng.some(COMPONENTS, 0, 3)],
          links: rng.some(
            [
              `#${w.issue}`,
              filePath(rng),
              `PR#${rng.int(1, 900)}`,
              rng.hex(12),
              `https://ci.example.com/runs/${rng.int(1000, 99999)}`,
              "spec:docs/architecture.md",
            ],
            0,
            3,
          ),
          privacy: rng.chance(0.01) ? "sensitive" : rng.chance(0.3) ? "public" : "private",
        };
        if (rng.chance(0.4)) payload.issue = w.issue;
        if (rng.chance(0.5)) payload.confidence = Math.round(rng.next() * 100) / 100;
        if (payload.confidence !== undefined && rng.chance(0.4)) {
          payload.outcome = rng.pick(["success", "failure", "partial", "abandoned"]);
        }
        if (kind === "decision" && options.rationaleChars) {
          payload.rationale = noteText(
            rng,
            "fact",
            component,
            options.rationaleChars[0],
            options.rationaleChars[1],
          );
        }
      }
      const envelope: Record<string, unknown> = {
        schema_version: "agentbus-envelope/v1",
        message_type: messageType,
        sent_at: sentAt,
        sender: { role: "worker", id: w.id, run_id: w.run_id },
        seq: ++w.seq,
        payload,
        event_id: `ev_${rng.hex(32)}`,
      };
      stats.unique++;
      stats.by_type[messageType] = (stats.by_type[messageType] ?? 0) + 1;
      if (recent.length < 4096) recent.push(envelope);
      else recent[rng.int(0, recent.length - 1)] = envelope;
      emit(JSON.stringify(envelope));
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return stats;
}

/** 100,000 lines as in the issue: notes of 60-200 characters, ~5% resends. */
export function ingestFileOptions(lines: number): EnvelopeFileOptions {
  return {
    seed: 0x5eed_0001,
    lines,
    workers: 50,
    duplicateRate: 0.05,
    badRate: 0.0005,
    secretRate: 0.05,
    noteChars: [60, 200],
    messageChars: [30, 160],
  };
}

/** Every line unique and larger payloads, so that 100,000 events make a ~50 MB buffer. */
export function compactionFileOptions(lines: number): EnvelopeFileOptions {
  return {
    seed: 0x5eed_0002,
    lines,
    workers: 50,
    duplicateRate: 0,
    badRate: 0,
    secretRate: 0.05,
    noteChars: [100, 400],
    messageChars: [40, 240],
    rationaleChars: [60, 240],
  };
}

// ---------------------------------------------------------------------------------------
// Repositories

/** The `[memory]` budgets of a bench repository: room for everything the scenario holds. */
export interface BenchBudgets {
  buffer_max_bytes: number;
  buffer_max_events: number;
  st_max_total_bytes: number;
  lt_max_total_bytes: number;
  st_max_files: number;
  lt_max_files: number;
}

export const ROOMY_BUDGETS: BenchBudgets = {
  buffer_max_bytes: 128 * 1024 * 1024,
  buffer_max_events: 200_000,
  st_max_total_bytes: 256 * 1024 * 1024,
  lt_max_total_bytes: 256 * 1024 * 1024,
  st_max_files: 20_000,
  lt_max_files: 20_000,
};

export function configToml(budgets: BenchBudgets): string {
  return [
    "# engram bench repository: budgets large enough for the scenario to hold.",
    "[memory]",
    ...Object.entries(budgets).map(([key, value]) => `${key} = ${value}`),
    "",
  ].join("\n");
}

/** A repository laid out as `director init` does, after writing our own config/dev.toml. */
export async function initBenchRepo(repoDir: string, budgets: BenchBudgets): Promise<RepoContext> {
  mkdirSync(join(repoDir, "config"), { recursive: true });
  writeFileSync(join(repoDir, "config", "dev.toml"), configToml(budgets));
  const ctx = await openContext({ repo: repoDir });
  initRepository(ctx);
  return ctx;
}

function batchId(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/**
 * `count` realistic engrams, as compaction would have written them over ~60 days: ~5 per
 * batch, 85% short-term, 15% long-term (LT ones supersede earlier ST ones), a few to a dozen
 * facts and decisions each, links, provenance, signals, and telemetry on some.
 */
export function generateEngrams(count: number, seed = 0x5eed_0003): Engram[] {
  const rng = new Rng(seed);
  const out: Engram[] = [];
  const stIds: string[] = [];
  const span = 60 * 86_400_000;
  const batches = Math.max(1, Math.ceil(count / 5));
  for (let i = 0; i < count; i++) {
    const batch = Math.floor((i / count) * batches);
    const t = BASE_TIME - span + Math.floor((batch / batches) * span);
    const version = batchId(t);
    const createdAt = new Date(Math.floor(t / 1000) * 1000).toISOString();
    const start = new Date(t - rng.int(60, 3600) * 1000).toISOString();
    const lt = stIds.length > 20 && rng.chance(0.15);
    const component = rng.pickSkewed(COMPONENTS);
    const issue = rng.int(1, 400);
    const label = rng.chance(0.5) ? `issue-${issue}` : component;
    const topics = [...new Set([label, component, ...rng.some(COMPONENTS, 0, 4)])].slice(0, 12);
    const facts: string[] = [];
    const tentative: string[] = [];
    const decisions: { title: string; rationale: string }[] = [];
    let lessons = 0;
    let incidents = 0;
    const nFacts = rng.int(2, 7);
    for (let f = 0; f < nFacts; f++) {
      const kind = rng.pick([
        "fact",
        "lesson",
        "convention",
        "incident",
        "question",
        "fact",
      ] as const);
      const prefix =
        kind === "lesson"
          ? "Lesson: "
          : kind === "incident"
            ? "Incident: "
            : kind === "question"
              ? "Question: "
              : kind === "convention"
                ? "Convention: "
                : "";
      if (kind === "lesson") lessons++;
      if (kind === "incident") incidents++;
      const fact =
        prefix +
        noteText(rng, kind, rng.chance(0.6) ? component : rng.pickSkewed(COMPONENTS), 60, 200);
      facts.push(fact);
      if (kind === "question" || rng.chance(0.1)) tentative.push(fact);
    }
    const nDecisions = rng.chance(0.35) ? rng.int(1, 2) : 0;
    for (let d = 0; d < nDecisions; d++) {
      decisions.push({
        title: noteText(rng, "decision", component, 50, 120),
        rationale: noteText(rng, "fact", component, 60, 200),
      });
    }
    const links = rng
      .some(
        [`#${issue}`, filePath(rng), `#${rng.int(1, 400)}`, filePath(rng), `PR#${rng.int(1, 900)}`],
        0,
        4,
      )
      .map((ref) =>
        ref.startsWith("PR#")
          ? { type: "pr" as const, ref: ref.slice(2) }
          : ref.startsWith("#")
            ? { type: "issue" as const, ref }
            : { type: "file" as const, ref },
      );
    const senders = Array.from(
      { length: rng.int(1, 4) },
      () => `worker-${String(rng.int(1, 50)).padStart(2, "0")}`,
    );
    const errors = rng.chance(0.2) ? rng.int(1, 30) : 0;
    const body: EngramBody = {
      version,
      scope: lt ? "lt" : "st",
      created_at: createdAt,
      source_window: { start_ts: start, end_ts: createdAt },
      topics,
      facts,
      decisions,
      links,
      provenance: {
        created_by: "engram-director",
        run_id: lt ? `promote-${version}` : `run-${version}`,
        event_count: lt ? 0 : rng.int(5, 400),
        senders: [...new Set(senders)].sort(),
        message_types: lt
          ? {}
          : { "heartbeat.v1": rng.int(0, 300), "memory_note.v1": nFacts + nDecisions },
      },
      privacy: rng.chance(0.3) ? "public" : "private",
      signals: {
        notes: nFacts + nDecisions,
        decisions: nDecisions,
        lessons,
        incidents,
        errors,
        max_surprise: rng.chance(0.3) ? Math.round(rng.next() * 1000) / 1000 : null,
        mean_confidence: rng.chance(0.5) ? Math.round(rng.next() * 1000) / 1000 : null,
        redactions: rng.chance(0.05) ? 1 : 0,
        truncated: 0,
      },
    };
    if (tentative.length > 0) body.tentative = tentative;
    if (!lt && errors > 0) {
      const errorType = rng.pickSkewed(ERROR_TYPES);
      body.telemetry = {
        workers: [],
        errors: [
          {
            error_type: errorType,
            count: errors,
            retryable: rng.chance(0.5),
            sample: `${errorType}: ${rng.pick(CAUSES)} in ${component}`,
            workers: [...new Set(senders)].sort(),
          },
        ],
      };
    }
    if (lt) {
      const sources = [
        ...new Set(Array.from({ length: rng.int(1, 3) }, () => rng.pick(stIds))),
      ].sort();
      body.supersedes = sources;
      body.promotion = {
        reasons: facts.slice(0, 2).map((f) => `repeated in 3 engrams: ${f}`.slice(0, 200)),
      };
    }
    const engram = sealEngram(body);
    if (!lt) stIds.push(engram.engram_id);
    out.push(engram);
  }
  return out;
}

export interface EngramRepoStats {
  engrams: number;
  st: number;
  lt: number;
  bytes: number;
  catalog_bytes: number;
  memory_md_bytes: number;
  catalog_hash: string;
}

/**
 * Writes engram files, the sealed catalog and MEMORY.md (rendered by the real `renderFocus`)
 * into an initialized repository. Fixture files are written plainly (no fsync): this is set-up.
 */
export function writeEngramRepo(ctx: RepoContext, engrams: readonly Engram[]): EngramRepoStats {
  const entries: CatalogEntry[] = [];
  const dirs = new Set<string>();
  let bytes = 0;
  for (const engram of engrams) {
    const text = serializeEngram(engram);
    const size = Buffer.byteLength(text, "utf8");
    const entry = catalogEntryFor(engram, size);
    const dir = join(ctx.repoDir, "memory", engram.scope, engram.version);
    if (!dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      dirs.add(dir);
    }
    writeFileSync(join(ctx.repoDir, entry.path), text);
    entries.push(entry);
    bytes += size;
  }
  let newest = "";
  for (const e of engrams) if (e.created_at > newest) newest = e.created_at;
  const catalog: Catalog = sealCatalog(engrams.length > 0 ? 1 : 0, newest, entries);
  const catalogText = serializeCatalog(catalog);
  writeFileSync(join(ctx.repoDir, "memory", "catalog.json"), catalogText);
  const memory = ctx.config.memory;
  const focus = renderFocusFor(catalog, new Map(engrams.map((e) => [e.engram_id, e])), memory);
  writeFileSync(join(ctx.repoDir, "MEMORY.md"), focus.text);
  const lt = engrams.filter((e) => e.scope === "lt").length;
  return {
    engrams: engrams.length,
    st: engrams.length - lt,
    lt,
    bytes,
    catalog_bytes: Buffer.byteLength(catalogText, "utf8"),
    memory_md_bytes: focus.bytes,
    catalog_hash: catalog.hash,
  };
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
