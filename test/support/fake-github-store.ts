import { BareRepo, isoNow, type TreeEntry, ZERO_SHA } from "./bare-repo.js";
import { type Context, HttpError } from "./fake-github-http.js";
import {
  type IssueState,
  type IssueView,
  type LabelState,
  type PullState,
  Shapes,
} from "./fake-github-shapes.js";

/**
 * What the fake GitHub holds: a real bare repository, and the pull requests and labels kept
 * in memory, with the rules GitHub applies to them when refs move.
 */
export class GitHubStore {
  readonly owner: string;
  readonly repo: string;
  readonly login: string;
  readonly git: BareRepo;
  readonly defaultBranch: string;
  readonly shapes: Shapes;
  readonly pulls: PullState[] = [];
  /** Issues that are not pull requests; both take their numbers from `nextNumber`. */
  readonly issues: IssueState[] = [];
  readonly labels = new Map<string, LabelState>();
  nextNumber = 1;
  nextId = 1000;

  constructor(options: {
    dir: string;
    owner?: string | undefined;
    repo?: string | undefined;
    login?: string | undefined;
    defaultBranch?: string | undefined;
  }) {
    this.owner = options.owner ?? "octo-org";
    this.repo = options.repo ?? "memory-repo";
    this.login = options.login ?? "engram-bot";
    this.defaultBranch = options.defaultBranch ?? "main";
    this.git = BareRepo.init(options.dir, this.defaultBranch);
    this.shapes = new Shapes({
      base: "",
      owner: this.owner,
      repo: this.repo,
      login: this.login,
      defaultBranch: this.defaultBranch,
    });
  }

  /** The sha of `refs/heads/<branch>`, or null. */
  branchSha(branch: string): string | null {
    return this.git.refSha(`refs/heads/${branch}`);
  }

  openPulls(): number {
    return this.pulls.filter((p) => p.state === "open").length;
  }

  labelsOf(pr: PullState): LabelState[] {
    return pr.labels.map((name) => this.labels.get(name.toLowerCase())!);
  }

  pullJson(pr: PullState, full: boolean): Record<string, unknown> {
    const baseSha = this.branchSha(pr.base) ?? ZERO_SHA;
    const facts = { baseSha, labels: this.labelsOf(pr), openPulls: this.openPulls() };
    if (!full) return this.shapes.pullJson(pr, facts);
    const known = baseSha !== ZERO_SHA;
    return this.shapes.pullJson(pr, facts, {
      stats: known
        ? this.git.diffStats(baseSha, pr.headSha)
        : { additions: 0, deletions: 0, files: 0, commits: 0 },
      clean: pr.state === "open" && known && this.git.mergeTree(baseSha, pr.headSha) !== null,
      rebaseable: known && this.git.isAncestor(baseSha, pr.headSha),
    });
  }

  /** Every issue and pull request, as the issues endpoints show them. */
  issueViews(): IssueView[] {
    for (const pr of this.pulls) this.refresh(pr);
    const issues: IssueView[] = this.issues.map((i) => ({
      ...i,
      labels: i.labels.map((name) => this.labels.get(name.toLowerCase())!),
    }));
    const pulls: IssueView[] = this.pulls.map((pr) => ({
      number: pr.number,
      id: pr.id,
      title: pr.title,
      body: pr.body,
      state: pr.state,
      closedAt: pr.closedAt,
      createdAt: pr.createdAt,
      updatedAt: pr.updatedAt,
      labels: this.labelsOf(pr),
      pull: { mergedAt: pr.mergedAt },
    }));
    return [...issues, ...pulls].sort((a, b) => a.number - b.number);
  }

  openIssue(init: { title: string; body: string | null; labels: string[] }): IssueState {
    const now = isoNow();
    for (const name of init.labels) {
      const key = name.toLowerCase();
      if (!this.labels.has(key)) this.labels.set(key, { id: this.nextId++, name, color: "ededed" });
    }
    const issue: IssueState = {
      ...init,
      number: this.nextNumber++,
      id: this.nextId++,
      state: "open",
      closedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    this.issues.push(issue);
    return issue;
  }

  /** Applies path edits to a flattened tree: inline content, an entry, or null to delete. */
  applyEdits(
    entries: Map<string, TreeEntry>,
    edits: readonly { path: string; content?: string | null; entry?: TreeEntry }[],
  ): void {
    const contents = edits.filter((e) => typeof e.content === "string");
    const shas = this.git.writeBlobs(contents.map((e) => Buffer.from(e.content as string, "utf8")));
    const blobOf = new Map(contents.map((e, i) => [e, shas[i]!]));
    for (const edit of edits) {
      // A path replaces whatever was there, file or folder.
      for (const existing of [...entries.keys()]) {
        if (existing === edit.path || existing.startsWith(`${edit.path}/`))
          entries.delete(existing);
      }
      const blob = blobOf.get(edit);
      if (blob !== undefined) entries.set(edit.path, { mode: "100644", type: "blob", sha: blob });
      else if (edit.entry?.type === "tree") {
        for (const [path, e] of this.git.flatten(edit.entry.sha))
          entries.set(`${edit.path}/${path}`, e);
      } else if (edit.entry !== undefined) entries.set(edit.path, edit.entry);
    }
  }

  /** GitHub closes an open PR whose head is moved to a commit its base already has. */
  afterRefMove(ref: string): void {
    for (const pr of this.pulls)
      if (pr.state === "open" && `refs/heads/${pr.head}` === ref) this.refresh(pr);
  }

  /**
   * Brings an open PR up to date with the repository, as GitHub does on push: a head moved
   * into its base (or deleted) closes it; a base that came to contain the unchanged head
   * marks it merged.
   */
  refresh(pr: PullState): void {
    if (pr.state !== "open") return;
    const head = this.branchSha(pr.head);
    const base = this.branchSha(pr.base);
    const now = isoNow();
    if (head === null || base === null) {
      Object.assign(pr, { state: "closed", closedAt: now, updatedAt: now });
      return;
    }
    const moved = head !== pr.headSha;
    pr.headSha = head;
    if (!this.git.isAncestor(head, base)) return;
    if (moved) Object.assign(pr, { state: "closed", closedAt: now, updatedAt: now });
    else
      Object.assign(pr, {
        state: "closed",
        closedAt: now,
        updatedAt: now,
        merged: true,
        mergedAt: now,
        mergeCommitSha: head,
      });
  }

  pullOf(c: Context): PullState {
    const pr = this.pulls.find(
      (p) => p.number === Number(c.params.pull_number ?? c.params.issue_number),
    );
    if (pr === undefined) throw new HttpError(404, "Not Found");
    this.refresh(pr);
    return pr;
  }

  openPull(init: {
    head: string;
    base: string;
    title: string;
    body: string | null;
    draft: boolean;
  }): PullState {
    const now = isoNow();
    const pr: PullState = {
      ...init,
      number: this.nextNumber++,
      id: this.nextId++,
      headSha: this.branchSha(init.head) ?? ZERO_SHA,
      state: "open",
      merged: false,
      mergedAt: null,
      mergeCommitSha: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
      labels: [],
      reviewers: [],
      teams: [],
      maintainerCanModify: false,
    };
    this.pulls.push(pr);
    return pr;
  }
}
