/**
 * The Director's whole pull-request flow through the built bin, against the local
 * GitHub-compatible server (every request and response checked against GitHub's OpenAPI
 * description) whose bare repository is also the git remote: open, update, merge, reject,
 * the 403 explanation, the Git Data API route and racing Directors.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parsePrMarker } from "../../src/core/rendering/pr-body.js";
import { EXIT } from "../../src/errors.js";
import { createGitHub } from "../../src/github/client.js";
import {
  type BinResult,
  DIRECTOR_BIN,
  describeResult,
  director,
  jsonOf,
  spawnBin,
  worker,
} from "../support/bins.js";
import { ndjson, note } from "../support/envelopes.js";
import type { FakeGitHub } from "../support/fake-github.js";
import { useFakeGitHub } from "../support/fake-github-hooks.js";
import { git, TempDirs, type TempRepo } from "../support/repo.js";

const dirs = new TempDirs();
const TOKEN = "ghs_fakeTokenForTheLocalServer0000000000";
const BRANCH = "engram/memory";
const github = useFakeGitHub(dirs, TOKEN, "engram-fake-github-");
let fake: FakeGitHub;
let apiUrl: string;
beforeAll(() => {
  ({ fake, apiUrl } = github);
});

interface RunJson {
  proposal: {
    status: string;
    head_sha: string | null;
    via: string | null;
    rejected: number;
    pr: { number: number; url: string; created: boolean } | null;
    api_calls?: number;
  };
}

const env = () => ({
  GITHUB_TOKEN: TOKEN,
  GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
  GITHUB_API_URL: apiUrl,
});

/** A Director clone whose origin is the fake's bare repository, main initialized there. */
async function directorClone(config = ""): Promise<TempRepo> {
  const repo = dirs.repo("engram-pr-flow-");
  git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
  if (fake.branchSha("main") === null) {
    repo.writeConfig(`[memory]\nbuffer_keep_recent_events = 0\n${config}`);
    expect((await director(["init"], { cwd: repo.dir })).code).toBe(0);
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    git(repo.dir, ["push", "-q", "origin", "main"]);
  } else {
    git(repo.dir, ["fetch", "-q", "origin"]);
    git(repo.dir, ["checkout", "-q", "-B", "main", "origin/main"]);
    repo.writeConfig(`[memory]\nbuffer_keep_recent_events = 0\n${config}`);
  }
  return repo;
}

async function remember(repo: TempRepo, texts: string[]): Promise<void> {
  for (const text of texts) {
    const r = await worker(["emit", "--kind", "fact", "--text", text, "--topic", "flow"], {
      cwd: repo.dir,
    });
    expect(r.code, describeResult(r)).toBe(0);
  }
}

function propose(repo: TempRepo, epoch: number): Promise<BinResult> {
  return director(["run", "--pr", "--force", "--json"], {
    cwd: repo.dir,
    env: { ...env(), SOURCE_DATE_EPOCH: String(epoch) },
    timeoutMs: 90_000,
  });
}

function openPulls() {
  return fake.allPulls().filter((p) => p.state === "open");
}

