/**
 * Envelopes in the payload shapes of the upstream bus specification (nested `state`,
 * `worker`, `repo` and `error`; `task_progress.v1` with `{step, percent, issue_number}` or
 * anything), as a worker built on that specification sends them, and a seeded stream of them
 * with duplicates, malformed and oversized lines for replay tests.
 */
import { type Envelope, envelope } from "./envelopes.js";
import { Rng } from "./random.js";

export const UPSTREAM_STAGES = [
  "START",
  "SYNC_MAIN",
  "CONTEXT_LOAD",
  "CODE",
  "VALIDATE",
  "COMMIT",
  "PR_CREATE",
  "REVIEW_REQUEST",
  "RETRY_WAIT",
] as const;

export interface WorkerStateInput {
  stage: string;
  issue_number: number;
  attempt?: number;
  progress?: { step: string; percent: number };
  main_ancestor_sha?: string;
  catalog_hash_seen?: string;
  last_update_at?: string;
}

export interface SendOptions {
  sender: string;
  seq?: number;
  sentAt?: string;
  eventId?: string | undefined;
}

const at = (o: SendOptions) => ({
  sender: o.sender,
  seq: o.seq ?? 0,
  ...(o.sentAt !== undefined ? { sentAt: o.sentAt } : {}),
  eventId: o.eventId,
});

/** `protocol_hello.v1` with nested `worker` and `repo`. */
export function upstreamHello(
  o: SendOptions & { version?: string; mainAncestorSha?: string; catalogHash?: string },
): Envelope {
  return envelope(
    "protocol_hello.v1",
    {
      protocol_version: o.version ?? "0.1",
      capabilities: ["heartbeat", "worker_error"],
      worker: { worker_id: o.sender, container_id: `c-${o.sender}`, branch_name: "feature" },
      repo: {
        ...(o.mainAncestorSha !== undefined ? { main_ancestor_sha: o.mainAncestorSha } : {}),
        ...(o.catalogHash !== undefined ? { catalog_hash_seen: o.catalogHash } : {}),
      },
    },
    at(o),
  );
}

/** `heartbeat.v1` whose payload is a WorkerState under `state`, and nothing flat. */
export function upstreamHeartbeat(state: WorkerStateInput, o: SendOptions): Envelope {
  const repo: Record<string, unknown> = { branch_name: `feature-${o.sender}`, base_branch: "main" };
  if (state.main_ancestor_sha !== undefined) repo.main_ancestor_sha = state.main_ancestor_sha;
  if (state.catalog_hash_seen !== undefined) repo.catalog_hash_seen = state.catalog_hash_seen;
  return envelope(
    "heartbeat.v1",
    {
      state: {
        stage: state.stage,
        issue_number: state.issue_number,
        attempt: state.attempt ?? 1,
        ...(state.progress !== undefined ? { progress: state.progress } : {}),
        repo,
        last_update_at: state.last_update_at ?? o.sentAt ?? "2026-01-01T00:00:00.000Z",
      },
    },
    at(o),
  );
}

export interface UpstreamError {
  error_id: string;
  error_type: string;
  message: string;
  issue_number?: number;
  stage?: string;
  is_transient?: boolean;
  should_retry?: boolean;
}

/** `worker_error.v1` with the error under `error`. */
export function upstreamError(error: UpstreamError, o: SendOptions): Envelope {
  return envelope(
    "worker_error.v1",
    {
      error: {
        worker_id: o.sender,
        attempt: 1,
        escalate_to_human: false,
        exit_code: 1,
        is_transient: true,
        should_retry: true,
        ...error,
      },
    },
    at(o),
  );
}

/** `task_progress.v1` with whatever payload a worker chose (upstream fixes none). */
export function upstreamProgress(payload: Record<string, unknown>, o: SendOptions): Envelope {
  return envelope("task_progress.v1", payload, at(o));
}

export interface NormativeStream {
  /** NDJSON lines, in order. */
  lines: string[];
  /** The valid envelopes, in order, repeats included (for the transports). */
  envelopes: Envelope[];
  /** Distinct events among the valid envelopes: what the buffer must hold. */
  unique: number;
  /** Valid envelopes that repeat one already sent (a resend, or a repeated error report). */
  duplicates: number;
  malformed: number;
  oversized: number;
  /** Distinct `error_id`s reported. */
  errorIds: number;
  /** Each worker's last heartbeat state. */
  lastState: Map<string, WorkerStateInput>;
}

