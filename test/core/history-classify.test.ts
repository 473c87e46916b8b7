/** Commit classification (pure): noise, decisions with reasons, lessons, conventions, changes. */
import { describe, expect, it } from "vitest";
import { compactSlice } from "../../src/core/compaction/compact.js";
import { decideCompaction } from "../../src/core/compaction/decide.js";
import { summarizeCommits } from "../../src/core/compaction/history.js";
import { entityMatcher } from "../../src/core/graph/entities.js";
import { classifyCommit } from "../../src/core/history/classify.js";
import { areaOf, classifyMessage, parseCommitMessage } from "../../src/core/history/git-events.js";
import { MemoryConfig } from "../../src/schema/config.js";
import { memoryEvent } from "./engine-fixtures.js";

const c = (subject: string, body = "", extra: { parents?: number; author?: string } = {}) =>
  classifyCommit({ subject, body, ...extra });

describe("classifyCommit", () => {
  it("counts noise: merges, releases, dependency bumps, content-free subjects", () => {
    const noise: [string, string, object?][] = [
      ["Merge branch 'main' into topic", "merge"],
      ["Merge pull request #12 from a/b", "merge"],
      ["Land the topic", "merge", { parents: 2 }],
      ["Release 1.4.0", "release"],
      ["v2.0.0", "release"],
      ["chore(main): release 2.3.0", "release"],
      ["chore(release): 1.2.0", "release"],
      ["Bump version to 1.2.3", "release"],
      ["Bump X from 0.5.2 to 0.7.0", "dependency"],
      ["fix: bump release-please from 13.1 to 13.2", "dependency"],
      ["chore(deps): update dependency typescript to v5.4", "dependency"],
      ["build(deps-dev): bump vitest", "dependency"],
      ["Bump the npm group with 5 updates", "dependency"],
      ["Update lodash", "dependency", { author: "renovate[bot] <bot@renovate.invalid>" }],
      ["Fix a thing", "trivial"],
      ["Try again", "trivial"],
      ["More stuff", "trivial"],
      ["wip", "trivial"],
      ["fix: typo", "trivial"],
      ["memory: +9 decisions, +10 lessons, 2 promoted (⚠ 3) (#41)", "trivial"],
      ["memory: 1 promoted, 1 evicted (#42)", "trivial"],
    ];
    for (const [subject, kind, extra] of noise) {
      expect(c(subject, "", extra).noise, subject).toBe(kind);
    }
  });

  it("recognises stated choices, breaking changes and reasons, with the PR", () => {
    const choices = [
      "Remove the legacy loader in favor of the streaming one",
      "Use A by default and require B when C",
      "switch to D",
      "E should default to false",
      "Replace moment with date-fns",
      "Deprecate the --fast flag",
      "Drop support for Node 16",
      "refactor: parse with zod instead of hand-written guards",
      "Require a token for every write",
    ];
    for (const subject of choices) expect(c(subject).decision, subject).toBeDefined();
    for (const subject of ["Fix switch statement to handle nulls", "Add a parser", "Move docs"]) {
      expect(c(subject).decision, subject).toBeUndefined();
    }
    expect(c("Switch the parser to a streaming reader").decision).toBeDefined();
    expect(c("Migrate from jest to vitest").decision).toBeDefined();
    const pr = c(
      "feat(cli): use JSON output by default (#123)",
      "Scripts broke on every wording change.\n\nWe do it because scripts parse the output. Unrelated text.",
    );
    expect(pr).toMatchObject({
      type: "feat",
      scope: "cli",
      pr: 123,
      decision: {
        title: "use JSON output by default",
        rationale: "We do it because scripts parse the output.",
      },
    });
    expect(c("feat!: drop the v1 API").decision?.title).toBe("drop the v1 API");
    expect(
      c("Rework the cache", "BREAKING CHANGE: entries are now keyed by path.").decision?.title,
    ).toBe("Rework the cache (breaking: entries are now keyed by path)");
    expect(c("Use tabs instead of spaces because the linter wants them").decision).toEqual({
      title: "Use tabs instead of spaces",
      rationale: "because the linter wants them",
      confidence: 0.8,
    });
    // A merged PR's title (the merge body) may state the choice.
    expect(
      c("Merge pull request #9 from a/b", "Switch to pnpm\n\nso that installs are reproducible", {
        parents: 2,
      }),
    ).toMatchObject({ pr: 9, decision: { title: "Switch to pnpm" } });
    // With a Decision: trailer, that is the decision; nothing is inferred besides.
    expect(
      classifyCommit({ subject: "Use X by default", body: "", decisionTrailer: true }).decision,
    ).toBeUndefined();
  });

  it("recognises the choices real histories state (issue 28's examples)", () => {
    const decisions: [string, string?][] = [
      ["feat!: use the API for pushes by default", "BREAKING CHANGE: git push is no longer used"],
      ["fix: the sign-commits option should default to false"],
      ["fix: restore the include-component-in-tag default (false)"],
      ["refactor: switch to esbuild"],
      ["chore: enable merge queue"],
      ["build: configure the repository to use release-please for releases"],
      ["Rename the inputs and outputs"],
      ["Split the publishing workflow"],
      ["ci: prefer pnpm over npm"],
      ["Deprecate the v1 loader"],
      ["Drop support for Node 16"],
      ["Drop EOL node 20 from the test matrix"],
      ["feat: run the action on node20"],
      ["Update the default runtime to node20"],
      ["Pin GitHub actions with hash"],
      ["Do not pass credentials on the command line"],
      ["fix: stop providing default values in action.yml"],
      [
        "ESLint changes preparing for Prettier",
        "Switch from StandardJS to ESLint using flat configuration.",
      ],
    ];
    for (const [subject, body] of decisions) {
      expect(c(subject, body).decision, subject).toBeDefined();
    }
    const not: string[] = [
      "build: switch back to v2",
      "chore: pin to sha until we have real releases",
      "feat!: initial implementation",
      "fix: do not try to fork",
      "ci: test on node 18 and 20",
      "Removed unused jsdoc plugins for eslint and prettier",
      "docs: fix a typo in the outputs",
    ];
    for (const subject of not) expect(c(subject).decision, subject).toBeUndefined();
    // A breaking change's footer joins its title; the body gives the reason.
    expect(
      c("feat!: use the API for pushes by default", "BREAKING CHANGE: git push is no longer used")
        .decision?.title,
    ).toBe("use the API for pushes by default (breaking: git push is no longer used)");
  });

  it("draws lessons from reverts and regression fixes, conventions from naming and style", () => {
    expect(
      c(
        'Revert "Cache DNS answers"',
        "This reverts commit abcdef0.\n\nStale answers broke failover because the TTL was ignored.",
      ).lesson,
    ).toBe(
      'Reverted "Cache DNS answers": Stale answers broke failover because the TTL was ignored.',
    );
    expect(c("Fix regression in path handling since 2.1").lesson).toBe(
      "Regression: Fix regression in path handling since 2.1",
    );
    expect(c("Rename getUser to fetchUser").convention).toBe("Rename getUser to fetchUser");
    expect(c("style: use single quotes in tests").convention).toBe("use single quotes in tests");
  });

  it("reads merge titles, `Breaking:` subjects, runtime support and libraries adopted", () => {
    const merge = (title: string) =>
      classifyMessage({
        message: `Merge pull request #7 from a/b\n\n${title}`,
        parents: 2,
      }).cls;
    // The title reads as a trailer line, and as a commit of its own.
    expect(merge("chore: update supported Node versions").decision?.title).toBe(
      "update supported Node versions",
    );
    expect(merge("Breaking: Rename `.deep.property` to `.nested.property`").decision).toBeDefined();
    expect(merge("Fix tests for .throws using getName instead of .name").noise).toBe("merge");
    expect(merge("Update mocha to version 3.0.0").noise).toBe("merge");
    expect(c("Breaking: Fix `.include` to always use strict equality").breaking).toBe(true);
    for (const subject of [
      "Update package.json engines node version",
      "ci: Update node-version",
      "Use external pathval module instead of internal util modules",
      "Refactor throw to use checkError module",
      "Un-deprecate `length` and add guard",
      "refactor(lengthOf): favor it over `length`",
      "No longer silently allowing undefined method calls",
      "Remove hasProperty util",
      "drop the --fast flag",
      "chore: use travis sauce_connect addon for saucelabs",
      "Fix broken tests in Node v6.5 and update supported node versions",
    ]) {
      expect(c(subject).decision, subject).toBeDefined();
    }
    for (const subject of [
      "fix: always honor custom message",
      "Fix tests for .throws using getConstructorName instead of .name",
      "fix: no longer crash on empty input",
      "Remove new methods and properties after using them for test",
      "Remove bump command to change lib/chai.js",
    ]) {
      expect(c(subject).decision, subject).toBeUndefined();
    }
    // One code construct for another is how the code is written.
    expect(c("Use getOwnPropertyDescriptor instead of __lookupGetter__")).toMatchObject({
      convention: "Use getOwnPropertyDescriptor instead of __lookupGetter__",
    });
    expect(c("Use pnpm instead of npm").decision).toBeDefined();
    // A wrapped BREAKING CHANGE paragraph: its first sentence in the title, the rest the reason.
    expect(
      classifyMessage({
        message:
          "fix: wrong assertion types\n\nBREAKING CHANGE: `.change` changed from\r\nChainable Method " +
          "Assertions to Method Assertions. They have no\r\nchaining behavior.",
      }).cls.decision,
    ).toEqual({
      title:
        "wrong assertion types (breaking: `.change` changed from Chainable Method Assertions to Method Assertions)",
      rationale: "They have no chaining behavior.",
      confidence: 0.9,
    });
    // A conventional title in a body's last paragraph is not a trailer.
    expect(
      parseCommitMessage("Merge pull request #7 from a/b\n\nfix: the parser").trailers,
    ).toEqual([]);
  });

  it("calls a refactor's preferred language construct a convention, a library or tool a decision", () => {
    for (const subject of [
      "refactor: use an object spread instead of Object.assign",
      "refactor: use optional chaining instead of && guards",
      "Refactor the loaders to async/await instead of callbacks",
      "style: prefer template literals over string concatenation",
    ]) {
      const cls = c(subject);
      expect(cls.decision, subject).toBeUndefined();
      expect(cls.convention, subject).toBeDefined();
    }
    for (const subject of [
      "refactor: parse with zod instead of hand-written guards",
      "refactor: switch to esbuild",
      "Use node:util stripVTControlCharacters instead of own code",
      "feat: use Object.hasOwn instead of the in operator for options",
    ]) {
      expect(c(subject).decision, subject).toBeDefined();
    }
  });

  it("types and plain changes: conventional when present, inferred otherwise", () => {
    expect(c("Add a retry to the client")).toMatchObject({ type: "feat" });
    expect(c("fix(parser): handle empty input")).toMatchObject({ type: "fix", scope: "parser" });
    expect(c("Improve messages")).toMatchObject({ type: "other" });
    expect(c("NATS: one message per send").type).toBe("other");
    const plain = c("Add a retry to the client");
    expect(plain.noise ?? plain.decision ?? plain.lesson ?? plain.convention).toBeUndefined();
  });
});

