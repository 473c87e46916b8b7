import type { RepoContext } from "../context/repo-context.js";
import type { KeyChange, VersionDiff } from "../core/versions/diff.js";
import type { ProposeOptions } from "../director/propose-types.js";
import type { RunOptions } from "../director/run.js";
import { UsageError } from "../errors.js";
import {
  type Command,
  type CommandOutput,
  type OptionSpecs,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";

/*
 * `director history`, `diff` and `rollback`: the versions of durable memory. Like the rest of
 * the table, only argument parsing is imported here; each command imports its work.
 */

/** How `director run --pr` proposes a change: the rollback proposes its version the same way. */
export type ProposalRunner = (
  ctx: RepoContext,
  args: ParsedArgs,
  cycle: RunOptions & Pick<ProposeOptions, "beforeCycle">,
) => Promise<CommandOutput>;

async function openCtx(args: ParsedArgs): Promise<RepoContext> {
  const { openContext } = await import("../context/repo-context.js");
  return openContext(repoOptions(args));
}

const MAIN_OPTION: OptionSpecs = {
  main: {
    type: "string",
    value: "REF",
    description: "the main branch to read merged versions from (default: main, then origin/main)",
  },
};

function mainOf(args: ParsedArgs): { main?: string } {
  const main = stringOption(args, "main");
  return main !== undefined ? { main } : {};
}

function versionArg(text: string, what: string): number {
  const n = Number(text.replace(/^v/, ""));
  if (!/^v?\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `${what}: expected a version number (1, 2, ... or v1, v2, ...), got "${text}"`,
    );
  }
  return n;
}

const history: Command = {
  name: "history",
  summary:
    "Every version of durable memory, newest first: what made it (cycle, session, rollback, restore), its counts, snapshot tag and main commit.",
  usage: "director history [--main REF] [--repo DIR] [--config FILE] [--json]",
  options: MAIN_OPTION,
  async run(args) {
    const [{ readHistory }, { makerText }] = await Promise.all([
      import("../director/history.js"),
      import("../core/versions/record.js"),
    ]);
    const h = await readHistory(await openCtx(args), mainOf(args));
    const lines = h.versions.map((v) => {
      const c = v.counts;
      const git = [v.tag ? `tag ${v.tag}` : "", v.commit ? `main ${v.commit.slice(0, 12)}` : ""];
      return (
        `v${v.version}  ${v.created_at}  ${makerText(v.made_by)}  ` +
        `engrams ${c.engrams}, episodes ${c.episodes}, facts ${c.facts}, state ${c.state}, core ${c.core}` +
        `${git.some(Boolean) ? `  (${git.filter(Boolean).join(", ")})` : ""}`
      );
    });
    const text =
      h.versions.length === 0
        ? "no version logged yet: memory/versions.ndjson begins at the next new version\n"
        : `${lines.join("\n")}\n`;
    return { json: h, text };
  },
};

function keyLines(kind: string, changes: readonly KeyChange[]): string[] {
  return changes.map((c) => {
    const show = (v: unknown) => JSON.stringify(v);
    if (c.change === "added") return `  + ${kind} ${c.key} = ${show(c.new)}`;
    if (c.change === "removed") return `  - ${kind} ${c.key} (was ${show(c.old)})`;
    return `  ~ ${kind} ${c.key}: ${show(c.old)} -> ${show(c.new)}`;
  });
}

function diffLines(d: VersionDiff): string[] {
  return [
    ...d.engrams.added.map((e) => `  + engram ${e.path}`),
    ...d.engrams.removed.map((e) => `  - engram ${e.path}`),
    ...d.facts.added.map((f) => `  + fact ${f}`),
    ...d.facts.removed.map((f) => `  - fact ${f}`),
    ...d.decisions.added.map((f) => `  + decision ${f}`),
    ...d.decisions.removed.map((f) => `  - decision ${f}`),
    ...d.changed.map((c) => `  ~ changed ${c.kind}: ${c.was} -> ${c.now}`),
    ...(d.episodes.from !== d.episodes.to
      ? [`  ~ episodes ${d.episodes.from} -> ${d.episodes.to}`]
      : []),
    ...keyLines("state", d.state),
    ...keyLines("core", d.core),
    ...d.files.added.map((p) => `  + file ${p}`),
    ...d.files.removed.map((p) => `  - file ${p}`),
    ...d.files.changed.map((p) => `  ~ file ${p}`),
  ];
}

