/**
 * Tana receives the learning states `worker learnings` decides: a learning merged through
 * its engram pull request is a learning node confirmed at the merge, one in a pull request
 * closed unmerged a proposal node `rejected` decided at the close, one only in the work tree
 * a proposal node `pending`. Real bins, the local GitHub-compatible server, the Tana stand-in.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGitHub } from "../../src/github/client.js";
import { assertBuilt, type BinResult, describeResult, director, worker } from "../support/bins.js";
import { useFakeGitHub } from "../support/fake-github-hooks.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import type { FakeNode } from "../support/fake-tana-store.js";
import { git, TempDirs } from "../support/repo.js";
import { tanaRepoConfig } from "../support/tana-fixtures.js";

const TOKEN = "ghs_fakeTokenForTheLocalServer0000000000";
const dirs = new TempDirs();
const github = useFakeGitHub(dirs, TOKEN, "engram-tana-states-github-");
let tana: FakeTana | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await tana?.stop();
  tana = undefined;
});

function ok(r: BinResult): BinResult {
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

const seconds = (iso: string) => iso.replace(/\.\d{3}Z$/, "Z");

describe("director sync run --target tana with learning states", () => {
  it("sends confirmed learnings as learnings, proposed and rejected ones as proposals", async () => {
    const { fake, apiUrl } = github;
    tana = new FakeTana({ token: "in-tok", localToken: "loc-tok", perSecond: QUICK_TANA_RATE });
    await tana.start();
    const env = {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${fake.owner}/${fake.repo}`,
      GITHUB_API_URL: apiUrl,
      TANA_TOKEN: "in-tok",
      TANA_LOCAL_TOKEN: "loc-tok",
    };
    const repo = dirs.repo("engram-tana-states-");
    git(repo.dir, ["remote", "add", "origin", fake.git.dir]);
    repo.writeConfig(tanaRepoConfig(tana));
    ok(await director(["init"], { cwd: repo.dir }));
    git(repo.dir, ["add", "-A"]);
    git(repo.dir, ["commit", "-q", "-m", "init"]);
    git(repo.dir, ["push", "-q", "origin", "main"]);
    const remember = async (text: string) =>
      ok(
        await worker(
          ["emit", "--kind", "lesson", "--text", text, "--topic", "flow", "--privacy", "public"],
          {
            cwd: repo.dir,
            env,
          },
        ),
      );
    const propose = async (epoch: number) => {
      const r = ok(
        await director(["run", "--pr", "--force", "--json"], {
          cwd: repo.dir,
          env: { ...env, SOURCE_DATE_EPOCH: String(epoch) },
          timeoutMs: 90_000,
        }),
      );
      return (JSON.parse(r.stdout) as { proposal: { pr: { number: number } } }).proposal.pr.number;
    };
    const gh = createGitHub({ token: TOKEN, apiUrl });
    const repoRef = { owner: fake.owner, repo: fake.repo };

    await remember("Merged lessons are confirmed");
    const first = await propose(1_800_000_000);
    await gh.octokit.rest.pulls.merge({ ...repoRef, pull_number: first });
    const mergedAt = seconds(fake.pull(first)?.mergedAt as string);
    await remember("Closed lessons are rejected");
    const second = await propose(1_800_000_100);
    await gh.octokit.rest.pulls.update({ ...repoRef, pull_number: second, state: "closed" });
    const closedAt = seconds(fake.pull(second)?.closedAt as string);
    await remember("Unproposed lessons are pending");
    ok(await director(["run", "--force"], { cwd: repo.dir, env }));

    const run = ok(
      await director(["sync", "run", "--target", "tana", "--force", "--json"], {
        cwd: repo.dir,
        env,
      }),
    );
    expect(JSON.parse(run.stdout).sent.created_or_updated, run.stdout).toBe(3);

    const store = tana.store;
    const fields = (n: FakeNode): Record<string, string[]> =>
      Object.fromEntries(
        [...n.fields].map(([attr, values]) => [store.nodes.get(attr)?.name ?? attr, values]),
      );
    const tagged = (name: string) =>
      store
        .tagged(store.tagByName(name)?.id ?? "")
        .map((n) => ({ name: n.name, ...fields(n) }))
        .sort((a, b) => a.name.localeCompare(b.name));
    const learnings = tagged("pai_learning");
    expect(learnings).toHaveLength(1);
    expect(learnings[0]).toMatchObject({
      name: "Merged lessons are confirmed",
      confirmedAt: [mergedAt],
    });
    const proposals = tagged("pai_proposal");
    expect(proposals).toHaveLength(2);
    expect(proposals[0]).toMatchObject({
      name: "Closed lessons are rejected",
      status: ["rejected"],
      decidedAt: [closedAt],
      extractedFrom: [`closed pull request #${second}`],
    });
    expect(proposals[1]).toMatchObject({
      name: "Unproposed lessons are pending",
      status: ["pending"],
      extractedFrom: ["work tree"],
    });
    expect(proposals[1]).not.toHaveProperty("decidedAt");

    // The same states again: nothing to send, no call to Tana.
    const calls = tana.calls.length;
    const again = ok(
      await director(["sync", "run", "--target", "tana", "--force", "--json"], {
        cwd: repo.dir,
        env,
      }),
    );
    expect(JSON.parse(again.stdout).sent.created_or_updated).toBe(0);
    expect(tana.calls.length).toBe(calls);
  });
});