describe("classifyCommit: a choice of prose is no decision", () => {
  it("keeps headline, wording and typo choices out, and the same forms about code in", () => {
    expect(c("updated headlines to use h3's instead of h1's", "").decision).toBeUndefined();
    expect(c('Use weaker wording: "broken" instead of "illegal"', "").decision).toBeUndefined();
    expect(c("Prefer the oxford comma in spelling of docs", "").decision).toBeUndefined();
    expect(c("Use the REST API instead of git for pushes", "").decision).toBeDefined();
    expect(c("Prefer ESM over CommonJS", "").decision).toBeDefined();
  });
});

describe("decideCompaction with history events", () => {
  const memory = MemoryConfig.parse({ buffer_keep_recent_events: 200 });
  const at = "2026-01-01T00:00:00.000Z";
  it("compacts every event through the newest history event, window and budgets aside", () => {
    const shape = { eventBytes: new Array(300).fill(100), totalBytes: 30_000 };
    expect(decideCompaction(shape, memory, undefined, at, false).take).toBe(0);
    expect(
      decideCompaction({ ...shape, historyThrough: 250 }, memory, undefined, at, false),
    ).toEqual({
      take: 250,
      reason: "history",
    });
    expect(decideCompaction({ ...shape, historyThrough: 50 }, memory, undefined, at, true)).toEqual(
      {
        take: 100,
        reason: "forced",
      },
    );
  });
});

