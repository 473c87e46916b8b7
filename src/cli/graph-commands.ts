import { LEARNING_TYPE_NAMES, learningTypeOf } from "../core/graph/learnings.js";
import type { LearningStatus } from "../core/graph/lifecycle.js";
import type { ImportProposalEntry } from "../core/history/proposals.js";
import { UsageError } from "../errors.js";
import { type Command, numberOption, type ParsedArgs, repoOptions, stringOption } from "./args.js";

const TYPES_TEXT = `${LEARNING_TYPE_NAMES.join(", ")} (lesson is insight)`;

/** `--type KIND`: a learning type or `lesson`, its alias; undefined without the flag. */
function typeOption(args: ParsedArgs) {
  const name = stringOption(args, "type");
  if (name === undefined) return undefined;
  const type = learningTypeOf(name);
  if (type === undefined)
    throw new UsageError(`--type: expected one of ${TYPES_TEXT}, got "${name}"`);
  return type;
}

const context: Command = {
  name: "context",
  summary:
    "The learnings related to TOPIC (its words, then what shares files, projects and people with them), ranked and fitted to a token budget, as markdown ready for a prompt; says which scope it searched.",
  usage:
    "worker context TOPIC [--max-tokens N] [--type KIND] [--repo DIR] [--config FILE] [--json]",
  options: {
    "max-tokens": {
      type: "string",
      value: "N",
      description: "token budget of the answer (default 2000)",
    },
    type: { type: "string", value: "KIND", description: `only this kind: ${TYPES_TEXT}` },
  },
  positionals: [1, 1],
  async run(args) {
    const maxTokens = numberOption(args, "max-tokens") ?? 2000;
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 1_000_000) {
      throw new UsageError("--max-tokens: expected a whole number from 1 to 1000000");
    }
    const type = typeOption(args);
    const { openContext } = await import("../context/repo-context.js");
    const ctx = await openContext(repoOptions(args));
    const { topicContext } = await import("../graph/queries.js");
    const r = await topicContext(ctx, args.positionals[0] as string, {
      maxTokens,
      type,
    });
    return { json: r, text: r.markdown === "" ? `${r.message}\n` : r.markdown };
  },
};

const freshness: Command = {
  name: "freshness",
  summary:
    "Which learnings are stale: contextual freshness is the newer of when a learning was confirmed and when anything it links to (files, projects, components, people) last moved in git, and its pull requests on GitHub when GitHub is configured.",
  usage: "worker freshness [--threshold DAYS] [--all] [--repo DIR] [--config FILE] [--json]",
  options: {
    threshold: {
      type: "string",
      value: "DAYS",
      description: "fresh within this many days (default 30)",
    },
    all: { type: "boolean", description: "list fresh learnings too" },
  },
  async run(args) {
    const threshold = numberOption(args, "threshold") ?? 30;
    if (!Number.isFinite(threshold) || threshold <= 0) {
      throw new UsageError("--threshold: expected a positive number of days");
    }
    const [{ openContext }, { receiptTime }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../clock.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const { learningFreshness } = await import("../graph/queries.js");
    const now = Math.floor(Date.parse(receiptTime()) / 1000);
    const r = await learningFreshness(ctx, { thresholdDays: threshold, now, env: process.env });
    const shown = args.values.all === true ? r.learnings : r.learnings.filter((l) => !l.fresh);
    const lines = [
      `${r.stale} stale, ${r.fresh} fresh of ${r.learnings.length} learnings (threshold ${threshold} days; temporal check alone: ${r.temporal_stale} stale)`,
      ...shown.map(
        (l) =>
          `${l.fresh ? "fresh" : "STALE"}  ${l.id}  ${l.text.slice(0, 80)}\n       ${l.why}; temporal: ${l.temporal_fresh ? "fresh" : "stale"}`,
      ),
    ];
    return { json: r, text: `${lines.join("\n")}\n` };
  },
};

const STATUSES: readonly LearningStatus[] = ["proposed", "confirmed", "rejected"];

const learnings: Command = {
  name: "learnings",
  summary:
    "Every learning and where it stands: proposed (on the engram branch or in its open pull request), confirmed (merged on the base branch, with confirmed_at), rejected (its pull request closed unmerged); with type, confidence, source and entities. Then the decisions a history import proposed (`ingest --from-git`, too uncertain to remember at once), each with the `director confirm ID` that confirms it.",
  usage:
    "worker learnings [--status proposed|confirmed|rejected] [--type KIND] [--repo DIR] [--config FILE] [--json]",
  options: {
    type: { type: "string", value: "KIND", description: `only this kind: ${TYPES_TEXT}` },
    status: {
      type: "string",
      value: "STATUS",
      description: `only this status: ${STATUSES.join(", ")}`,
    },
  },
  async run(args) {
    const status = stringOption(args, "status");
    if (status !== undefined && !STATUSES.includes(status as LearningStatus)) {
      throw new UsageError(`--status: expected one of ${STATUSES.join(", ")}, got "${status}"`);
    }
    const type = typeOption(args);
    const [{ openContext }, { listLearnings, pullHistoryOf }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../graph/learning-states.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const pulls = await pullHistoryOf(ctx, process.env);
    const all = await listLearnings(ctx, { pulls, status: status as LearningStatus | undefined });
    // The counts stay those of every type: a filter narrows the list, not the totals.
    const r =
      type === undefined
        ? all
        : {
            ...all,
            learnings: all.learnings.filter((l) => l.type === type),
            import_proposals: all.import_proposals.filter((p) => p.type === type),
          };
    const lines = [
      `${r.counts.confirmed} confirmed, ${r.counts.proposed} proposed, ${r.counts.rejected} rejected (${r.base} and ${r.branch}; ${r.github.asked ? `${r.github.pulls} pull request(s) read from GitHub` : "git only: GitHub is not configured"})`,
      ...r.learnings.map((l) => {
        const when = l.confirmed_at ? ` ${l.confirmed_at}` : "";
        const pr = l.pr === null ? "" : ` #${l.pr}`;
        const confidence =
          (l.confidence === null ? "" : ` confidence ${l.confidence}`) +
          (l.outcome === undefined ? "" : ` outcome ${l.outcome}`);
        return `${l.status}${when}${pr}  ${l.type}  ${l.text.slice(0, 100)}\n    ${l.id} from ${l.source}${confidence}, evidence ${l.evidence}${l.entities.length > 0 ? `; ${l.entities.join(" ")}` : ""}`;
      }),
      ...importProposalLines(r.import_proposals),
    ];
    return { json: r, text: `${lines.join("\n")}\n` };
  },
};

/** The history import's open proposals, each with the command that confirms it. */
function importProposalLines(proposals: readonly ImportProposalEntry[]): string[] {
  if (proposals.length === 0) return [];
  return [
    `${proposals.length} decision(s) a history import proposed (too uncertain to remember at once): confirm each with its command`,
    ...proposals.map(
      (p) =>
        `proposed  decision  ${p.text.slice(0, 100)}\n    commit ${p.id}, confidence ${p.confidence}: \`${p.confirm}\``,
    ),
  ];
}

export const GRAPH_COMMANDS: readonly Command[] = [context, freshness, learnings];
