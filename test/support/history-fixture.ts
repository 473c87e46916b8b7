/**
 * A generated project history in a real git repository, written by one `git fast-import`
 * (fixed dates, so the same call gives the same commits): free-form and conventional
 * subjects, merges, dependency bumps by a bot and by people, releases, content-free commits,
 * reverts, regression fixes, renames, and labelled decisions with and without bodies.
 */
import { execFileSync } from "node:child_process";
import { childEnv } from "./bins.js";

export interface LabelledDecision {
  /** Text the decision's title must contain (case-insensitive). */
  needle: string;
  /** Text its rationale must contain, when the body gives a reason. */
  rationale?: string;
  /** Commit time, seconds since 1970. */
  at: number;
}

export interface HistoryFixture {
  commits: number;
  decisions: LabelledDecision[];
  /** Subjects of commits that must only be counted. */
  noise: string[];
  lessons: string[];
}

const START = Date.UTC(2019, 0, 7) / 1000;
const BOT = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>";
const PERSON = "Ada Dev <ada@example.invalid>";
const AREAS = ["src/core", "src/cli", "docs", "test", "packages/web", "scripts"];
const LIBS = ["zod", "yaml", "undici", "pino", "vitest", "esbuild", "ajv", "chalk"];

interface Spec {
  subject: string;
  body?: string;
  author?: string;
  area: string;
  decision?: { needle: string; rationale?: string };
  noise?: boolean;
  lesson?: string;
}

/** The i-th commit of the generated history (a pure function of i). */
function specFor(i: number): Spec {
  const lib = LIBS[i % LIBS.length] as string;
  const other = LIBS[(i + 3) % LIBS.length] as string;
  const area = AREAS[i % AREAS.length] as string;
  const n = `${lib}-${i}`;
  const reason = `the ${n} path was ${i % 2 === 0 ? "twice as fast" : "simpler to test"}`;
  switch (i % 20) {
    case 0:
      return {
        subject: `Use ${n} by default`,
        body: `We measured both. Chosen because ${reason}.`,
        area,
        decision: { needle: `Use ${n} by default`, rationale: reason },
      };
    case 1:
      return {
        subject: `Bump ${lib} from 1.${i}.0 to 1.${i + 1}.0`,
        author: BOT,
        area: "(root)",
        noise: true,
      };
    case 2:
      return { subject: `feat(cli): add --${n} flag to status`, area: "src/cli" };
    case 3:
      return { subject: i % 40 === 3 ? "fix a thing" : "wip", area, noise: true };
    case 4:
      return {
        subject: `Remove ${n} in favor of ${other}`,
        area,
        decision: { needle: `Remove ${n} in favor of ${other}` },
      };
    case 5:
      return {
        subject: `chore(deps): update dependency ${lib} to v${i}`,
        area: "(root)",
        noise: true,
      };
    case 6:
      return {
        subject: `Fix crash when ${n} is empty`,
        body: "The loader read past the end.",
        area,
      };
    case 7:
      return {
        subject: `refactor(core): switch to ${n} for parsing (#${100 + i})`,
        body: `The old parser is kept for a release so that plugins can migrate.`,
        area: "src/core",
        decision: {
          needle: `switch to ${n} for parsing`,
          rationale: "so that plugins can migrate",
        },
      };
    case 8:
      return {
        subject: i % 40 === 8 ? `Release 1.${i}.0` : `chore(main): release 2.${i}.0`,
        area: "(root)",
        noise: true,
      };
    case 9:
      return i % 40 === 9
        ? {
            subject: `Revert "Add ${n} cache"`,
            body: `This reverts commit ${"ab".repeat(20)}.\n\nThe cache served stale data because invalidation ran after the write.`,
            area,
            lesson: `Add ${n} cache`,
          }
        : { subject: `Rename ${n}Client to ${n}Session across the API`, area };
    case 10:
      return {
        subject: `The ${n} option should default to false`,
        area,
        decision: { needle: `The ${n} option should default to false` },
      };
    case 11:
      return { subject: i % 40 === 11 ? "try again" : "more stuff", area, noise: true };
    case 12:
      return { subject: `docs: explain the ${n} budget`, area: "docs" };
    case 13:
      return {
        subject: `feat(api)!: require ${n} tokens for every request`,
        body: `BREAKING CHANGE: anonymous requests are refused.\n\nAnonymous access is closed since it was abused.`,
        area,
        decision: { needle: `require ${n} tokens`, rationale: "since it was abused" },
      };
    case 14:
      return {
        subject: `Bump the npm group with ${i % 7} updates`,
        author: BOT,
        area: "(root)",
        noise: true,
      };
    case 15:
      return {
        subject: `Replace ${n} with ${other} in the build`,
        body: `Otherwise the build needs a native toolchain.`,
        area: "scripts",
        decision: { needle: `Replace ${n} with ${other}`, rationale: "Otherwise the build needs" },
      };
    case 16:
      return {
        subject: `fix: bump release-please from 13.${i} to 13.${i + 1}`,
        area: "(root)",
        noise: true,
      };
    case 17:
      return {
        subject: `Fix regression in ${n} loading introduced by #${i}`,
        body: `Paths were resolved against the cwd because the base was dropped in a refactor.`,
        area,
        lesson: `regression in ${n} loading`,
      };
    case 18:
      return {
        subject: `Add ${n} support`,
        body: `Parse ${n} files.\n\nDecision: keep ${n} optional\nRationale: most users never need it`,
        area,
        decision: { needle: `keep ${n} optional`, rationale: "most users never need it" },
      };
    default:
      return { subject: `Improve ${n} error messages`, area };
  }
}

