import type { RepoContext } from "../context/repo-context.js";
import { ServiceError, UsageError } from "../errors.js";
import type { TargetName } from "../sync/target-names.js";
import { type Command, type CommandOutput, listOption, repoOptions, stringOption } from "./args.js";
import { runAction } from "./sync-run-command.js";

const ACTIONS = ["run", "status", "pending", "approve", "reject", "retry", "init"] as const;

const pct = (v: number | null) => (v === null ? "n/a" : `${Math.round(v * 1000) / 10}%`);

/**
 * `director sync ACTION`: the sync engine's commands. The engine and the store's client are
 * loaded only here, so other commands start without them.
 */
export const SYNC_COMMAND: Command = {
  name: "sync",
  summary:
    "Send memory (and, to the knowledge graph, markdown files) to an external store (Notion, Graphiti, Tana): run | status | pending | approve ID... | reject ID... | retry --id ID|--all | init; --id ID syncs one item whatever the policy says. Private items never leave; sensitive ones only approved, encrypted.",
  usage:
    "director sync run|status|pending|approve ID...|reject ID...|init [--target notion|graphiti|tana] [--force] [--resync] [--all] [--dry-run] [--verbose] [--hook] | director sync retry --id ID...|--all [--target NAME] | director sync --id ID... [--repo DIR] [--config FILE] [--json]",
  options: {
    target: {
      type: "string",
      value: "NAME",
      description: "the external store: notion (default), graphiti or tana",
    },
    id: {
      type: "string",
      multiple: true,
      value: "ID",
      description:
        "sync this item (a local id, e.g. ep_..., or type:id) whatever the policy says; with retry: the failed item to put back to pending",
    },
    force: {
      type: "boolean",
      description: "with run: send priority 2 items now instead of waiting for the batch interval",
    },
    resync: {
      type: "boolean",
      description: "with run --target tana: create again the nodes whose mapping is stale",
    },
    all: {
      type: "boolean",
      description:
        "with run: send everything again, changed or not (the store replaces its copy); with retry: every failed item",
    },
    "dry-run": {
      type: "boolean",
      description: "with run: list what would be sent; no call to the store, nothing written",
    },
    verbose: {
      type: "boolean",
      description: "with run: each file and item, the health check and every warning",
    },
    hook: {
      type: "boolean",
      description:
        "with run: for a session-start hook; syncs in a detached process and returns at once (one hook at a time)",
    },
  },
  positionals: [0, 1000],
  async run(args): Promise<CommandOutput> {
    const [action, ...ids] = args.positionals;
    const requested = listOption(args, "id");
    if (action === undefined && requested.length === 0) {
      throw new UsageError(
        `expected an action (${ACTIONS.join(", ")}) or --id ID\n\nusage: ${SYNC_COMMAND.usage}`,
      );
    }
    if (action !== undefined && !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`unknown sync action "${action}" (known: ${ACTIONS.join(", ")})`);
    }
    const needsIds = action === "approve" || action === "reject";
    if (needsIds && ids.length === 0)
      throw new UsageError(`sync ${action}: expected at least one ID`);
    if (!needsIds && ids.length > 0) throw new UsageError(`sync ${action}: takes no ID (use --id)`);
    if (requested.length > 0 && action !== undefined && action !== "run" && action !== "retry") {
      throw new UsageError(`--id goes with sync run or retry (or alone), not with sync ${action}`);
    }
    const runFlags = (["all", "dry-run", "hook"] as const).filter(
      (f) => args.values[f] === true && !(f === "all" && action === "retry"),
    );
    if (runFlags.length > 0 && action !== "run") {
      throw new UsageError(
        `--${runFlags[0]} goes with sync run, not with sync ${action ?? "--id"}`,
      );
    }
    if (args.values.hook === true && (args.values["dry-run"] === true || requested.length > 0)) {
      throw new UsageError("--hook runs a whole sync; it does not go with --dry-run or --id");
    }
    if (args.values["dry-run"] === true && requested.length > 0) {
      throw new UsageError("--dry-run lists a whole run; it does not go with --id");
    }
    const { parseTarget } = await import("../sync/target-names.js");
    const target = parseTarget(stringOption(args, "target"));
    // Imported here, not at the top: see the note in worker-commands.ts.
    const { openContext } = await import("../context/repo-context.js");
    const ctx = await openContext(repoOptions(args));
    // A hook must return at once: it loads no store client (the detached run does).
    if (args.values.hook === true) return runAction(ctx, args, target, requested);
    const ops = await import("../sync/operations.js");
    switch (action) {
      case "status": {
        const s = await ops.syncStatus(ctx, target);
        const m = s.metrics;
        // Kinds are "ok" only as far as a store that answers says so: unhealthy, nothing is known.
        const health = s.health.healthy
          ? s.health
          : {
              ...s.health,
              schema: Object.fromEntries(Object.keys(s.health.schema).map((k) => [k, "unknown"])),
            };
        const down = s.health.healthy ? null : await whyDown(ctx, target);
        const lines = [
          `${s.target}: ${health.healthy ? "healthy" : `unhealthy (${health.error}: ${health.message})`}, ${health.latency_ms} ms`,
          ...(down !== null
            ? [`  cannot reach ${down.url}: ${down.reason}`, `  ${down.advice}`]
            : []),
          ...Object.entries(health.schema).map(
            ([type, state]) =>
              `  ${type}: ${state}${state === "unknown" ? " (the store did not answer)" : ""}`,
          ),
          `queue: ${s.depth.pending} pending (${s.depth.awaiting_approval} awaiting approval), ${s.depth.failed} failed, ${s.depth.synced} synced; ${s.mapped} mapped`,
          `success rate ${pct(m.success_rate)} of ${m.sends} sends; surprise sync rate ${pct(m.surprise_sync_rate)}; extension hit rate ${pct(m.extension_hit_rate)}; average latency ${m.average_latency_ms ?? "n/a"} ms; uptime ${pct(m.uptime)}`,
        ];
        return {
          json: { ...s, health, ...(down !== null ? { unreachable: down } : {}) },
          text: `${lines.join("\n")}\n`,
        };
      }
      case "pending": {
        const items = ops.syncPending(ctx, target);
        const text =
          items.length === 0
            ? "no sensitive item waits for approval\n"
            : `${items.map((i) => `${i.local_id} ${i.type} priority ${i.priority} (${i.reasons.join(", ")}) ${JSON.stringify(i.preview)}`).join("\n")}\n`;
        return { json: { items }, text };
      }
      case "approve":
      case "reject": {
        const r = await ops.syncDecide(
          ctx,
          target,
          ids,
          action === "approve" ? "approved" : "rejected",
        );
        return {
          json: r,
          text: `${action === "approve" ? "approved" : "rejected"}: ${r.decided.join(", ")}\n`,
        };
      }
      case "retry": {
        const r = await ops.syncRetry(ctx, target, {
          ids: requested,
          all: args.values.all === true,
        });
        const text =
          r.requeued.length === 0
            ? "no failed item to retry\n"
            : `pending again (sent by the next sync run): ${r.requeued.join(", ")}\n`;
        return { json: r, text };
      }
      case "init": {
        const r = await initReachable(ctx, target, () => ops.syncInit(ctx, target), ops);
        const lines = [
          ...r.created.map((t) => `created ${t} database ${r.ids[t]}`),
          ...r.validated.map((t) =>
            r.ids[t] !== undefined ? `validated ${t} database ${r.ids[t]}` : `${t}: ready`,
          ),
        ];
        return { json: r, text: `${lines.join("\n")}\n` };
      }
      default:
        return runAction(ctx, args, target, requested);
    }
  },
};

