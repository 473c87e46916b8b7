import { resolve } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { UsageError } from "../errors.js";
import type { MarkdownReport } from "../sources/markdown.js";
import type { TargetName } from "../sync/service.js";
import { type CommandOutput, type ParsedArgs, stringOption } from "./args.js";
import { EXIT } from "./main.js";

/** How memory is made to leave the machine: said wherever privacy keeps something back. */
const SHARE_HOW =
  'To share a note, emit it with `worker emit --privacy public` (or `--privacy sensitive`: sent encrypted, once approved with `director sync approve`), and knowledge written in a session with `worker session write --privacy public`; `[sync] default_privacy = "public"` in config/dev.toml shares the items that carry no privacy of their own (memory versions). See docs/sync.md, "Privacy and approval".';

/**
 * `director sync run` (and `sync --id`): a run, a dry run (`--dry-run`), or a hook that syncs
 * in a detached process (`--hook`). Output: the engine's figures, the seed's statistics
 * (processed / succeeded / failed / skipped) and, with `--verbose`, each file and item.
 */
export async function runAction(
  ctx: RepoContext,
  args: ParsedArgs,
  target: TargetName,
  requested: readonly string[],
): Promise<CommandOutput> {
  const all = args.values.all === true;
  const verbose = args.values.verbose === true;
  if (args.values["dry-run"] === true) {
    const { syncDryRun } = await import("../sync/dry-run.js");
    const tana = target === "tana" ? await tanaInputs(ctx) : null;
    const r = await syncDryRun(ctx, target, { all, ...(tana ? { tana } : {}) });
    const lines = [
      `${target}: dry run; would send ${r.would_send.length} item(s), no call made`,
      ...r.would_send.map(
        (s) =>
          `  ${s.action} ${s.key}${s.file !== null ? ` (${s.file})` : ""}: ${s.title}${s.parts !== null && s.parts > 1 ? ` [${s.parts} parts]` : ""}`,
      ),
      ...(r.awaiting_approval.length > 0
        ? [`${r.awaiting_approval.length} sensitive item(s) would wait for approval`]
        : []),
      ...(r.markdown !== null && verbose ? markdownLines(r.markdown) : []),
    ];
    const warnings = [...(tana?.warnings ?? []), ...(r.markdown?.warnings ?? [])];
    return { json: r, text: `${lines.join("\n")}\n`, warnings };
  }
  if (args.values.hook === true) {
    const hook = await import("../sync/hook.js");
    const config = stringOption(args, "config");
    const r = hook.startHook(ctx, target, {
      node: process.execPath,
      entry: process.argv[1] ?? "",
      args: [
        "sync",
        "run",
        "--target",
        target,
        "--repo",
        ctx.repoDir,
        ...(config !== undefined ? ["--config", resolve(config)] : []),
        ...(all ? ["--all"] : []),
        ...(args.values.force === true ? ["--force"] : []),
      ],
      env: process.env,
    });
    const text = r.started
      ? `sync hook: ${target} syncs in the background (pid ${r.pid}); log: ${r.log}\n`
      : `sync hook: ${r.reason}\n`;
    return { json: r, text };
  }
  if (requested.length > 0) {
    const { privateRequested } = await import("../sync/service.js");
    const refused = await privateRequested(ctx, target, requested);
    if (refused.length > 0) {
      throw new UsageError(
        `--id ${refused.join(", ")}: private; a private item never leaves this machine, and --id does not change that. Nothing was sent. ${SHARE_HOW}`,
      );
    }
  }
  const [ops, hook] = await Promise.all([
    import("../sync/operations.js"),
    import("../sync/hook.js"),
  ]);
  // The detached half of --hook: it holds the hook lock until it has said how its run went
  // (its output is hook.log, written synchronously before the process exits), so a hook
  // started after it never shares the log, and whoever waits for the lock reads it whole.
  const hookLock = process.env[hook.HOOK_CHILD_ENV];
  if (hookLock !== undefined && hookLock !== "") {
    process.once("exit", () => hook.releaseHookLock(hookLock, process.pid));
  }
  const tana = target === "tana" ? await tanaInputs(ctx) : null;
  const r = await ops.syncRun(ctx, {
    target,
    ids: requested,
    force: args.values.force === true,
    all,
    resync: args.values.resync === true,
    ...(tana ? { registry: tana.registry, learnings: tana.learnings } : {}),
    // Large sets take a while at Tana's one call a second: a terminal sees them move.
    ...(process.stderr.isTTY
      ? {
          progress: (done: number, total: number) => {
            process.stderr.write(
              `\r${target}: ${done}/${total} item(s) sent${done === total ? "\n" : ""}`,
            );
          },
        }
      : {}),
  });
  const st = r.stats;
  const lines = [
    `${r.target}: ${r.mode}; queued ${r.queued.added} new, ${r.queued.updated} changed (${r.queued.private} private kept local)`,
    `sent ${r.sent.created_or_updated}, retry later ${r.sent.retry_later}, failed ${r.sent.failed}, deferred ${r.sent.deferred} (outcome unknown, looked up again later)`,
    `items: processed ${st.processed}, succeeded ${st.succeeded}, failed ${st.failed}, deferred ${st.deferred}, skipped ${st.skipped}`,
    `queue: ${r.depth.pending} pending (${r.depth.awaiting_approval} awaiting approval), ${r.depth.failed} failed, ${r.depth.synced} synced`,
    ...(r.tana ? [ops.tanaSummary(r.tana)] : []),
    ...(verbose
      ? [
          `health: ${r.health.healthy ? "healthy" : `unhealthy (${r.health.error}: ${r.health.message})`}, ${r.health.latency_ms} ms`,
          ...(r.markdown !== null ? markdownLines(r.markdown) : []),
        ]
      : []),
  ];
  // Everything private, nothing sent: the first run of a new user, who should hear why.
  const allPrivate =
    r.queued.private > 0 &&
    r.sent.created_or_updated === 0 &&
    r.depth.pending === 0 &&
    r.depth.synced === 0 &&
    r.depth.awaiting_approval === 0;
  if (allPrivate) {
    lines.push(
      `nothing sent: all ${r.queued.private} item(s) are private (notes are, unless emitted otherwise) and private items never leave this machine. ${SHARE_HOW}`,
    );
  }
  return {
    json: allPrivate ? { ...r, nothing_shareable: true } : r,
    text: `${lines.join("\n")}\n`,
    warnings: [...(tana?.warnings ?? []), ...r.notices],
    exitCode: EXIT.ok,
  };
}

/** Tana's people and projects to link, and the learning states (`worker learnings`). */
async function tanaInputs(ctx: RepoContext) {
  return (await import("../graph/learning-states.js")).tanaInputs(ctx, process.env);
}

function markdownLines(m: MarkdownReport): string[] {
  return [
    `markdown: ${m.files} file(s) in ${m.folders} folder(s): ${m.new.length} new, ${m.changed.length} changed, ${m.removed.length} removed, ${m.unchanged} unchanged, ${m.waiting} waiting in the queue, ${m.deferred} deferred to the next run, ${m.excluded} engram output excluded, ${m.redactions} secret(s) redacted`,
    ...m.new.map((f) => `  new ${f.file} -> ${f.key}`),
    ...m.changed.map((f) => `  changed ${f.file} -> ${f.key}`),
    ...m.removed.map((f) => `  removed ${f.file} -> ${f.key}`),
  ];
}
