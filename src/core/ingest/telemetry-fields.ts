/**
 * The fields engram reads from a telemetry payload, whichever shape it came in: the upstream
 * specification's nested objects (a heartbeat's `state`, a hello's `worker` and `repo`, a
 * worker error's `error`, `{step, percent}` progress) or our flat fields, kept as additive
 * aliases. Where both are present the nested, normative field wins.
 */
export interface TelemetryFields {
  stage?: string | undefined;
  issue?: string | number | undefined;
  attempt?: number | undefined;
  /** 0..1 (a normative `percent` is divided by 100). */
  progress?: number | undefined;
  status?: string | undefined;
  main_ancestor_sha?: string | undefined;
  catalog_hash_seen?: string | undefined;
  error_type?: string | undefined;
  /** The free text: an error's message or a progress message. */
  message?: string | undefined;
  retryable?: boolean | undefined;
  /** A worker error's stable id: repeated reports of it are one error. */
  error_id?: string | undefined;
}

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Obj)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A flat fraction, or upstream's `{percent}` (0..100) as a fraction. */
function fraction(value: unknown): number | undefined {
  const flat = num(value);
  if (flat !== undefined) return flat;
  const percent = num(obj(value)?.percent);
  return percent === undefined ? undefined : Math.round(percent * 10) / 1000;
}

function issueOf(...values: unknown[]): string | number | undefined {
  for (const value of values) {
    if (typeof value === "string" || typeof value === "number") return value;
  }
  return undefined;
}

/** Reads a validated payload of `messageType`; types other than telemetry give flat fields only. */
export function telemetryFields(messageType: string, p: Obj): TelemetryFields {
  switch (messageType) {
    case "heartbeat.v1": {
      const state = obj(p.state) ?? {};
      const repo = obj(state.repo) ?? {};
      return {
        stage: str(state.stage) ?? str(p.stage),
        issue: issueOf(state.issue_number, p.issue_number, p.issue),
        attempt: num(state.attempt) ?? num(p.attempt),
        progress: fraction(state.progress) ?? fraction(p.progress),
        main_ancestor_sha: str(repo.main_ancestor_sha) ?? str(p.main_ancestor_sha),
        catalog_hash_seen: str(repo.catalog_hash_seen) ?? str(p.catalog_hash_seen),
      };
    }
    case "protocol_hello.v1": {
      const repo = obj(p.repo) ?? {};
      return {
        main_ancestor_sha: str(repo.main_ancestor_sha) ?? str(p.main_ancestor_sha),
        catalog_hash_seen: str(repo.catalog_hash_seen) ?? str(p.catalog_hash_seen),
      };
    }
    case "task_progress.v1":
      return {
        stage: str(p.stage),
        issue: issueOf(p.issue_number, p.issue),
        attempt: num(p.attempt),
        progress: num(p.percent) !== undefined ? fraction(p) : fraction(p.progress),
        status: str(p.status),
        message: str(p.message),
      };
    case "worker_error.v1": {
      const error = obj(p.error) ?? {};
      const shouldRetry = error.should_retry ?? error.is_transient;
      return {
        stage: str(error.stage) ?? str(p.stage),
        issue: issueOf(error.issue_number, p.issue),
        attempt: num(error.attempt) ?? num(p.attempt),
        error_type: str(error.error_type) ?? str(p.error_type),
        message: str(error.message) ?? str(p.message),
        retryable:
          typeof shouldRetry === "boolean"
            ? shouldRetry
            : typeof p.retryable === "boolean"
              ? p.retryable
              : undefined,
        error_id: str(error.error_id),
      };
    }
    default:
      return {
        stage: str(p.stage),
        issue: issueOf(p.issue),
        attempt: num(p.attempt),
        progress: num(p.progress),
        status: str(p.status),
        main_ancestor_sha: str(p.main_ancestor_sha),
        catalog_hash_seen: str(p.catalog_hash_seen),
        error_type: str(p.error_type),
        message: str(p.message),
        retryable: typeof p.retryable === "boolean" ? p.retryable : undefined,
      };
  }
}

/**
 * The deduplication key of a worker error that names its `error_id` (upstream: "stable, for
 * dedupe"): one per sender and id, so repeated reports of one error are stored once.
 */
export function errorDedupKey(envelope: Obj): string | undefined {
  if (envelope.message_type !== "worker_error.v1") return undefined;
  const id = str(obj(obj(envelope.payload)?.error)?.error_id);
  const sender = str(obj(envelope.sender)?.id);
  return id === undefined || sender === undefined ? undefined : `err:${sender}:${id}`;
}
