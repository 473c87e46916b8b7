import type { RepoContext } from "../context/repo-context.js";
import type { ItemAction } from "../director/item-review.js";
import { StateError } from "../errors.js";
import {
  type Command,
  type CommandOutput,
  inputFile,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";
import type { ProposalRunner } from "./version-commands.js";

/*
 * Review one item at a time: `director reject` and `director release` decide about single
 * knowledge items of the engram proposal and regenerate its branch (as `director run --pr`
 * does); `director review-comment` reads the same decision from a GitHub comment event.
 */

const PR_OPTIONS = {
  remote: { type: "string", value: "NAME", description: "the remote (default origin)" },
  base: { type: "string", value: "BRANCH", description: "the base branch (default main)" },
  branch: {
    type: "string",
    value: "NAME",
    description: "the Director's branch (default engram/memory)",
  },
} as const;

async function openCtx(args: ParsedArgs): Promise<RepoContext> {
  const { openContext } = await import("../context/repo-context.js");
  return openContext(repoOptions(args));
}

/** Records the decision under the Director lock and proposes the branch again without (or with) the items. */
async function decideAndPropose(
  runPr: ProposalRunner,
  ctx: RepoContext,
  args: ParsedArgs,
  action: ItemAction,
  ids: readonly string[],
  extra: Record<string, unknown> = {},
): Promise<CommandOutput> {
  const { decideItems } = await import("../director/item-review.js");
  const out = await runPr(ctx, args, {
    beforeCycle: (staging) => decideItems(ctx, staging.repoDir, action, ids),
  });
  const done = action === "reject" ? "rejected" : "released";
  const what =
    action === "reject"
      ? "left out of the engram branch and never proposed again"
      : "proposed on the engram branch";
  const proposal = (out.json as { proposal?: { status?: string; head_sha?: string | null } })
    .proposal;
  // Every item rejected: no commit can equal main, so the branch keeps what it had.
  const emptied =
    action === "reject" && proposal?.status === "nothing-to-propose" && proposal.head_sha != null;
  return {
    ...out,
    warnings: [
      ...(out.warnings ?? []),
      ...(emptied
        ? [
            "nothing is left to propose: the engram branch still holds what it had; close its pull request",
          ]
        : []),
    ],
    json: { ...(out.json as object), item: { action, ids, ...extra } },
    text: `${done} ${ids.join(", ")}: ${what}\n${out.text}`,
  };
}

function itemCommand(runPr: ProposalRunner, action: ItemAction): Command {
  const reject = action === "reject";
  return {
    name: action,
    summary: reject
      ? "Reject knowledge items of the engram pull request by id: the branch is regenerated without them, every other item kept; they are never proposed again."
      : "Release held items (secret-like, kept off the branch) or undo a rejection by id: the branch is regenerated with them.",
    usage: `director ${action} ITEM_ID... [--remote NAME] [--base BRANCH] [--branch NAME] [--repo DIR] [--config FILE] [--json]`,
    options: { ...PR_OPTIONS },
    positionals: [1, 50],
    async run(args) {
      const ctx = await openCtx(args);
      return decideAndPropose(runPr, ctx, args, action, [...new Set(args.positionals)]);
    },
  };
}

function reviewCommentCommand(runPr: ProposalRunner): Command {
  return {
    name: "review-comment",
    summary:
      "Act on a GitHub comment event (issue_comment, pull_request_review_comment): `/engram reject ITEM_ID` or `/engram release ITEM_ID` from an owner, member or collaborator; any other comment is ignored, saying why.",
    usage:
      "director review-comment --event FILE [--remote NAME] [--base BRANCH] [--branch NAME] [--repo DIR] [--config FILE] [--json]",
    options: {
      event: {
        type: "string",
        value: "FILE",
        description: "the event payload ($GITHUB_EVENT_PATH); the event name is GITHUB_EVENT_NAME",
      },
      ...PR_OPTIONS,
    },
    async run(args) {
      const [{ readFileSync }, { parseReviewComment }] = await Promise.all([
        import("node:fs"),
        import("../github/review-comment.js"),
      ]);
      const given = stringOption(args, "event") ?? process.env.GITHUB_EVENT_PATH;
      if (given === undefined) {
        throw new StateError("--event FILE: the comment event's payload ($GITHUB_EVENT_PATH)");
      }
      let payload: unknown;
      try {
        payload = JSON.parse(readFileSync(inputFile(given), "utf8"));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        throw new StateError(`${given}: not a JSON event payload (${error.message})`);
      }
      const ctx = await openCtx(args);
      const branch = stringOption(args, "branch") ?? ctx.config.github.head_branch;
      const command = parseReviewComment(payload, process.env.GITHUB_EVENT_NAME, branch);
      if (command.kind === "ignored") {
        return { json: { ignored: command.reason }, text: `ignored: ${command.reason}\n` };
      }
      return decideAndPropose(runPr, ctx, args, command.action, command.ids, {
        user: command.user,
        pull: command.pull,
      });
    },
  };
}

/** `director reject`, `director release` and `director review-comment`, proposing through `runPr`. */
export function reviewCommands(runPr: ProposalRunner): Command[] {
  return [itemCommand(runPr, "reject"), itemCommand(runPr, "release"), reviewCommentCommand(runPr)];
}
