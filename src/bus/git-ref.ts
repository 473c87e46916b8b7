/**
 * The worker side of the git-ref transport (`--bus git:REMOTE`), for writers that cannot
 * reach each other or the Director but can all push to one remote (parallel CI jobs).
 *
 * Each sender pushes to a ref no other writer pushes to,
 * `refs/engram/events/<worker-id>/<run-id->-<time>-<random>`, so fifty writers never contend.
 * Each send adds one file, `events/<ms>-<event_id>.ndjson`, in a commit built in the local
 * object store (no work tree, no index), and pushes it with a lease on what the ref held
 * before. A rejected push (the Director pruned the ref, someone moved it) re-reads the ref,
 * rebuilds on top of it and retries with bounded backoff; `send` resolves only once a push
 * succeeded. A remote that cannot be reached falls back to the local spool; one that is no
 * remote at all, or refuses the credential, is a UsageError and nothing is spooled.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { RepoContext } from "../context/repo-context.js";
import { createRedactor, type Redactor } from "../core/ingest/redact.js";
import { UsageError } from "../errors.js";
import { type GitRepo, openRepo } from "../git/history.js";
import type { Envelope } from "../schema/envelope.js";
import { type BusSender, type Delivery, spoolSender } from "./delivery.js";
import {
  deleteLocalRef,
  EVENTS_PREFIX,
  fetchOneRef,
  permanentGitFailure,
  pushRefs,
  RemoteUnreachable,
  refusedCredential,
  resolveLocalRef,
  unknownRemote,
  writeEventCommit,
} from "./git-ref-store.js";
import { redactEnvelopes } from "./redact-envelopes.js";

/** What a git-ref send achieved, beyond `Delivery`. */
export interface GitRefDelivery extends Delivery {
  /** The writer's ref on the remote, and the commit pushed to it. */
  ref?: string;
  commit?: string;
  /** Pushes tried (1 when the first one went through). */
  attempts: number;
  /** Secrets redacted on this worker before anything was written to git. */
  redacted: number;
}

/** A `BusSender` whose deliveries say which ref and commit took the envelopes. */
export interface GitRefSender extends BusSender {
  send(envelopes: readonly Envelope[]): Promise<GitRefDelivery>;
}

export interface GitRefOptions {
  /** Pushes tried in all before falling back to the spool. */
  maxAttempts?: number;
  /** Failures to reach the remote before falling back to the spool. */
  maxUnreachable?: number;
  /** First backoff delay; doubled per retry, with full jitter, up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

const DEFAULTS: Required<GitRefOptions> = {
  maxAttempts: 10,
  maxUnreachable: 3,
  baseDelayMs: 100,
  maxDelayMs: 3_000,
};

/** Opens a sender that pushes to `remote` (a remote name of the repository, a URL or a path). */
export function gitRefSender(
  ctx: RepoContext,
  remote: string,
  options: GitRefOptions = {},
): GitRefSender {
  return new RefSender(ctx, remote, { ...DEFAULTS, ...options });
}

class RefSender implements GitRefSender {
  private readonly redactor: Redactor;
  private ref: string | undefined;
  /** What this sender last pushed: the value the remote ref should still hold. */
  private tip: string | null = null;
  private repo: GitRepo | undefined;
  private remoteChecked = false;

  constructor(
    private readonly ctx: RepoContext,
    private readonly remote: string,
    private readonly options: Required<GitRefOptions>,
  ) {
    this.redactor = createRedactor(ctx.config.redaction.patterns);
  }

