import { type CommitInfo, isoNow } from "./bare-repo.js";

/**
 * The JSON the fake GitHub answers with: resources shaped as GitHub's OpenAPI description
 * requires (every required field, URLs under the fake's own address).
 */

type Json = Record<string, unknown>;

export interface Site {
  /** The fake's base URL, set when it starts. */
  base: string;
  owner: string;
  repo: string;
  /** The token's user: author of PRs and commits. */
  login: string;
  defaultBranch: string;
}

export interface PullState {
  number: number;
  id: number;
  title: string;
  body: string | null;
  head: string;
  base: string;
  headSha: string;
  state: "open" | "closed";
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergeCommitSha: string | null;
  closedAt: string | null;
  createdAt: string;
  updatedAt: string;
  labels: string[];
  reviewers: string[];
  teams: string[];
  maintainerCanModify: boolean;
}

/** An issue that is not a pull request (the two share one numbering). */
export interface IssueState {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  closedAt: string | null;
  createdAt: string;
  updatedAt: string;
  labels: string[];
}

/** What the issues listing shows of an issue or of a pull request (as the issue it is). */
export type IssueView = Omit<IssueState, "labels"> & {
  labels: LabelState[];
  /** Set for a pull request: `pull_request` in the JSON. */
  pull?: { mergedAt: string | null };
};

export interface LabelState {
  id: number;
  name: string;
  color: string;
}

/** What a PR's JSON needs from the repository. */
export interface PullFacts {
  baseSha: string;
  labels: LabelState[];
  openPulls: number;
}

export interface FullPullFacts {
  stats: { additions: number; deletions: number; files: number; commits: number };
  clean: boolean;
  rebaseable: boolean;
}

export class Shapes {
  constructor(readonly site: Site) {}

  apiUrl(rest: string): string {
    return `${this.site.base}/repos/${this.site.owner}/${this.site.repo}/${rest}`;
  }

  htmlUrl(rest = ""): string {
    return `${this.site.base}/${this.site.owner}/${this.site.repo}${rest}`;
  }

  refJson(ref: string, sha: string, type: string): Json {
    return {
      ref,
      node_id: nodeId("REF", ref),
      url: this.apiUrl(`git/${ref}`),
      object: {
        type,
        sha,
        url: this.apiUrl(`git/commits/${sha}`),
      },
    };
  }