describe("director run --pr against a GitHub-compatible server", () => {
  let repo: TempRepo;

  it("opens one PR with labels and a reviewable body, then updates the same PR", async () => {
    repo = await directorClone();
    await remember(repo, ["the fake validates every request", "merges are real git merges"]);
    const first = jsonOf<RunJson>(await propose(repo, 1_800_000_000));
    expect(first.proposal).toMatchObject({ status: "created", via: "git" });
    expect(first.proposal.pr).toMatchObject({ number: expect.any(Number), created: true });
    const pr = fake.pull(first.proposal.pr?.number as number);
    expect(pr?.labels).toEqual(["memory"]);
    expect(pr?.head).toBe(BRANCH);
    expect(parsePrMarker(pr?.body ?? "")?.head_branch).toBe(BRANCH);
    expect(pr?.body).toMatch(/merges are real git merges|the fake validates every request/);

    const idle = jsonOf<RunJson>(await propose(repo, 1_800_000_010));
    expect(idle.proposal.status).toBe("unchanged");
    expect(idle.proposal.pr?.number).toBe(first.proposal.pr?.number);

    await remember(repo, ["a second round of facts"]);
    const second = jsonOf<RunJson>(await propose(repo, 1_800_000_100));
    expect(second.proposal.status).toBe("updated");
    expect(second.proposal.pr).toMatchObject({ number: first.proposal.pr?.number, created: false });
    expect(openPulls()).toHaveLength(1);
    expect(fake.branchSha(BRANCH)).toBe(second.proposal.head_sha);
  });

  it("after the PR is merged proposes only what is new, in a new PR", async () => {
    const [open] = openPulls();
    const gh = createGitHub({ token: TOKEN, apiUrl });
    await gh.octokit.rest.pulls.merge({
      owner: fake.owner,
      repo: fake.repo,
      pull_number: open?.number as number,
    });
    const idle = jsonOf<RunJson>(await propose(repo, 1_800_000_200));
    expect(idle.proposal.status).toBe("nothing-to-propose");
    await remember(repo, ["after the merge"]);
    const next = jsonOf<RunJson>(await propose(repo, 1_800_000_300));
    expect(next.proposal.pr?.created).toBe(true);
    expect(next.proposal.pr?.number).not.toBe(open?.number);
    expect(fake.git.git(["rev-parse", `${BRANCH}^`]).trim()).toBe(fake.branchSha("main"));
  });

  it("a PR closed without merging rejects its engrams: they are not proposed again", async () => {
    const [open] = openPulls();
    const gh = createGitHub({ token: TOKEN, apiUrl });
    await gh.octokit.rest.pulls.update({
      owner: fake.owner,
      repo: fake.repo,
      pull_number: open?.number as number,
      state: "closed",
    });
    const after = jsonOf<RunJson>(await propose(repo, 1_800_000_400));
    expect(after.proposal.rejected).toBeGreaterThan(0);
    expect(after.proposal.status).toBe("nothing-to-propose");
    expect(openPulls()).toHaveLength(0);

    await remember(repo, ["proposed after the rejection"]);
    const next = jsonOf<RunJson>(await propose(repo, 1_800_000_500));
    expect(next.proposal.pr?.created).toBe(true);
    const body = fake.pull(next.proposal.pr?.number as number)?.body ?? "";
    expect(body).toMatch(/proposed after the rejection/);
    expect(body).not.toMatch(/after the merge/);
  });

  it("explains a 403 from a repository that does not let Actions open PRs, and converges on re-run", async () => {
    const other = await directorClone('[github]\nhead_branch = "engram/forbidden"\n');
    await remember(other, ["held back by a repository setting"]);
    fake.inject("pulls/create", { kind: "actions-not-permitted" });
    const refused = await propose(other, 1_800_000_600);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stderr).toMatch(/Allow GitHub Actions to create and approve pull requests/);
    expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(fake.branchSha("engram/forbidden")).not.toBeNull();
    const again = jsonOf<RunJson>(await propose(other, 1_800_000_610));
    expect(again.proposal.pr?.created).toBe(true);
    expect(openPulls().filter((p) => p.head === "engram/forbidden")).toHaveLength(1);
  });

  it("a GitHub request that fails is an external-service failure: exit 69, code github", async () => {
    const other = await directorClone('[github]\nhead_branch = "engram/unreachable"\n');
    await remember(other, ["proposed to a repository GitHub does not know"]);
    const r = await director(["run", "--pr", "--force", "--json"], {
      cwd: other.dir,
      env: { ...env(), GITHUB_REPOSITORY: `${fake.owner}/no-such-repository` },
      timeoutMs: 90_000,
    });
    expect(r.code, describeResult(r)).toBe(EXIT.unavailable);
    expect(r.code).not.toBe(EXIT.findings);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: "GitHubApiError", code: "github" });
    expect(r.stderr).toMatch(/GitHub.*404/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("commits through the Git Data API in a constant number of calls", async () => {
    const other = await directorClone(
      '[github]\nhead_branch = "engram/api"\nuse_git_data_api = true\n',
    );
    const few = jsonOf<RunJson>(await propose(other, 1_800_000_700));
    expect(["created", "nothing-to-propose"]).toContain(few.proposal.status);
    await remember(other, ["one fact through the API"]);
    const small = jsonOf<RunJson>(await propose(other, 1_800_000_710));
    expect(small.proposal.via).toBe("api");
    const many = other.write(
      ".engram/many.ndjson",
      ndjson(
        Array.from({ length: 30 }, (_, i) =>
          note("fact", `fact ${i} through the API`, {
            eventId: `api-${i}`,
            topics: [`topic-${i}`],
          }),
        ),
      ),
    );
    expect((await director(["ingest", many], { cwd: other.dir })).code).toBe(0);
    const large = jsonOf<RunJson>(await propose(other, 1_800_000_720));
    expect(large.proposal.via).toBe("api");
    expect(large.proposal.api_calls).toBeLessThanOrEqual((small.proposal.api_calls ?? 0) + 1);
    expect(fake.branchSha("engram/api")).toBe(large.proposal.head_sha);
  });

  it("two Directors at once yield one PR and one branch with both proposals", async () => {
    const a = await directorClone('[github]\nhead_branch = "engram/race"\n');
    const b = await directorClone('[github]\nhead_branch = "engram/race"\n');
    await remember(a, ["director A remembers this"]);
    await remember(b, ["director B remembers that"]);
    const runs = [a, b].map(
      (r) =>
        spawnBin(DIRECTOR_BIN, ["run", "--pr", "--force", "--json"], {
          cwd: r.dir,
          env: { ...env(), SOURCE_DATE_EPOCH: "1800000800" },
          timeoutMs: 90_000,
        }).done,
    );
    const results = (await Promise.all(runs)).map((r) => jsonOf<RunJson>(r));
    const numbers = new Set(results.map((r) => r.proposal.pr?.number));
    expect(numbers.size).toBe(1);
    expect(openPulls().filter((p) => p.head === "engram/race")).toHaveLength(1);
    const catalog = JSON.parse(fake.git.git(["show", "engram/race:memory/catalog.json"])) as {
      entries: { path: string }[];
    };
    const facts = catalog.entries.flatMap(
      (e) =>
        (JSON.parse(fake.git.git(["show", `engram/race:${e.path}`])) as { facts: string[] }).facts,
    );
    expect(facts.filter((f) => f.startsWith("director A")).length).toBe(1);
    expect(facts.filter((f) => f.startsWith("director B")).length).toBe(1);
  });
});