/**
 * A seeded stream of `total` lines in the upstream shapes from `workers` workers: heartbeats
 * (some with only a stage), task progress (`{step, percent, issue_number}`, empty, or
 * unknown fields), worker errors (some with only an `error_id`), hellos and notes; resent
 * envelopes, errors reported again under the same `error_id`, a few lines that are not JSON
 * and a few larger than `maxBytes`.
 */
export function normativeStream(
  total: number,
  options: { seed?: number; workers?: number; maxBytes?: number; mainSha?: string } = {},
): NormativeStream {
  const rng = new Rng(options.seed ?? 7);
  const workers = options.workers ?? 8;
  const maxBytes = options.maxBytes ?? 65_536;
  const base = Date.UTC(2026, 0, 1);
  const out: NormativeStream = {
    lines: [],
    envelopes: [],
    unique: 0,
    duplicates: 0,
    malformed: 0,
    oversized: 0,
    errorIds: 0,
    lastState: new Map(),
  };
  const sent: Envelope[] = [];
  const errors: Envelope[] = [];
  const seqs = new Map<string, number>();
  for (let i = 0; i < total; i++) {
    const sender = `w-${rng.int(0, workers - 1)}`;
    const seq = (seqs.get(sender) ?? 0) + 1;
    seqs.set(sender, seq);
    const o: SendOptions = {
      sender,
      seq,
      sentAt: new Date(base + i * 1000).toISOString(),
      // A spec worker need not set our event_id: without one, the envelope's digest dedups.
      eventId: rng.chance(0.7) ? `ev-${i}` : undefined,
    };
    const roll = rng.float();
    if (roll < 0.006) {
      out.lines.push(`{"schema_version":"agentbus-envelope/v1","message_type":"heartbeat.v1",${i}`);
      out.malformed++;
      continue;
    }
    if (roll < 0.01) {
      const text = `oversized ${i} ${"x".repeat(maxBytes + 100)}`;
      out.lines.push(JSON.stringify(envelope("memory_note.v1", { kind: "fact", text }, at(o))));
      out.oversized++;
      continue;
    }
    if (roll < 0.06 && sent.length > 0) {
      // A resend of an envelope already sent, byte for byte.
      const again = rng.pick(sent);
      out.lines.push(JSON.stringify(again));
      out.envelopes.push(again);
      out.duplicates++;
      continue;
    }
    if (roll < 0.09 && errors.length > 0) {
      // The same error reported again: new envelope, same error_id.
      const first = rng.pick(errors);
      const again = { ...first, seq, sent_at: o.sentAt, event_id: `ev-${i}` };
      out.lines.push(JSON.stringify(again));
      out.envelopes.push(again);
      out.duplicates++;
      continue;
    }
    let env: Envelope;
    const kind = rng.float();
    const issue = 100 + rng.int(0, 20);
    if (kind < 0.5) {
      const state: WorkerStateInput = {
        stage: rng.pick(UPSTREAM_STAGES),
        issue_number: issue,
        attempt: rng.int(1, 3),
        progress: { step: `step ${rng.int(1, 9)}`, percent: rng.int(0, 100) },
        ...(options.mainSha !== undefined ? { main_ancestor_sha: options.mainSha } : {}),
        last_update_at: o.sentAt as string,
      };
      out.lastState.set(sender, state);
      env = rng.chance(0.1)
        ? envelope("heartbeat.v1", { state: { stage: state.stage } }, at(o))
        : upstreamHeartbeat(state, o);
    } else if (kind < 0.68) {
      const shapes = [
        { step: `step ${i}`, percent: rng.int(0, 100), issue_number: issue },
        {},
        { step: "lint", custom: { anything: [1, 2] }, note: `free ${i}` },
      ];
      env = upstreamProgress(rng.pick(shapes), o);
    } else if (kind < 0.82) {
      const id = `err-${i}`;
      env = rng.chance(0.1)
        ? envelope("worker_error.v1", { error: { error_id: id } }, at(o))
        : upstreamError(
            {
              error_id: id,
              error_type: rng.pick(["TestFailure", "MergeConflict", "Timeout"]),
              message: `failure ${i}`,
              issue_number: issue,
              stage: "VALIDATE",
              is_transient: rng.chance(0.5),
            },
            o,
          );
      errors.push(env);
      out.errorIds++;
    } else if (kind < 0.87) {
      env = upstreamHello({
        ...o,
        ...(options.mainSha ? { mainAncestorSha: options.mainSha } : {}),
      });
    } else {
      env = envelope(
        "memory_note.v1",
        { kind: "lesson", text: `Lesson ${i}: keep fixtures small`, topics: ["tests"] },
        at(o),
      );
    }
    sent.push(env);
    out.lines.push(JSON.stringify(env));
    out.envelopes.push(env);
    out.unique++;
  }
  return out;
}