  async send(envelopes: readonly Envelope[]): Promise<GitRefDelivery> {
    // Redacted here, not only by the Director: the ref sits on the remote until it is pruned.
    const { envelopes: clean, redacted } = redactEnvelopes(envelopes, this.redactor);
    if (clean.length === 0) return { transport: "git", spooled: false, attempts: 0, redacted };
    if (!this.remoteChecked) {
      const remotes = await unknownRemote(this.ctx.repoDir, this.remote);
      if (remotes !== undefined) {
        throw new UsageError(
          `git:${this.remote}: no remote named ${JSON.stringify(this.remote)} in this repository (its remotes: ${remotes.join(", ") || "none"}); nothing was sent or spooled`,
        );
      }
      this.remoteChecked = true;
    }
    try {
      this.repo ??= await openRepo(this.ctx.repoDir);
    } catch (error) {
      return this.fallback(clean, redacted, 0, (error as Error).message);
    }
    const first = clean[0] as Envelope;
    this.ref ??= writerRef(first);
    const ref = this.ref;
    const now = Date.now();
    const file = {
      name: `${String(now).padStart(15, "0")}-${fileSafe(first.event_id ?? randomBytes(8).toString("hex"))}.ndjson`,
      text: clean.map((e) => `${JSON.stringify(e)}\n`).join(""),
    };
    const message = `engram events: ${clean.length} envelope(s) from ${first.sender.id}\n`;
    let base = this.tip;
    let stale = false;
    let unreachable = 0;
    let reason = "";
    let attempts = 0;
    for (let round = 0; attempts < this.options.maxAttempts; round++) {
      if (round > 0) await sleep(this.delay(round));
      try {
        if (stale) base = await this.remoteTip(this.repo, ref);
        stale = false;
      } catch (error) {
        if (!(error instanceof RemoteUnreachable)) throw error;
        reason = error.message;
        if (++unreachable >= this.options.maxUnreachable) break;
        continue;
      }
      const commit = await writeEventCommit(this.repo, base, [file], {
        message,
        timestamp: Math.floor(now / 1000),
      });
      attempts++;
      const outcome = await pushRefs(this.ctx.repoDir, this.remote, [
        { ref, to: commit, expect: base },
      ]);
      if (!outcome.reached) {
        if (permanentGitFailure(outcome.reason)) {
          const what = refusedCredential(outcome.reason)
            ? "the remote refused the credential (or none could be given)"
            : "the remote cannot be used";
          throw new UsageError(
            `git:${this.remote}: ${what}: ${outcome.reason}; nothing was sent or spooled: fix the remote or its credential, or choose another bus`,
          );
        }
        reason = outcome.reason;
        if (++unreachable >= this.options.maxUnreachable) break;
        continue;
      }
      if (outcome.updated.has(ref)) {
        this.tip = commit;
        return { transport: "git", spooled: false, ref, commit, attempts, redacted };
      }
      reason = `push to ${ref} rejected ${attempts} time(s): ${outcome.rejected.get(ref)}`;
      stale = true;
    }
    return this.fallback(clean, redacted, attempts, `git:${this.remote}: ${reason}`);
  }

  async close(): Promise<void> {}

  /** What the remote ref holds now (fetched into a private local ref), or null if nothing. */
  private async remoteTip(repo: GitRepo, ref: string): Promise<string | null> {
    const local = `refs/engram/outbox/${ref.slice(EVENTS_PREFIX.length)}`;
    try {
      const found = await fetchOneRef(this.ctx.repoDir, this.remote, ref, local);
      return found === "found" ? await resolveLocalRef(repo, local) : null;
    } finally {
      await deleteLocalRef(repo, local);
    }
  }

  /** Exponential backoff with full jitter, so retrying writers spread out. */
  private delay(round: number): number {
    const cap = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (round - 1));
    return Math.floor(cap / 2 + (Math.random() * cap) / 2);
  }

  private async fallback(
    envelopes: readonly Envelope[],
    redacted: number,
    attempts: number,
    reason: string,
  ): Promise<GitRefDelivery> {
    const spooled = await spoolSender(this.ctx).send(envelopes);
    return { ...spooled, transport: "git", fallback_reason: reason, attempts, redacted };
  }
}

/** The writer's own ref: its worker id, its run, the time and randomness (one per process). */
function writerRef(first: Envelope): string {
  const worker = refSafe(first.sender.id) || "worker";
  const run = first.sender.run_id ? `${refSafe(first.sender.run_id)}-` : "";
  return `${EVENTS_PREFIX}${worker}/${run}${Date.now().toString(36)}-${randomBytes(5).toString("hex")}`;
}

/** A ref name component: letters, digits, `_` and `-`, not starting with `-`. */
function refSafe(text: string): string {
  return text
    .replace(/[^A-Za-z0-9_-]/g, "-")
    .replace(/^-+/, "")
    .slice(0, 64);
}

function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 80);
}
