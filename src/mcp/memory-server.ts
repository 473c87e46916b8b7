import { existsSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { workerBus } from "../bus/worker-bus.js";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { learningTypeOf } from "../core/graph/learnings.js";
import { FOCUS_PATH } from "../core/model/paths.js";
import { DEFAULT_RECALL_TOKENS } from "../core/recall/fit.js";
import { recallScope } from "../graph/scope.js";
import { readCatalog } from "../repo/memory-tree.js";
import { emitNotes } from "../worker/emit.js";
import { recallIn, recordRecall } from "../worker/recall.js";
import { confirmTool, learningsTool } from "./learning-tools.js";
import { LoadedMemory } from "./loaded-memory.js";
import { serveTools, type ToolSpec } from "./protocol.js";
import { serveResources } from "./resources.js";
import { remoteRecallPart, syncTool } from "./sync-tools.js";
import { structured } from "./tool-result.js";
import {
  contextInput,
  contextOutput,
  emitInput,
  emitOutput,
  freshnessInput,
  freshnessOutput,
  recallInput,
  recallOutput,
  statusInput,
  statusOutput,
} from "./tool-schemas.js";

/**
 * engram's own MCP server: the worker's read and write operations as MCP tools, and the
 * memory files as resources. Every tool answers with structured content checked against
 * its output schema; a failure is a tool result with `isError`, never a crash of the server.
 */

export interface MemoryServerOptions {
  /** The version the server reports in its initialize answer. */
  version: string;
  /** Worker id for recall signals and notes (default: the worker's usual id). */
  worker?: string | undefined;
  /** Loaded memory shared by the servers of one process (one per HTTP session). */
  memory?: LoadedMemory | undefined;
}

/** Recall signals still being sent, by every server of this process. */
const signalsInFlight = new Set<Promise<unknown>>();

/**
 * Waits for the recall signals still being sent: over a networked bus a signal outlives the
 * answer, and a server stopping must not drop it.
 */
export async function signalsSent(): Promise<void> {
  await Promise.allSettled([...signalsInFlight]);
}

/** A new server (one per connection: an McpServer serves one transport). */
export function createMemoryServer(ctx: RepoContext, options: MemoryServerOptions): McpServer {
  const memory = options.memory ?? new LoadedMemory(ctx);
  let signals: Promise<unknown> = Promise.resolve();
  const server = new McpServer(
    { name: "engram", version: options.version },
    {
      instructions:
        "engram is this repository's shared memory. Call memory_recall before starting work on a topic, memory_emit to record a decision, fact, lesson or convention worth keeping (recall finds it after the next `director run`), read engram://MEMORY.md for the current focus, and see memory_learnings for decisions a history import proposed, which memory_confirm confirms by id.",
    },
  );

  const recall: ToolSpec<typeof recallInput, typeof recallOutput> = {
    name: "memory_recall",
    title: "Recall memory",
    description:
      "Search this repository's memory (engrams on main) and its commit history for the notes that answer a question: each hit is one fact, decision, lesson, episode or commit, whole when it fits the token budget (512 by default), with where it lives, when and who. Every answer states the scope searched; an empty answer says whether memory itself is empty or the query matched nothing.",
    input: recallInput,
    output: recallOutput,
    annotations: { readOnlyHint: false, openWorldHint: false },
    async run(input) {
      const tiers: ("st" | "lt")[] = input.tiers ? [...new Set(input.tiers)].sort() : ["lt", "st"];
      const history = input.history !== false;
      const loaded = await memory.get();
      const result = await recallIn(ctx, loaded, input.query, {
        limit: input.limit,
        scopes: history ? [...tiers, "history"] : tiers,
        maxTokens: input.max_tokens ?? DEFAULT_RECALL_TOKENS,
        signal: false,
        includeSuperseded: input.include_superseded === true,
      });
      // The recall signal (a promotion hint) is sent over the worker's bus after the answer,
      // one at a time, so an agent does not wait for its fsync or push.
      const engrams = [
        ...new Set(result.hits.flatMap((h) => (h.engram_id !== undefined ? [h.engram_id] : []))),
      ];
      if (engrams.length > 0) {
        const sent = signals
          .then(() => recordRecall(ctx, input.query, engrams, options.worker))
          .catch(() => undefined);
        signals = sent;
        signalsInFlight.add(sent);
        void sent.finally(() => signalsInFlight.delete(sent));
      }
      const remote = await remoteRecallPart(ctx, input, result.hits.length);
      const scope = {
        ...recallScope(ctx, loaded.catalog, tiers),
        history_in_scope: history,
        remote_store: { asked: remote.remote.asked, reason: remote.remote.reason },
      };
      const status =
        result.hits.length + remote.remote_hits.length > 0
          ? "found"
          : scope.engrams_in_scope === 0
            ? "memory_empty"
            : "no_match";
      const message =
        status === "memory_empty"
          ? `no engram in tiers ${tiers.join(", ")} of ${scope.repository} at memory version ${scope.memory_version}: memory is empty there, not the query`
          : status === "no_match"
            ? `no note of ${scope.engrams_in_scope} engram(s)${history ? " or the commit history" : ""} in scope matched "${input.query}"`
            : `${result.hits.length} hit(s) in ${result.tokens} token(s) from ${scope.engrams_in_scope} engram(s)${history ? " and the commit history" : ""} in scope${remote.remote_hits.length > 0 ? `, ${remote.remote_hits.length} from the sync stores` : ""}`;
      return structured({
        status,
        message,
        scope,
        hits: result.hits.map((h) => ({ ...h, source: "local" as const })),
        tokens: result.tokens,
        max_tokens: result.max_tokens ?? DEFAULT_RECALL_TOKENS,
        signal: engrams.length > 0,
        ...remote,
      });
    },
  };

  const context: ToolSpec<typeof contextInput, typeof contextOutput> = {
    name: "memory_context",
    title: "Context for a topic",
    description:
      "The learnings related to a topic (its words, then learnings linked to the same files, projects and people), ranked and fitted to a token budget counted with a real tokenizer, as markdown ready to paste into a prompt. States its scope; tells an empty memory from a topic that matched nothing.",
    input: contextInput,
    output: contextOutput,
    annotations: { readOnlyHint: true },
    async run(input) {
      const { topicContext } = await import("../graph/queries.js");
      const r = await topicContext(ctx, input.topic, {
        maxTokens: input.max_tokens ?? 2000,
        type: input.type === undefined ? undefined : learningTypeOf(input.type),
      });
      return structured({ ...r });
    },
  };

  const freshness: ToolSpec<typeof freshnessInput, typeof freshnessOutput> = {
    name: "memory_freshness",
    title: "Freshness of learnings",
    description:
      "Which learnings are stale: contextual freshness is the newer of when a learning was confirmed and when anything it links to (files, projects, components, people) last moved in git; the temporal-only verdict is given beside it.",
    input: freshnessInput,
    output: freshnessOutput,
    annotations: { readOnlyHint: true },
    async run(input) {
      const { learningFreshness } = await import("../graph/queries.js");
      const now = Math.floor(Date.parse(receiptTime()) / 1000);
      const r = await learningFreshness(ctx, {
        thresholdDays: input.threshold_days ?? 30,
        now,
        env: process.env,
      });
      const learnings =
        input.stale_only === false ? r.learnings : r.learnings.filter((l) => !l.fresh);
      return structured({ ...r, learnings });
    },
  };

  const emit: ToolSpec<typeof emitInput, typeof emitOutput> = {
    name: "memory_emit",
    title: "Record a note",
    description:
      "Record something worth remembering, as `worker emit` does: a memory_note.v1 over the worker's bus (ENGRAM_BUS, else [worker] bus, else the local spool), durable when this returns. It is not in memory yet: memory_recall finds it after the next `director run` has compacted it into an engram (for the team, once that run's memory pull request is merged). Secrets are redacted by the Director; mark private matters as sensitive.",
    input: emitInput,
    output: emitOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    async run(input) {
      // One note through emitNotes: its errors name the payload field, not a CLI flag.
      const r = await emitNotes(
        ctx,
        [
          {
            kind: input.kind,
            text: input.text,
            rationale: input.rationale,
            topics: input.topics,
            links: input.links,
            confidence: input.confidence,
            outcome: input.outcome,
            privacy: input.privacy,
            issue: input.issue,
            supersedes: input.supersedes,
          },
        ],
        { worker: options.worker },
        workerBus(ctx, undefined).url,
        () => "memory_emit",
      );
      const eventId = r.event_ids[0] ?? "";
      return structured({
        event_id: eventId,
        spooled: r.spooled,
        transport: r.transport,
        message:
          r.warning !== undefined
            ? `recorded ${eventId}, but ${r.warning}`
            : `recorded ${eventId} on the ${r.transport}: memory_recall finds it once the next \`director run\` has compacted it into an engram (for the team, once that run's memory pull request is merged)`,
        ...(r.warning !== undefined ? { warning: r.warning } : {}),
      });
    },
  };

  const status: ToolSpec<typeof statusInput, typeof statusOutput> = {
    name: "memory_status",
    title: "Memory status",
    description: "The catalog version and hash, tier sizes and whether MEMORY.md is present.",
    input: statusInput,
    output: statusOutput,
    annotations: { readOnlyHint: true },
    async run() {
      const catalog = await readCatalog(ctx.repoDir);
      const tier = (scope: "st" | "lt") => {
        const entries = catalog.entries.filter((e) => e.scope === scope);
        return {
          files: entries.length,
          bytes: entries.reduce((sum, e) => sum + fileBytes(join(ctx.repoDir, e.path)), 0),
        };
      };
      const focusPath = join(ctx.repoDir, FOCUS_PATH);
      return structured({
        scope: recallScope(ctx, catalog, ["lt", "st"]),
        catalog: {
          version: catalog.catalog_version,
          hash: catalog.hash,
          entries: catalog.entries.length,
        },
        tiers: { st: tier("st"), lt: tier("lt") },
        focus: { present: existsSync(focusPath), bytes: fileBytes(focusPath) },
      });
    },
  };

  serveTools(server, [
    recall,
    context,
    freshness,
    emit,
    status,
    syncTool(ctx),
    learningsTool(ctx),
    confirmTool(ctx),
  ]);
  serveResources(server, ctx);
  return server;
}

/** A file's size; a symbolic link counts as itself, never as what it points to. */
function fileBytes(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}
