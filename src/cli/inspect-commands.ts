/**
 * The commands that look and change nothing: `director verify` (every hash and budget checked)
 * and `director status` (budgets and the swarm). `status` is among the most frequent
 * commands: its work loads only when it runs.
 */
import type { RepoContext } from "../context/repo-context.js";
import { type Command, type ParsedArgs, repoOptions } from "./args.js";
import { EXIT } from "./main.js";
import { humanBudget } from "./sizes.js";

/** The repository context every command opens, loaded on demand. */
async function openCtx(args: ParsedArgs): Promise<RepoContext> {
  const { openContext } = await import("../context/repo-context.js");
  return openContext(repoOptions(args));
}

/** `director verify`: one line per problem, exit 1 when there is any. */
export const VERIFY_COMMAND: Command = {
  name: "verify",
  summary:
    "Recompute every hash and check paths, ids, duplicates, layout and budgets; one line per problem.",
  usage: "director verify [--repo DIR] [--config FILE] [--json]",
  options: {},
  async run(args) {
    const [{ verifyRepository }, { formatFinding }] = await Promise.all([
      import("../director/verify.js"),
      import("../core/checks/findings.js"),
    ]);
    const ctx = await openCtx(args);
    const findings = await verifyRepository(ctx);
    const text =
      findings.length === 0
        ? "ok: memory verified\n"
        : `${findings.map(formatFinding).join("\n")}\n`;
    return {
      json: { ok: findings.length === 0, findings },
      text,
      exitCode: findings.length === 0 ? EXIT.ok : EXIT.findings,
    };
  },
};

/** `director status`: the budgets, the spool, the quarantine and the swarm; `--snapshot` as NDJSON. */
export const STATUS_COMMAND: Command = {
  name: "status",
  summary:
    "Show the buffer, tiers, focus view, quarantine and spool against their budgets, and the swarm: each worker's stage, liveness and drift from main.",
  usage: "director status [--snapshot] [--repo DIR] [--config FILE] [--json]",
  options: {
    snapshot: {
      type: "boolean",
      description:
        "print the status as one project_state_snapshot.v1 envelope (NDJSON) for operator tools",
    },
  },
  async run(args) {
    const { readStatus, snapshotEnvelope } = await import("../director/status.js");
    const ctx = await openCtx(args);
    const s = await readStatus(ctx);
    if (args.values.snapshot === true) {
      const { receiptTime } = await import("../clock.js");
      const envelope = snapshotEnvelope(s, receiptTime());
      return { json: envelope, text: `${JSON.stringify(envelope)}\n` };
    }
    const lines = [
      `catalog: version ${s.catalog.version}, ${s.catalog.entries} engrams, ${s.catalog.hash}`,
      `buffer:  ${s.buffer.events}/${s.buffer.max_events} events, ${humanBudget(s.buffer.bytes, s.buffer.max_bytes)}`,
      `st:      ${s.tiers.st.files}/${s.tiers.st.max_files} files, ${humanBudget(s.tiers.st.bytes, s.tiers.st.max_bytes)}`,
      `lt:      ${s.tiers.lt.files}/${s.tiers.lt.max_files} files, ${humanBudget(s.tiers.lt.bytes, s.tiers.lt.max_bytes)}`,
      `focus:   ${s.focus.present ? `${s.focus.items}/${s.focus.max_items} items, ${humanBudget(s.focus.bytes, s.focus.max_bytes)}${s.focus.fresh ? "" : " (stale)"}` : "missing"}`,
      `spool:   ${s.spool.files} file(s) waiting${refusedLine(s.spool.refused)}`,
      `quarantine: ${s.quarantine.records} record(s) of ${s.quarantine.lines} line(s)${Object.entries(
        s.quarantine.by_reason,
      )
        .map(([k, v]) => ` ${k}=${v}`)
        .join(
          "",
        )}${s.quarantine.dropped.lines > 0 ? `; over its budget: ${s.quarantine.dropped.lines} line(s) dropped, ${s.quarantine.dropped.bytes} bytes` : ""}`,
      `last compaction: ${s.last_compaction_at ?? "never"}`,
      `workers:${s.swarm.workers.length === 0 ? " none heard from" : ""}`,
      ...s.swarm.workers.map(
        (w) =>
          `  ${w.worker}: ${w.live ? "live" : "silent"}, last seen ${Math.round(w.age_seconds)} s ago` +
          `${w.stage ? `, stage ${w.stage}` : ""}${w.issue ? `, issue ${w.issue}` : ""}` +
          `${w.progress !== null ? `, ${Math.round(w.progress * 100)}%` : ""}` +
          `${w.errors > 0 ? `, ${w.errors} error(s)` : ""}${w.catalog_mismatch ? ", sees another catalog" : ""}` +
          `${w.drift?.sync_required ? `, must sync (${w.drift.reason}: ${w.drift.required_action})` : ""}`,
      ),
      ...s.swarm.errors.map((e) => `  error ${e.error_type} x${e.count} (${e.workers.join(", ")})`),
      ...s.swarm.liveness_problems.map((p) => `  note: ${p}`),
    ];
    return { json: s, text: `${lines.join("\n")}\n` };
  },
};

/** `; refused: a (2 sends, 9000 bytes)`: the senders whose share of the spool was full. */
function refusedLine(refused: Record<string, { sends: number; bytes: number }>): string {
  const senders = Object.entries(refused);
  if (senders.length === 0) return "";
  const each = senders.map(([id, c]) => `${id} (${c.sends} send(s), ${c.bytes} bytes)`);
  return `; refused at their share: ${each.join(", ")}`;
}
