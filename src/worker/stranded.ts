/**
 * Notes stranded in a spool no Director drains: a clone's own `.engram/spool`, or any
 * checkout without Director state. Never silent: every send that lands there says so, and
 * `worker check` reports what waits there.
 */

import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { shownPath } from "../context/within.js";
import type { Envelope } from "../schema/envelope.js";
import { listSpoolFiles } from "../state/spool.js";

/**
 * Whether a Director keeps its state in this checkout's state folder or in the one holding
 * its spool (a worktree's main worktree): `director init` makes its buffer folder, a cycle
 * fills it. A Director in either drains this spool.
 */
export function directorDrains(ctx: Pick<RepoContext, "paths">): boolean {
  return [ctx.paths.root, ctx.paths.spoolRoot].some(
    (root) => existsSync(join(root, "buffer")) || existsSync(join(root, "director.lock")),
  );
}

/** What waits in a spool no Director drains; null when it is empty or a Director drains it. */
export interface UndrainedSpool {
  /** The spool folder. */
  path: string;
  files: number;
  /** When the oldest file was written (its name's millisecond stamp), ISO-8601 UTC. */
  oldest: string | null;
}

export function undrainedSpool(ctx: Pick<RepoContext, "paths">): UndrainedSpool | null {
  if (directorDrains(ctx)) return null;
  const files = listSpoolFiles(ctx.paths.spool);
  if (files.length === 0) return null;
  const stamp = Number(/^(\d+)-/.exec(basename(files[0] as string))?.[1]);
  return {
    path: ctx.paths.spool,
    files: files.length,
    oldest: Number.isSafeInteger(stamp) ? new Date(stamp).toISOString() : null,
  };
}

/** What to do about a stranded spool, said the same way everywhere. */
export function strandedRemedy(): string {
  return 'set the team\'s bus (ENGRAM_BUS=git:origin, or [worker] bus = "git:origin" in config/dev.toml, or --bus), then run `worker resend` to send what waits there';
}

/** The spool as the user sees it from the repository. */
function shownSpool(ctx: Pick<RepoContext, "repoDir" | "paths">): string {
  return shownPath(ctx.repoDir, ctx.paths.spool);
}

/**
 * The warning for envelopes just spooled where no Director drains them; undefined when a
 * Director drains this spool, or when they are only recall signals (a promotion hint,
 * spooled by design on every recall: not worth a word each time).
 */
export function strandedWarning(
  ctx: Pick<RepoContext, "repoDir" | "paths">,
  envelopes: readonly Envelope[],
  fallbackReason: string | undefined,
): string | undefined {
  if (envelopes.every(isRecallSignal) || directorDrains(ctx)) return undefined;
  const where = `spooled in ${shownSpool(ctx)}, which no Director drains (no Director state in this checkout or its main worktree)`;
  if (fallbackReason !== undefined) {
    return `${where}: the bus was unavailable (${fallbackReason}); run \`worker resend\` once it is back`;
  }
  return `${where}: it will not reach memory from there; ${strandedRemedy()}`;
}

function isRecallSignal(envelope: Envelope): boolean {
  return (
    envelope.message_type === "memory_event.v1" &&
    (envelope.payload as { kind?: unknown }).kind === "recall"
  );
}
