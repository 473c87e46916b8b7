import { Readable } from "node:stream";
import type { RepoContext } from "../context/repo-context.js";
import { GIT_SENDER_ID } from "../core/history/kinds.js";
import { type HeldProposal, heldProposals, pickProposals } from "../core/history/proposals.js";
import { UsageError } from "../errors.js";
import { gitText } from "../git/git-child.js";
import type { IngestCounts } from "../ingest/ingest.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import { ENVELOPE_SCHEMA_VERSION } from "../schema/envelope.js";
import { ingestSource } from "./ingest.js";

/** `director confirm` without ids: the decisions a history import proposed, still open. */
export async function listProposals(ctx: RepoContext): Promise<HeldProposal[]> {
  const catalog = await readCatalog(ctx.repoDir);
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  return heldProposals([...engrams.values()]);
}

export interface ConfirmResult extends IngestCounts {
  confirmed: { id: string; sha: string; title: string }[];
}

/**
 * `director confirm ID...`: each proposed decision named becomes a decision note of the
 * history (`git:<sha>:decision`, as the import would have written it), ingested now and
 * compacted by the next `director run`. Confirming one twice is a duplicate, not a second
 * decision. An id that names no open proposal, or several, is a usage error naming it.
 */
export async function confirmProposals(
  ctx: RepoContext,
  ids: readonly string[],
): Promise<ConfirmResult> {
  const held = await listProposals(ctx);
  const { picked, unknown, ambiguous } = pickProposals(held, ids);
  if (unknown.length > 0 || ambiguous.length > 0) {
    const open = held.map((p) => p.id).slice(0, 10);
    const parts = [
      ...(unknown.length > 0 ? [`no open proposal ${unknown.join(", ")}`] : []),
      ...(ambiguous.length > 0 ? [`${ambiguous.join(", ")} names several: give more digits`] : []),
    ];
    throw new UsageError(
      `confirm: ${parts.join("; ")} (${held.length === 0 ? "no proposal is open" : `open: ${open.join(", ")}${held.length > open.length ? ", ..." : ""}`}; list them with \`director confirm\`)`,
    );
  }
  const lines: string[] = [];
  for (const [seq, p] of picked.entries()) {
    const commit = await commitOf(ctx.repoDir, p.sha);
    lines.push(
      JSON.stringify({
        schema_version: ENVELOPE_SCHEMA_VERSION,
        message_type: "memory_note.v1",
        // The commit's own time, so the decision sorts where the history put it (a commit
        // this clone lacks: now).
        sent_at: commit?.at ?? new Date().toISOString(),
        sender: { role: "operator", id: GIT_SENDER_ID },
        seq,
        event_id: `git:${commit?.sha ?? p.sha}:decision`,
        payload: {
          kind: "decision",
          text: p.title,
          ...(p.rationale ? { rationale: p.rationale } : {}),
          topics: p.topics,
          links: [{ type: "commit", ref: commit?.sha ?? p.sha }],
        },
      }),
    );
  }
  const { noteLines: _n, ...counts } = await ingestSource(ctx, {
    stream: Readable.from([lines.map((l) => `${l}\n`).join("")]),
    name: "confirm",
  });
  return {
    confirmed: picked.map((p) => ({ id: p.id, sha: p.sha, title: p.title })),
    ...counts,
  };
}

/** The full sha and committer time of a commit, when the repository has it. */
async function commitOf(
  dir: string,
  sha: string,
): Promise<{ sha: string; at: string } | undefined> {
  const out = await gitText(dir, ["log", "-1", "--format=%H %ct", `${sha}^{commit}`, "--"]);
  const m = out === undefined ? null : /^([0-9a-f]{40}) (\d+)/.exec(out.trim());
  return m ? { sha: m[1] as string, at: new Date(Number(m[2]) * 1000).toISOString() } : undefined;
}
