import { type Context, type Handler, HttpError, pageOf, type Reply } from "./fake-github-http.js";
import type { IssueView } from "./fake-github-shapes.js";
import type { GitHubStore } from "./fake-github-store.js";

/**
 * Issues as GitHub's REST API answers them. The repository's listing holds its issues and
 * its pull requests alike (a pull request is an issue with a `pull_request` key), numbered
 * from one sequence.
 */
export function issueHandlers(s: GitHubStore): Record<string, Handler> {
  function listForRepo(c: Context): Reply {
    const state = c.query.get("state") ?? "open";
    const since = c.query.get("since");
    const sinceMs = since === null ? null : Date.parse(since);
    if (sinceMs !== null && Number.isNaN(sinceMs)) {
      throw new HttpError(422, "Validation Failed", [
        { resource: "Issue", field: "since", code: "invalid" },
      ]);
    }
    let list = s.issueViews().filter((i) => state === "all" || i.state === state);
    // "Only show results that were last updated after the given time".
    if (sinceMs !== null) list = list.filter((i) => Date.parse(i.updatedAt) >= sinceMs);
    const sort = c.query.get("sort") ?? "created";
    const direction = c.query.get("direction") ?? "desc";
    // Comments are not kept: sorted by comments, every issue has none and creation decides.
    const key = (i: IssueView) =>
      `${sort === "updated" ? i.updatedAt : i.createdAt}#${String(i.number).padStart(9, "0")}`;
    list = [...list].sort((a, b) => key(a).localeCompare(key(b)) * (direction === "asc" ? 1 : -1));
    const { slice, headers } = pageOf(c, list, (q) => s.shapes.apiUrl(`issues?${q}`));
    return { status: 200, body: slice.map((i) => s.shapes.issueJson(i)), headers };
  }

  function create(c: Context): Reply {
    const title = c.body.title;
    if ((typeof title !== "string" && typeof title !== "number") || String(title) === "") {
      throw new HttpError(422, "Validation Failed", [
        { resource: "Issue", field: "title", code: "missing_field" },
      ]);
    }
    const labels = ((c.body.labels as unknown[] | undefined) ?? []).map((l) =>
      typeof l === "string" ? l : String((l as { name?: unknown }).name),
    );
    const issue = s.openIssue({
      title: String(title),
      body: typeof c.body.body === "string" ? c.body.body : null,
      labels,
    });
    const view = s.issueViews().find((i) => i.number === issue.number) as IssueView;
    return {
      status: 201,
      body: s.shapes.issueJson(view),
      headers: { location: s.shapes.apiUrl(`issues/${issue.number}`) },
    };
  }

  return { "issues/list-for-repo": listForRepo, "issues/create": create };
}