describe("areaOf", () => {
  it("is the registry component covering most files, else the top folder", () => {
    expect(areaOf(["src/a.ts", "src/b.ts", "docs/x.md"])).toBe("src");
    expect(areaOf(["packages/web/a.ts", "packages/web/b.ts"])).toBe("packages/web");
    expect(areaOf(["README.md", "package.json"])).toBe("(root)");
    const registry = entityMatcher({
      people: [],
      projects: [{ id: "engine", name: "Engine", aliases: [], paths: ["src/**"] }],
      components: [{ id: "parser", name: "Parser", aliases: [], paths: ["src/parse/**"] }],
    });
    expect(areaOf(["src/parse/a.ts", "src/x.ts"], registry.areasOf)).toBe("parser");
    expect(areaOf(["src/x.ts"], registry.areasOf)).toBe("engine");
    expect(areaOf(["docs/x.md"], registry.areasOf)).toBe("docs");
  });
});

describe("compactSlice with history events", () => {
  const policy = {
    engram_max_bytes: 16 * 1024,
    stall_seconds: 600,
    promote_min_confidence: 0.7,
    max_groups: 24,
  };
  const last = "2026-11-22T12:00:00.000Z";
  const live = Array.from({ length: 30 }, (_, i) =>
    memoryEvent(i + 1, {
      kind: i % 3 === 0 ? "decision" : "lesson",
      text: `live note ${i}`,
      topics: [`t${i % 5}`],
      received_at: i === 29 ? last : memoryEvent(i + 1).received_at,
    }),
  );
  const git = { role: "operator" as const, id: "git-history" };
  const history = [
    memoryEvent(31, {
      type: "memory_event.v1",
      kind: "commit:feat",
      sender: git,
      text: "Add a parser",
      topics: ["src"],
      sent_at: "2021-03-01T00:00:00.000Z",
    }),
    memoryEvent(32, {
      type: "memory_event.v1",
      kind: "noise:dependency",
      sender: git,
      text: "Bump a from 1 to 2",
      topics: ["(root)"],
      sent_at: "2024-03-01T00:00:00.000Z",
    }),
    memoryEvent(33, {
      kind: "decision",
      sender: git,
      text: "Use zod by default",
      rationale: "one schema",
      topics: ["src"],
      sent_at: "2022-01-01T00:00:00.000Z",
    }),
    memoryEvent(34, {
      kind: "decision",
      sender: git,
      text: "Drop support for Node 16",
      topics: ["src"],
      sent_at: "2025-01-01T00:00:00.000Z",
      received_at: last,
    }),
  ];

  it("leaves a live swarm's engrams exactly as they were, and extracts history apart", () => {
    const alone = compactSlice(live, policy);
    const mixed = compactSlice([...live, ...history], policy);
    for (const engram of alone) expect(mixed).toContainEqual(engram);
    const extra = mixed.filter((e) => !alone.some((a) => a.engram_id === e.engram_id));
    expect(extra.flatMap((e) => e.decisions)).toEqual([
      { title: "Drop support for Node 16", rationale: "" },
      { title: "Use zod by default", rationale: "one schema" },
    ]);
    const facts = extra.flatMap((e) => e.facts);
    expect(facts).toContain('Area src: 1 commit, 2021 (1 feature); latest: "Add a parser"');
    expect(facts).toContain("1 dependency bump, 2024");
    expect(facts.join("\n")).not.toContain("Bump a");
  });
});

describe("an area's summary", () => {
  it("lists no latest subjects when none says anything (no bare `latest:`)", () => {
    const git = { role: "operator" as const, id: "git-history" };
    const merge = memoryEvent(1, {
      type: "memory_event.v1",
      kind: "commit:merge",
      sender: git,
      text: "Merge branch 'main' into dev",
      topics: ["docs"],
      sent_at: "2023-05-01T00:00:00.000Z",
    });
    const facts = summarizeCommits([merge]);
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatch(/^Area docs: 1 commit, 2023 \(/);
    expect(facts[0]).not.toContain("latest:");
  });
});
