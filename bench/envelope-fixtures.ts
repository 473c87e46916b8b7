/** Agent-bus envelopes (NDJSON) for the bench, from the vocabulary and a seed. */
import { closeSync, openSync, writeSync } from "node:fs";
import { Rng } from "../test/support/random.js";

const _ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const _UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

import {
  CAUSES,
  CLAUSES,
  COMPONENTS,
  ERROR_TYPES,
  FILE_NAMES,
  fakeSecret,
  filePath,
  NOTE_KINDS,
  noteText,
  STAGES,
} from "./fixtures.js";

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
  /**
   * Share of heartbeats and worker errors sent in the upstream specification's payload shapes
   * (`state: {...}`, `error: {...}`), as a worker built on that specification sends them.
   */
  upstreamRate?: number;
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

export const BASE_TIME = Date.UTC(2026, 10, 2, 9, 0, 0);

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
          // task_progress.v1 whose `stage` is a number, not text: an invalid payload (upstream
          // fixes no task_progress fields, so a missing stage would be valid).
          emit(
            JSON.stringify({
              schema_version: "agentbus-envelope/v1",
              message_type: "task_progress.v1",
              sent_at: sentAt,
              sender: { role: "worker", id: w.id },
              seq: ++w.seq,
              payload: { stage: 42, progress: 0.5 },
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
        payload = rng.chance(options.upstreamRate ?? 0)
          ? {
              state: {
                stage: rng.pick(UPSTREAM_STAGES),
                issue_number: w.issue,
                attempt: rng.int(1, 3),
                progress: { step: rng.pick(STAGES), percent: rng.int(0, 100) },
                repo: {
                  branch_name: `issue-${w.issue}`,
                  base_branch: "main",
                  main_ancestor_sha: mainSha,
                  catalog_hash_seen: catalogHash,
                },
                last_update_at: sentAt,
              },
            }
          : {
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
        const message = messageOf(
          options.messageChars,
          `${errorType}: ${rng.pick(CAUSES)} in ${w.component}`,
        );
        const retryable = rng.chance(0.6);
        payload = rng.chance(options.upstreamRate ?? 0)
          ? {
              error: {
                error_id: `err_${rng.hex(16)}`,
                worker_id: w.id,
                issue_number: w.issue,
                stage: rng.pick(UPSTREAM_STAGES),
                attempt: rng.int(1, 5),
                error_type: errorType,
                is_transient: retryable,
                should_retry: retryable,
                escalate_to_human: rng.chance(0.05),
                message,
                exit_code: rng.int(0, 2),
              },
            }
          : {
              error_type: errorType,
              message,
              retryable,
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

/**
 * The mixed swarm stream of `director ingest FILE` against its floor: about 400 bytes a line,
 * heartbeats, progress, errors and notes, a fifth of the telemetry in the upstream shapes.
 */
export function swarmStreamOptions(lines: number): EnvelopeFileOptions {
  return {
    ...ingestFileOptions(lines),
    seed: 0x5eed_0005,
    noteChars: [80, 300],
    messageChars: [40, 240],
    upstreamRate: 0.2,
  };
}

/**
 * The swarm stream with long notes (300-2,400 characters), decisions with a rationale, and a
 * secret in a quarter of the notes: what a swarm pasting logs and reasoning into notes sends.
 */
export function longNoteStreamOptions(lines: number): EnvelopeFileOptions {
  return {
    ...swarmStreamOptions(lines),
    seed: 0x5eed_0006,
    secretRate: 0.25,
    noteChars: [300, 2400],
    rationaleChars: [100, 800],
  };
}

/** The upstream specification's WorkerState stages. */
const UPSTREAM_STAGES = [
  "START",
  "SYNC_MAIN",
  "CONTEXT_LOAD",
  "CODE",
  "VALIDATE",
  "COMMIT",
  "PR_CREATE",
  "RETRY_WAIT",
];

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