/**
 * Writes `count` commits (plus one merge, with a topic-branch commit, every 10th) on `main` in
 * the git repository at `dir` (already `git init`ed), one `git fast-import`, and checks out
 * `main`. `stepSeconds` apart, from 2019-01-07.
 */
export function writeHistoryFixture(
  dir: string,
  count: number,
  stepSeconds = 9 * 86400,
): HistoryFixture {
  const chunks: string[] = [];
  const data = (text: string) => `data ${Buffer.byteLength(text, "utf8")}\n${text}\n`;
  const fixture: HistoryFixture = { commits: 0, decisions: [], noise: [], lessons: [] };
  let mark = 0;
  let head = 0;
  let at = START;
  const files = new Map<string, number>();
  const commit = (
    ref: string,
    message: string,
    author: string,
    from: number,
    merge: number | undefined,
    changes: readonly string[],
  ): number => {
    mark++;
    at += stepSeconds;
    const lines = [
      `commit ${ref}`,
      `mark :${mark}`,
      `author ${author} ${at} +0000`,
      `committer ${author} ${at} +0000`,
      data(message).trimEnd(),
    ];
    if (from > 0) lines.push(`from :${from}`);
    if (merge !== undefined) lines.push(`merge :${merge}`);
    for (const path of changes) {
      const version = (files.get(path) ?? 0) + 1;
      files.set(path, version);
      lines.push(`M 100644 inline ${path}`, data(`${path} v${version}\n`).trimEnd());
    }
    chunks.push(`${lines.join("\n")}\n\n`);
    fixture.commits++;
    return mark;
  };
  const pathFor = (area: string, i: number) =>
    area === "(root)" ? "package.json" : `${area}/file${i % 5}.ts`;

  for (let i = 0; i < count; i++) {
    if (i > 0 && i % 10 === 0) {
      // A topic branch and its merge: the merge is noise, the branch commit a change.
      const topicPath = pathFor(AREAS[(i / 10) % AREAS.length] as string, i + 1);
      const topic = commit(
        `refs/heads/topic-${i}`,
        `Add topic ${i} helpers\n`,
        PERSON,
        head,
        undefined,
        [topicPath],
      );
      const subject =
        i % 20 === 0 ? `Merge pull request #${i} from ada/topic-${i}` : `Merge branch 'topic-${i}'`;
      const body = i % 20 === 0 ? `\n\nTopic ${i} helpers\n` : "\n";
      head = commit("refs/heads/main", `${subject}${body}`, PERSON, head, topic, [topicPath]);
      fixture.noise.push(subject);
    }
    const spec = specFor(i);
    const message = spec.body ? `${spec.subject}\n\n${spec.body}\n` : `${spec.subject}\n`;
    head = commit("refs/heads/main", message, spec.author ?? PERSON, head, undefined, [
      pathFor(spec.area, i),
    ]);
    if (spec.decision) fixture.decisions.push({ ...spec.decision, at });
    if (spec.noise) fixture.noise.push(spec.subject);
    if (spec.lesson) fixture.lessons.push(spec.lesson);
  }
  const run = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: dir,
      env: childEnv({ GIT_CONFIG_GLOBAL: "/dev/null" }),
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
      ...(input !== undefined ? { input } : {}),
    });
  run(["fast-import", "--quiet"], chunks.join(""));
  run(["checkout", "-q", "-f", "main"]);
  return fixture;
}
