import { z } from "zod";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { LEARNING_STATUSES } from "../core/graph/lifecycle.js";
import type { ToolSpec } from "./protocol.js";
import { structured } from "./tool-result.js";
import { LEARNING_TYPES } from "./tool-schemas.js";

/*
 * propose -> confirm over MCP: `memory_learnings` is `worker learnings` (with the history
 * import's open proposals) and `memory_confirm` is `director confirm ID...`, through the same
 * functions, so an agent confirms what a person would with the same effect.
 */

const importProposal = z.object({
  id: z.string(),
  status: z.literal("proposed"),
  type: z.literal("decision"),
  text: z.string(),
  rationale: z.string().nullable(),
  confidence: z.number(),
  commit: z.string(),
  engram_id: z.string(),
  topics: z.array(z.string()),
  confirm: z.string(),
});

export const learningsInput = z.strictObject({
  status: z
    .enum(LEARNING_STATUSES)
    .optional()
    .describe("only learnings of this status: proposed, confirmed or rejected"),
  type: z.enum(LEARNING_TYPES).optional().describe("only learnings of this type"),
});

export const learningsOutput = z.object({
  base: z.string(),
  branch: z.string(),
  github: z.object({
    asked: z.boolean(),
    pulls: z.number().int(),
    unreadable: z.array(z.number().int()),
  }),
  counts: z.object({
    proposed: z.number().int(),
    confirmed: z.number().int(),
    rejected: z.number().int(),
  }),
  learnings: z.array(
    z.object({
      id: z.string(),
      status: z.enum(LEARNING_STATUSES),
      type: z.enum(LEARNING_TYPES),
      text: z.string(),
      confidence: z.number().nullable(),
      source: z.string(),
      entities: z.array(z.string()),
      evidence: z.number().int(),
      confirmed_at: z.string().nullable(),
      decided_at: z.string().nullable(),
      where: z.string(),
      pr: z.number().int().nullable(),
      engrams: z.array(z.string()),
    }),
  ),
  import_proposals: z.array(importProposal),
});

export const confirmInput = z.strictObject({
  ids: z
    .array(
      z
        .string()
        .regex(/^[0-9a-fA-F]{7,40}$/, "a commit id: 7 to 40 hex digits")
        .describe("an import proposal's id (memory_learnings lists them)"),
    )
    .min(1)
    .max(100)
    .describe("the proposals to confirm: their ids, the commits' first 7 to 40 digits"),
});

export const confirmOutput = z.object({
  message: z.string(),
  confirmed: z.array(z.object({ id: z.string(), sha: z.string(), title: z.string() })),
  event_ids: z.array(z.string()),
  spooled: z.boolean(),
  transport: z.string(),
  warning: z.string().optional(),
});

/** `memory_learnings`: every learning and where it stands, and the import's open proposals. */
export function learningsTool(
  ctx: RepoContext,
): ToolSpec<typeof learningsInput, typeof learningsOutput> {
  return {
    name: "memory_learnings",
    title: "Learnings and proposals",
    description:
      "Every learning and where it stands, as `worker learnings` lists them: proposed (on the engram branch or in its open pull request), confirmed (on the base branch), rejected (its pull request closed unmerged). Then import_proposals: decisions a history import (`director ingest --from-git`) was too unsure of to remember, each with its id; confirm one with memory_confirm (or the `director confirm ID` it names).",
    input: learningsInput,
    output: learningsOutput,
    annotations: { readOnlyHint: true },
    async run(input) {
      const { listLearnings, pullHistoryOf } = await import("../graph/learning-states.js");
      const pulls = await pullHistoryOf(ctx, process.env);
      const all = await listLearnings(ctx, { pulls, status: input.status });
      const type = input.type;
      return structured({
        ...all,
        learnings: type ? all.learnings.filter((l) => l.type === type) : all.learnings,
        import_proposals: type
          ? all.import_proposals.filter((p) => p.type === type)
          : all.import_proposals,
      });
    },
  };
}

/**
 * `memory_confirm`: the notes `director confirm ID...` ingests (one code path builds them),
 * sent over the worker's bus as `memory_emit` sends: the Director that drains it remembers
 * them, whichever checkout the agent works in.
 */
export function confirmTool(ctx: RepoContext): ToolSpec<typeof confirmInput, typeof confirmOutput> {
  return {
    name: "memory_confirm",
    title: "Confirm proposed decisions",
    description:
      "Confirm decisions a history import proposed (the ids memory_learnings lists under import_proposals), as `director confirm ID...` does: each becomes a decision note of its commit, sent over the worker's bus (ENGRAM_BUS, else [worker] bus, else the local spool) like memory_emit, in memory after the next `director run`. Confirming one twice changes nothing; an id that names no open proposal, or several, is refused with the open ones named.",
    input: confirmInput,
    output: confirmOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    async run(input) {
      const [{ confirmationOf }, { deliver }, { workerBus }] = await Promise.all([
        import("../graph/import-proposals.js"),
        import("../worker/emit.js"),
        import("../bus/worker-bus.js"),
      ]);
      const { confirmed, envelopes } = await confirmationOf(ctx, input.ids, receiptTime());
      const r = await deliver(ctx, envelopes, workerBus(ctx, undefined).url);
      const ids = confirmed.map((c) => c.id).join(", ");
      return structured({
        message:
          r.warning !== undefined
            ? `confirmed ${ids}, but ${r.warning}`
            : `confirmed ${ids} on the ${r.transport}: the next \`director run\` writes them to memory as decisions`,
        confirmed,
        event_ids: envelopes.map((e) => e.event_id),
        spooled: r.spooled,
        transport: r.transport,
        ...(r.warning !== undefined ? { warning: r.warning } : {}),
      });
    },
  };
}