const diff: Command = {
  name: "diff",
  summary:
    "What changed between two versions of memory: engrams, facts and decisions added or removed, state and core keys with their old and new values.",
  usage: "director diff A B [--main REF] [--repo DIR] [--config FILE] [--json]",
  options: MAIN_OPTION,
  positionals: [2, 2],
  async run(args) {
    const a = versionArg(args.positionals[0] as string, "A");
    const b = versionArg(args.positionals[1] as string, "B");
    const [{ readHistory }, { filesOfVersion }, { diffVersions }] = await Promise.all([
      import("../director/history.js"),
      import("../director/version-files.js"),
      import("../core/versions/diff.js"),
    ]);
    const ctx = await openCtx(args);
    const h = await readHistory(ctx, mainOf(args));
    const from = await filesOfVersion(ctx.repoDir, h, a);
    const to = await filesOfVersion(ctx.repoDir, h, b);
    const d = diffVersions(from.files, to.files);
    const side = (v: typeof from) => ({
      version: v.record.version,
      catalog_hash: v.record.catalog_hash,
      read_from: v.from,
      commit: v.commit,
    });
    const lines = diffLines(d);
    const text = `v${a} -> v${b}${lines.length === 0 ? ": no change" : ""}\n${lines.map((l) => `${l}\n`).join("")}`;
    return { json: { from: side(from), to: side(to), ...d }, text };
  },
};

/** `director rollback N`, proposing through `runPr` with --pr. */
export function rollbackCommand(runPr: ProposalRunner): Command {
  return {
    name: "rollback",
    summary:
      "Make a new version whose memory equals version N (never rewriting history): in the work tree, or proposed on the engram branch with --pr.",
    usage:
      "director rollback N [--pr [--remote NAME] [--base BRANCH] [--branch NAME]] [--main REF] [--repo DIR] [--config FILE] [--json]",
    options: {
      ...MAIN_OPTION,
      pr: {
        type: "boolean",
        description: "propose the rollback on the engram branch, as director run --pr does",
      },
      remote: {
        type: "string",
        value: "NAME",
        description: "with --pr: the remote (default origin)",
      },
      base: { type: "string", value: "BRANCH", description: "with --pr: the base branch" },
      branch: { type: "string", value: "NAME", description: "with --pr: the Director's branch" },
    },
    positionals: [1, 1],
    async run(args) {
      const target = versionArg(args.positionals[0] as string, "N");
      const [{ readHistory }, { filesOfVersion }, { rollbackOn }] = await Promise.all([
        import("../director/history.js"),
        import("../director/version-files.js"),
        import("../director/rollback.js"),
      ]);
      const ctx = await openCtx(args);
      // Read before the Director lock: finding the target's memory may take a while.
      const content = await filesOfVersion(
        ctx.repoDir,
        await readHistory(ctx, mainOf(args)),
        target,
      );
      if (args.values.pr === true) {
        return runPr(ctx, args, {
          beforeCycle: async (staging, buffer) => {
            await rollbackOn(staging, buffer, content, ctx.repoDir);
          },
        });
      }
      for (const name of ["remote", "base", "branch"]) {
        if (stringOption(args, name) !== undefined) throw new UsageError(`--${name} needs --pr`);
      }
      const { withDirectorState } = await import("../director/director-state.js");
      const r = await withDirectorState(ctx, (buffer) =>
        rollbackOn(ctx, buffer, content, ctx.repoDir),
      );
      const text =
        `rolled back to v${r.target} as v${r.version.version} ${r.version.catalog_hash}` +
        ` (read from the ${r.read_from}): ${r.engrams_restored} engram(s) restored, ${r.engrams_removed} removed` +
        `${r.snapshot ? `; tagged ${r.snapshot.tag.replace(/^refs\/tags\//, "")}` : ""}\n`;
      return { json: r, text };
    },
  };
}

export const VERSION_COMMANDS: readonly Command[] = [history, diff];
