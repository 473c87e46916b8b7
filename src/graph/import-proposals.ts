/**
 * A history import's open proposals (decisions it was too unsure of to remember) and the
 * notes that confirm them. One list and one note per proposal, whoever confirms: `director
 * confirm` ingests the notes into its buffer, MCP `memory_confirm` sends them over the
 * worker's bus, and `worker learnings` and MCP list what either takes.
 */
import type { RepoContext } from "../context/repo-context.js";
import { GIT_SENDER_ID } from "../core/history/kinds.js";
import { type HeldProposal, heldProposals, pickProposals } from "../core/history/proposals.js";
import { UsageError } from "../errors.js";
import { gitText } from "../git/git-child.js";
import { loadEngrams, readCatalog } from "../repo/memory-tree.js";
import { ENVELOPE_SCHEMA_VERSION, type Envelope } from "../schema/envelope.js";

/** The open proposals, from the work tree's memory. */
export async function listProposals(ctx: RepoContext): Promise<HeldProposal[]> {
  const catalog = await readCatalog(ctx.repoDir);
  const engrams = await loadEngrams(ctx.repoDir, catalog.entries);
  return heldProposals([...engrams.values()]);
}

export interface Confirmation {
  confirmed: { id: string; sha: string; title: string }[];
  /** One decision note per proposal, `git:<sha>:decision` as the import would have written it. */
  envelopes: Envelope[];
}

/**
 * The notes that confirm the proposals `ids` name. Confirming one twice sends the same event
 * id (a duplicate, not a second decision). An id that names no open proposal, or several, is
 * a usage error naming it and the open ones.
 */
export async function confirmationOf(
  ctx: RepoContext,
  ids: readonly string[],
  now: string,
): Promise<Confirmation> {
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
  const envelopes: Envelope[] = [];
  for (const [seq, p] of picked.entries()) {
    const commit = await commitOf(ctx.repoDir, p.sha);
    envelopes.push({
      schema_version: ENVELOPE_SCHEMA_VERSION,
      message_type: "memory_note.v1",
      // The commit's own time, so the decision sorts where the history put it (a commit
      // this clone lacks: now).
      sent_at: commit?.at ?? now,
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
    } as Envelope);
  }
  return { confirmed: picked.map((p) => ({ id: p.id, sha: p.sha, title: p.title })), envelopes };
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