type Ops = typeof import("../sync/operations.js");

/** Where an unhealthy store lives, why it cannot be reached, and what to check (null: it can). */
async function whyDown(ctx: RepoContext, target: TargetName) {
  const { reachAdvice, storeUrl, unreachableReason } = await import("../sync/reachability.js");
  const url = storeUrl(ctx, target);
  if (url === null) return null;
  const timeout = ctx.config.sync.graphiti.health_timeout_seconds * 1000;
  const reason = await unreachableReason(url, timeout);
  return reason === null ? null : { url, reason, advice: reachAdvice(target) };
}

/**
 * `sync init` against a store that cannot be reached names its URL, what failed and what to
 * check, instead of the client's bare "fetch failed"; Graphiti, which needs no schema made,
 * is asked for its health first, so a server that is down is not reported ready.
 */
async function initReachable<T>(
  ctx: RepoContext,
  target: TargetName,
  init: () => Promise<T>,
  ops: Ops,
): Promise<T> {
  const refuse = async (cause: unknown, fallback: string | null) => {
    const down = await whyDown(ctx, target);
    if (down === null && fallback === null) throw cause;
    const what = down !== null ? `cannot reach ${down.url}: ${down.reason}` : fallback;
    throw new ServiceError(
      `sync init --target ${target}: ${what}; nothing was created. ${down?.advice ?? "run director sync status for details"}`,
      "sync_target",
      { cause },
    );
  };
  if (target === "graphiti") {
    const s = await ops.syncStatus(ctx, target);
    if (!s.health.healthy) await refuse(undefined, `unhealthy (${s.health.message})`);
  }
  try {
    return await init();
  } catch (error) {
    // Only a store that failed is looked at: a config problem says what it is by itself.
    if (target === "tana" || (error as { code?: unknown }).code !== "sync_target") throw error;
    return refuse(error, null);
  }
}