  commitJson(commit: CommitInfo): Json {
    return {
      sha: commit.sha,
      node_id: nodeId("C", commit.sha),
      url: this.apiUrl(`git/commits/${commit.sha}`),
      html_url: this.htmlUrl(`/commit/${commit.sha}`),
      author: commit.author,
      committer: commit.committer,
      tree: { sha: commit.tree, url: this.apiUrl(`git/trees/${commit.tree}`) },
      message: commit.message.replace(/\n$/, ""),
      parents: commit.parents.map((sha) => ({
        sha,
        url: this.apiUrl(`git/commits/${sha}`),
        html_url: this.htmlUrl(`/commit/${sha}`),
      })),
      verification: {
        verified: false,
        reason: "unsigned",
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  }

  treeJson(
    sha: string,
    entries: { path: string; mode: string; type: string; sha: string; size?: number }[],
  ): Json {
    return {
      sha,
      url: this.apiUrl(`git/trees/${sha}`),
      tree: entries.map((e) => ({
        ...e,
        url: this.apiUrl(`git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`),
      })),
      truncated: false,
    };
  }

  labelJson(label: LabelState): Json {
    return {
      id: label.id,
      node_id: nodeId("LA", String(label.id)),
      url: this.apiUrl(`labels/${encodeURIComponent(label.name)}`),
      name: label.name,
      // GitHub sends null for a label without one, but the description's pull-request-simple
      // schema says string: "" satisfies both schemas the label appears in.
      description: "",
      color: label.color,
      default: false,
    };
  }

  userJson(login: string): Json {
    const api = `${this.site.base}/users/${login}`;
    return {
      login,
      id: idOf(login),
      node_id: nodeId("U", login),
      avatar_url: `${this.site.base}/avatars/${login}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.site.base}/${login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: login.endsWith("[bot]") ? "Bot" : "User",
      site_admin: false,
    };
  }

  teamJson(slug: string): Json {
    const api = `${this.site.base}/orgs/${this.site.owner}/teams/${slug}`;
    return {
      id: idOf(slug),
      node_id: nodeId("T", slug),
      url: api,
      members_url: `${api}/members{/member}`,
      name: slug,
      description: null,
      permission: "pull",
      privacy: "closed",
      notification_setting: "notifications_enabled",
      html_url: `${this.site.base}/orgs/${this.site.owner}/teams/${slug}`,
      repositories_url: `${api}/repos`,
      slug,
      type: "organization",
      // pull-request-simple lists full teams (with parent), pull-request simple teams.
      parent: null,
    };
  }

  repositoryJson(openPulls: number): Json {
    const api = `${this.site.base}/repos/${this.site.owner}/${this.site.repo}`;
    const now = isoNow();
    const templated: Record<string, string> = {
      archive_url: "/{archive_format}{/ref}",
      assignees_url: "/assignees{/user}",
      blobs_url: "/git/blobs{/sha}",
      branches_url: "/branches{/branch}",
      collaborators_url: "/collaborators{/collaborator}",
      comments_url: "/comments{/number}",
      commits_url: "/commits{/sha}",
      compare_url: "/compare/{base}...{head}",
      contents_url: "/contents/{+path}",
      git_commits_url: "/git/commits{/sha}",
      git_refs_url: "/git/refs{/sha}",
      git_tags_url: "/git/tags{/sha}",
      issue_comment_url: "/issues/comments{/number}",
      issue_events_url: "/issues/events{/number}",
      issues_url: "/issues{/number}",
      keys_url: "/keys{/key_id}",
      labels_url: "/labels{/name}",
      milestones_url: "/milestones{/number}",
      notifications_url: "/notifications{?since,all,participating}",
      pulls_url: "/pulls{/number}",
      releases_url: "/releases{/id}",
      statuses_url: "/statuses/{sha}",
      trees_url: "/git/trees{/sha}",
      contributors_url: "/contributors",
      deployments_url: "/deployments",
      downloads_url: "/downloads",
      events_url: "/events",
      forks_url: "/forks",
      hooks_url: "/hooks",
      languages_url: "/languages",
      merges_url: "/merges",
      stargazers_url: "/stargazers",
      subscribers_url: "/subscribers",
      subscription_url: "/subscription",
      tags_url: "/tags",
      teams_url: "/teams",
    };
    const urls = Object.fromEntries(Object.entries(templated).map(([k, v]) => [k, `${api}${v}`]));
    return {
      id: idOf(`${this.site.owner}/${this.site.repo}`),
      node_id: nodeId("R", `${this.site.owner}/${this.site.repo}`),
      name: this.site.repo,
      full_name: `${this.site.owner}/${this.site.repo}`,
      owner: this.userJson(this.site.owner),
      private: true,
      html_url: this.htmlUrl(),
      description: null,
      fork: false,
      url: api,
      ...urls,
      git_url: `git://127.0.0.1/${this.site.owner}/${this.site.repo}.git`,
      ssh_url: `git@127.0.0.1:${this.site.owner}/${this.site.repo}.git`,
      clone_url: `${this.htmlUrl()}.git`,
      svn_url: this.htmlUrl(),
      mirror_url: null,
      homepage: null,
      language: null,
      forks: 0,
      forks_count: 0,
      stargazers_count: 0,
      watchers: 0,
      watchers_count: 0,
      size: 0,
      default_branch: this.site.defaultBranch,
      open_issues: openPulls,
      open_issues_count: openPulls,
      has_issues: true,
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_downloads: true,
      archived: false,
      disabled: false,
      license: null,
      pushed_at: now,
      created_at: now,
      updated_at: now,
    };
  }

  fullRepository(openPulls: number): Json {
    return {
      ...this.repositoryJson(openPulls),
      has_discussions: false,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  /** An issue as issues/list-for-repo and issues/create answer it; a PR carries `pull_request`. */
  issueJson(issue: IssueView): Json {
    const n = issue.number;
    const url = this.apiUrl(`issues/${n}`);
    const html = this.htmlUrl(`/${issue.pull ? "pull" : "issues"}/${n}`);
    return {
      id: issue.id,
      node_id: nodeId(issue.pull ? "PR" : "I", String(issue.id)),
      url,
      repository_url: `${this.site.base}/repos/${this.site.owner}/${this.site.repo}`,
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: html,
      number: n,
      state: issue.state,
      title: issue.title,
      body: issue.body,
      user: this.userJson(this.site.login),
      labels: issue.labels.map((l) => this.labelJson(l)),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: 0,
      ...(issue.pull
        ? {
            pull_request: {
              url: this.apiUrl(`pulls/${n}`),
              html_url: html,
              diff_url: `${html}.diff`,
              patch_url: `${html}.patch`,
              merged_at: issue.pull.mergedAt,
            },
          }
        : {}),
      closed_at: issue.closedAt,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      author_association: "MEMBER",
    };
  }

  /** A pull request; `full` adds what pulls/get has and pulls/list lacks. */
  pullJson(pr: PullState, facts: PullFacts, full?: FullPullFacts): Json {
    const n = pr.number;
    const url = this.apiUrl(`pulls/${n}`);
    const html = this.htmlUrl(`/pull/${n}`);
    const issue = this.apiUrl(`issues/${n}`);
    const repo = this.repositoryJson(facts.openPulls);
    const owner = this.userJson(this.site.owner);
    const baseSha = facts.baseSha;
    const simple: Json = {
      url,
      id: pr.id,
      node_id: nodeId("PR", String(pr.id)),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issue,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: this.apiUrl("pulls/comments{/number}"),
      comments_url: `${issue}/comments`,
      statuses_url: this.apiUrl(`statuses/${pr.headSha}`),
      number: n,
      state: pr.state,
      locked: false,
      title: pr.title,
      user: this.userJson(this.site.login),
      body: pr.body,
      labels: facts.labels.map((l) => this.labelJson(l)),
      milestone: null,
      active_lock_reason: null,
      created_at: pr.createdAt,
      updated_at: pr.updatedAt,
      closed_at: pr.closedAt,
      merged_at: pr.mergedAt,
      merge_commit_sha: pr.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: pr.reviewers.map((r) => this.userJson(r)),
      requested_teams: pr.teams.map((t) => this.teamJson(t)),
      head: {
        label: `${this.site.owner}:${pr.head}`,
        ref: pr.head,
        sha: pr.headSha,
        user: owner,
        repo,
      },
      base: {
        label: `${this.site.owner}:${pr.base}`,
        ref: pr.base,
        sha: baseSha,
        user: owner,
        repo,
      },
      _links: {
        self: { href: url },
        html: { href: html },
        issue: { href: issue },
        comments: { href: `${issue}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: this.apiUrl("pulls/comments{/number}") },
        commits: { href: `${url}/commits` },
        statuses: { href: this.apiUrl(`statuses/${pr.headSha}`) },
      },
      author_association: "MEMBER",
      auto_merge: null,
      draft: pr.draft,
    };
    if (full === undefined) return simple;
    const { stats, clean } = full;
    return {
      ...simple,
      merged: pr.merged,
      mergeable: pr.state === "open" ? clean : null,
      rebaseable: pr.state === "open" ? full.rebaseable : null,
      mergeable_state:
        pr.state !== "open" ? "unknown" : pr.draft ? "draft" : clean ? "clean" : "dirty",
      merged_by: pr.merged ? this.userJson(this.site.login) : null,
      comments: 0,
      review_comments: 0,
      maintainer_can_modify: pr.maintainerCanModify,
      commits: stats.commits,
      additions: stats.additions,
      deletions: stats.deletions,
      changed_files: stats.files,
    };
  }
}

/** A stable small integer id for a name. */
export function idOf(name: string): number {
  let h = 7;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000_007;
  return h;
}

export function nodeId(kind: string, key: string): string {
  return `${kind}_${Buffer.from(key).toString("base64url")}`;
}
