/** What a reviewer's comment asks of the Director, or why it asks nothing. */
export type ReviewCommand =
  | {
      kind: "command";
      action: "reject" | "release";
      ids: string[];
      /** Who asked, and the pull request the comment is on. */
      user: string;
      pull: number;
    }
  | { kind: "ignored"; reason: string };

/** The author associations that can push to the repository (GitHub's own grouping). */
const WRITERS = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);
// The whole comment is one command: `/engram reject l_0123456789abcdef [l_… …]`.
const COMMAND = /^\/engram[ \t]+(reject|release)((?:[ \t]+l_[0-9a-f]{16}){1,50})[ \t]*$/;
const EVENTS = new Set(["issue_comment", "pull_request_review_comment"]);

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * A review command from a GitHub event payload: an `issue_comment` on a pull request or a
 * `pull_request_review_comment`, just created, whose whole body (trimmed) is
 * `/engram reject ID…` or `/engram release ID…`, by an author who can write to the
 * repository (`author_association` OWNER, MEMBER or COLLABORATOR). Anything else is ignored,
 * with the reason: every comment on the repository runs the workflow, and only these act.
 * `eventName` is `GITHUB_EVENT_NAME` when known; `branch` the Director's head branch, which
 * a review comment's pull request must have.
 */
export function parseReviewComment(
  payload: unknown,
  eventName: string | undefined,
  branch: string,
): ReviewCommand {
  const ignored = (reason: string): ReviewCommand => ({ kind: "ignored", reason });
  if (eventName !== undefined && eventName !== "" && !EVENTS.has(eventName)) {
    return ignored(`event ${eventName}: only issue_comment and pull_request_review_comment`);
  }
  const event = record(payload);
  if (event === undefined) return ignored("the event payload is not a JSON object");
  if (event.action !== "created") {
    return ignored(`comment ${String(event.action)}: only a new comment is read`);
  }
  const comment = record(event.comment);
  if (comment === undefined) return ignored("the event carries no comment");
  const issue = record(event.issue);
  const pr = record(event.pull_request);
  let pull: unknown;
  if (issue !== undefined) {
    if (record(issue.pull_request) === undefined) return ignored("a comment on an issue");
    pull = issue.number;
  } else if (pr !== undefined) {
    const head = record(pr.head);
    if (head?.ref !== branch) {
      return ignored(`a comment on ${String(head?.ref)}, not on the engram branch ${branch}`);
    }
    pull = pr.number;
  } else {
    return ignored("the comment is on neither an issue nor a pull request");
  }
  if (typeof pull !== "number" || !Number.isSafeInteger(pull) || pull <= 0) {
    return ignored("the pull request has no number");
  }
  const body = typeof comment.body === "string" ? comment.body.trim() : "";
  const m = COMMAND.exec(body);
  if (m === null) {
    return ignored(
      body.startsWith("/engram")
        ? "not a command: write `/engram reject ITEM_ID` or `/engram release ITEM_ID` alone in the comment"
        : "not an /engram command",
    );
  }
  const user = String(record(comment.user)?.login ?? "unknown");
  const association = String(comment.author_association ?? "NONE");
  if (!WRITERS.has(association)) {
    return ignored(
      `${user} is ${association}: only an owner, member or collaborator may ${m[1] as string} items`,
    );
  }
  const ids = [...new Set((m[2] as string).trim().split(/[ \t]+/))];
  return { kind: "command", action: m[1] as "reject" | "release", ids, user, pull };
}
