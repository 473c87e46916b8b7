import { isoNow, type Person } from "./bare-repo.js";
import {
  type Context,
  FAKE_PERSON,
  type Handler,
  HttpError,
  type Json,
  pageOf,
  type Reply,
  stripOwner,
} from "./fake-github-http.js";
import type { PullState } from "./fake-github-shapes.js";
import type { GitHubStore } from "./fake-github-store.js";

/** Pull requests, their reviewers and labels, as GitHub's REST API answers them. */
export function pullHandlers(s: GitHubStore): Record<string, Handler> {
  function listPulls(c: Context): Reply {
    for (const pr of s.pulls) s.refresh(pr);
    const state = c.query.get("state") ?? "open";
    const headFilter = c.query.get("head");
    const baseFilter = c.query.get("base");
    let list = s.pulls.filter((p) => state === "all" || p.state === state);
    // GitHub ignores a head filter without the `owner:` part: it lists every PR.
    if (headFilter?.includes(":")) {
      const [owner, branch] = [
        headFilter.slice(0, headFilter.indexOf(":")),
        headFilter.slice(headFilter.indexOf(":") + 1),
      ];
      list = list.filter((p) => owner === s.owner && p.head === branch);
    }
    if (baseFilter !== null) list = list.filter((p) => p.base === baseFilter);
    const sort = c.query.get("sort") ?? "created";
    const direction = c.query.get("direction") ?? (sort === "created" ? "desc" : "desc");
    const key = (p: PullState) =>
      sort === "updated"
        ? `${p.updatedAt}#${String(p.number).padStart(9, "0")}`
        : String(p.number).padStart(9, "0");
    list = [...list].sort((a, b) => key(a).localeCompare(key(b)) * (direction === "asc" ? 1 : -1));
    const { slice, headers } = pageOf(c, list, (q) => s.shapes.apiUrl(`pulls?${q}`));
    return { status: 200, body: slice.map((p) => s.pullJson(p, false)), headers };
  }

  function createPull(c: Context): Reply {
    const headInput = String(c.body.head);
    if (headInput.includes(":") && headInput.slice(0, headInput.indexOf(":")) !== s.owner) {
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "head", code: "invalid" },
      ]);
    }
    const head = stripOwner(headInput);
    const base = String(c.body.base);
    const headSha = s.branchSha(head);
    const baseSha = s.branchSha(base);
    if (headSha === null)
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "head", code: "invalid" },
      ]);
    if (baseSha === null)
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "base", code: "invalid" },
      ]);
    for (const pr of s.pulls) s.refresh(pr);
    if (s.pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
      throw new HttpError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `A pull request already exists for ${s.owner}:${head}.`,
        },
      ]);
    }
    if (s.git.isAncestor(headSha, baseSha)) {
      throw new HttpError(422, "Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `No commits between ${base} and ${head}`,
        },
      ]);
    }
    const pr = s.openPull({
      head,
      base,
      title: String(c.body.title ?? head),
      body: typeof c.body.body === "string" ? c.body.body : null,
      draft: c.body.draft === true,
    });
    if (typeof c.body.maintainer_can_modify === "boolean")
      pr.maintainerCanModify = c.body.maintainer_can_modify;
    return {
      status: 201,
      body: s.pullJson(pr, true),
      headers: { location: s.shapes.apiUrl(`pulls/${pr.number}`) },
    };
  }

  function updatePull(c: Context): Reply {
    const pr = s.pullOf(c);
    const b = c.body;
    if (typeof b.base === "string" && s.branchSha(b.base) === null) {
      throw new HttpError(422, "Validation Failed", [
        { resource: "PullRequest", field: "base", code: "invalid" },
      ]);
    }
    if (b.state === "open" && pr.state === "closed") {
      if (pr.merged)
        throw new HttpError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: "state cannot be changed. The pull request has already been merged.",
          },
        ]);
      if (s.branchSha(pr.head) === null)
        throw new HttpError(422, "Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: "state cannot be changed. The head branch was deleted.",
          },
        ]);
    }
    const now = isoNow();
    if (typeof b.title === "string") pr.title = b.title;
    if (typeof b.body === "string") pr.body = b.body;
    if (typeof b.base === "string") pr.base = b.base;
    if (typeof b.maintainer_can_modify === "boolean")
      pr.maintainerCanModify = b.maintainer_can_modify;
    if (b.state === "closed" && pr.state === "open")
      Object.assign(pr, { state: "closed", closedAt: now });
    if (b.state === "open" && pr.state === "closed") {
      Object.assign(pr, { state: "open", closedAt: null, headSha: s.branchSha(pr.head)! });
    }
    pr.updatedAt = now;
    return { status: 200, body: s.pullJson(pr, true) };
  }

  function mergePull(c: Context): Reply {
    const pr = s.pullOf(c);
    if (pr.state !== "open") throw new HttpError(405, "Pull Request is not mergeable");
    if (pr.draft) throw new HttpError(405, "Pull Request is still a draft");
    const head = pr.headSha;
    if (typeof c.body.sha === "string" && c.body.sha !== head) {
      throw new HttpError(409, "Head branch was modified. Review and try the merge again.");
    }
    const base = s.branchSha(pr.base)!;
    const method = String(c.body.merge_method ?? "merge");
    const now = isoNow();
    const person: Person = {
      name: s.login,
      email: `${s.login}@users.noreply.github.com`,
      date: now,
    };
    const committer: Person = { ...FAKE_PERSON, date: now };
    let sha: string;
    if (method === "rebase") {
      // Only the fast-forward case: enough for a memory branch built on its base.
      if (!s.git.isAncestor(base, head)) throw new HttpError(405, "This branch can't be rebased");
      sha = head;
    } else {
      const tree = s.git.mergeTree(base, head);
      if (tree === null) throw new HttpError(405, "Pull Request is not mergeable");
      const title = typeof c.body.commit_title === "string" ? c.body.commit_title : null;
      const message = typeof c.body.commit_message === "string" ? c.body.commit_message : pr.title;
      sha =
        method === "squash"
          ? s.git.commitTree(
              tree,
              [base],
              `${title ?? `${pr.title} (#${pr.number})`}\n\n${message}\n`,
              person,
              committer,
            )
          : s.git.commitTree(
              tree,
              [base, head],
              `${title ?? `Merge pull request #${pr.number} from ${s.owner}/${pr.head}`}\n\n${message}\n`,
              person,
              committer,
            );
    }
    if (!s.git.updateRef(`refs/heads/${pr.base}`, sha, base)) {
      throw new HttpError(409, "Base branch was modified. Review and try the merge again.");
    }
    Object.assign(pr, {
      state: "closed",
      merged: true,
      mergedAt: now,
      closedAt: now,
      updatedAt: now,
      mergeCommitSha: sha,
    });
    return {
      status: 200,
      body: { sha, merged: true, message: "Pull Request successfully merged" },
    };
  }

  function requestReviewers(c: Context): Reply {
    const pr = s.pullOf(c);
    const reviewers = ((c.body.reviewers as string[] | undefined) ?? []).map(String);
    const teams = ((c.body.team_reviewers as string[] | undefined) ?? []).map(String);
    if (reviewers.some((r) => r.toLowerCase() === s.login.toLowerCase())) {
      throw new HttpError(422, "Review cannot be requested from pull request author.");
    }
    for (const r of reviewers) if (!pr.reviewers.includes(r)) pr.reviewers.push(r);
    for (const t of teams) if (!pr.teams.includes(t)) pr.teams.push(t);
    pr.updatedAt = isoNow();
    return { status: 201, body: s.pullJson(pr, false) };
  }

  function addLabels(c: Context): Reply {
    const pr = s.pullOf(c);
    const names = ((c.body.labels as unknown[] | undefined) ?? []).map((l) =>
      typeof l === "string" ? l : String((l as Json).name),
    );
    for (const name of names) {
      const key = name.toLowerCase();
      if (!s.labels.has(key)) s.labels.set(key, { id: s.nextId++, name, color: "ededed" });
      const label = s.labels.get(key)!;
      if (!pr.labels.some((l) => l.toLowerCase() === key)) pr.labels.push(label.name);
    }
    pr.updatedAt = isoNow();
    return { status: 200, body: s.labelsOf(pr).map((l) => s.shapes.labelJson(l)) };
  }

  return {
    "pulls/list": listPulls,
    "pulls/get": (c) => ({ status: 200, body: s.pullJson(s.pullOf(c), true) }),
    "pulls/create": createPull,
    "pulls/update": updatePull,
    "pulls/merge": mergePull,
    "pulls/request-reviewers": requestReviewers,
    "issues/add-labels": addLabels,
  };
}
