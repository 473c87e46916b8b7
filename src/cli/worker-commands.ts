import { readFileSync } from "node:fs";
import { fileSystemError, UsageError } from "../errors.js";
import type { DriftReport } from "../repo/drift.js";
import { NOTE_KINDS, OUTCOMES } from "../schema/note-kinds.js";
import type { EmitResult } from "../worker/emit.js";
import {
  type Command,
  listOption,
  numberOption,
  type ParsedArgs,
  repoOptions,
  stringOption,
} from "./args.js";
import { GRAPH_COMMANDS } from "./graph-commands.js";
import { hook, setup } from "./host-commands.js";
import { EXIT } from "./main.js";
import { mcp } from "./mcp-command.js";
import { REMOTE_RECALL_OPTIONS, remoteRecallOptions } from "./recall-options.js";
import { busOption, SENDER_OPTIONS, senderOf } from "./sender-options.js";
import { session } from "./session-commands.js";

/*
 * Start-up is most of what an agent waits for: this table imports only argument parsing and
 * light constants. Each command's `run` imports what it uses with `await import()`, so
 * `worker emit` never loads git, NATS or GitHub code (test/cli/lazy-imports.test.ts checks
 * it). A new command follows the same pattern: type-only imports at the top, the work
 * imported in `run`.
 */

function deliveredText(result: EmitResult): string {
  if (!result.spooled) return `sent ${result.event_id} (${result.transport})\n`;
  return `spooled ${result.event_id}${result.fallback_reason ? ` (${result.transport} unavailable: ${result.fallback_reason})` : ""}\n`;
}

const emit: Command = {
  name: "emit",
  summary:
    "Record something worth remembering (a memory_note.v1 envelope, or a file of notes sent together with --from): on the local spool, or over the bus with --bus.",
  usage:
    "worker emit --kind KIND --text TEXT [--topic T]... [--link L]... [options] | worker emit --from FILE|- [options]",
  options: {
    from: {
      type: "string",
      value: "FILE",
      description:
        "notes as NDJSON (- for stdin), one object per line with the fields the flags take (kind, text, topics, links...), sent together",
    },
    kind: { type: "string", value: "KIND", description: NOTE_KINDS.join(" | ") },
    text: { type: "string", value: "TEXT", description: "what to remember (short, actionable)" },
    rationale: { type: "string", value: "TEXT", description: "why (for decisions)" },
    topic: { type: "string", multiple: true, value: "T", description: "a topic keyword" },
    link: {
      type: "string",
      multiple: true,
      value: "L",
      description: "#12, PR#7, a path, a URL or a commit sha",
    },
    issue: { type: "string", value: "N", description: "the issue this is about" },
    confidence: { type: "string", value: "0..1", description: "how sure the worker is" },
    outcome: { type: "string", value: "O", description: OUTCOMES.join(" | ") },
    privacy: {
      type: "string",
      value: "P",
      description: "public | private (default) | sensitive (encrypted)",
    },
    ...SENDER_OPTIONS,
  },
  async run(args) {
    const from = stringOption(args, "from");
    if (from !== undefined) return emitFrom(args, from);
    const kind = stringOption(args, "kind");
    const text = stringOption(args, "text");
    if (kind === undefined) throw new UsageError(`--kind is required (${NOTE_KINDS.join(" | ")})`);
    if (text === undefined) throw new UsageError("--text is required");
    const bus = busOption(args);
    const [{ openContext }, { emitNote }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/emit.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const result = await emitNote(
      ctx,
      {
        kind,
        text,
        rationale: stringOption(args, "rationale"),
        topics: listOption(args, "topic"),
        links: listOption(args, "link"),
        confidence: numberOption(args, "confidence"),
        outcome: stringOption(args, "outcome"),
        privacy: stringOption(args, "privacy"),
        issue: stringOption(args, "issue"),
      },
      senderOf(args),
      bus,
    );
    return { json: result, text: deliveredText(result) };
  },
};

/** The flags that describe one note: with --from, the notes come from the file instead. */
const NOTE_FLAGS = [
  "kind",
  "text",
  "rationale",
  "topic",
  "link",
  "issue",
  "confidence",
  "outcome",
  "privacy",
];

async function emitFrom(args: ParsedArgs, from: string) {
  const clash = NOTE_FLAGS.filter((name) => args.values[name] !== undefined);
  if (clash.length > 0) {
    throw new UsageError(
      `--from takes the notes from ${from}: drop ${clash.map((n) => `--${n}`).join(", ")}`,
    );
  }
  const file = from === "-" ? "stdin" : from;
  let text: string;
  try {
    text = readFileSync(from === "-" ? 0 : from, "utf8");
  } catch (error) {
    throw fileSystemError(error, `--from ${file}`, "read") ?? error;
  }
  const { parseNoteLines } = await import("../worker/note-lines.js");
  const notes = parseNoteLines(text, file);
  const bus = busOption(args);
  const [{ openContext }, { emitNotes }] = await Promise.all([
    import("../context/repo-context.js"),
    import("../worker/emit.js"),
  ]);
  const ctx = await openContext(repoOptions(args));
  const result = await emitNotes(
    ctx,
    notes.map((n) => n.note),
    senderOf(args),
    bus,
    (i) => `${file}:${notes[i]?.line}`,
  );
  const count = result.event_ids.length;
  const summary = result.spooled
    ? `spooled ${count} note(s)${result.fallback_reason ? ` (${result.transport} unavailable: ${result.fallback_reason})` : ""}\n`
    : `sent ${count} note(s) (${result.transport})\n`;
  return { json: result, text: summary };
}

const recall: Command = {
  name: "recall",
  summary:
    "Search memory by text, topic, recency and tier; with --confidence, also the external stores memory syncs to (Notion, Graphiti), by how sure you are. The recall is recorded as a promotion signal.",
  usage:
    "worker recall QUERY [--limit N] [--scope st|lt] [--include-superseded] [--confidence 0..1] [--refresh] [--no-signal] [--worker ID] [--session ID] [--repo DIR] [--config FILE] [--json]",
  options: {
    limit: { type: "string", value: "N", description: "most hits (default 10)" },
    scope: { type: "string", value: "st|lt", description: "only this tier" },
    "no-signal": { type: "boolean", description: "do not record the recall for promotion" },
    "include-superseded": {
      type: "boolean",
      description: "also return ST engrams an LT engram superseded (left out by default)",
    },
    worker: { type: "string", value: "ID", description: "worker id for the recall signal" },
    ...REMOTE_RECALL_OPTIONS,
    session: {
      type: "string",
      value: "ID",
      description:
        "read the memory the session started on (its parent version), even after main moved on",
    },
  },
  positionals: [1, 1],
  async run(args) {
    const scope = stringOption(args, "scope");
    if (scope !== undefined && scope !== "st" && scope !== "lt")
      throw new UsageError("--scope: expected st or lt");
    const limit = numberOption(args, "limit");
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new UsageError("--limit: expected a positive integer");
    }
    const remote = remoteRecallOptions(args);
    const [{ openContext }, { recallMemory }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/recall.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const query = args.positionals[0] as string;
    const recallOptions = {
      limit,
      scope,
      signal: args.values["no-signal"] !== true,
      worker: stringOption(args, "worker"),
      includeSuperseded: args.values["include-superseded"] === true,
    } as const;
    const sessionId = stringOption(args, "session");
    // Only a session's recall reads git objects: loaded when asked for.
    const result =
      sessionId === undefined
        ? await recallMemory(ctx, query, recallOptions)
        : await (await import("../sessions/recall.js")).recallInSession(
            ctx,
            sessionId,
            query,
            recallOptions,
          );
    const hits = result.hits.map((h) => ({ ...h, source: "local" as const }));
    const text =
      hits.length === 0
        ? "no match\n"
        : `${hits.map((h) => `${h.score.toFixed(3)}  ${h.path}${h.superseded_by ? `  (superseded by ${h.superseded_by.join(", ")})` : ""}\n        ${h.snippet}${h.rationale ? `\n        why: ${h.rationale}` : ""}`).join("\n")}\n`;
    if (remote === undefined) return { json: hits, text };
    // Only a stated confidence loads the sync code (and, if a store is asked, its client).
    const { hybridRecallOutput } = await import("./recall-output.js");
    return hybridRecallOutput(ctx, query, hits, { ...remote, limit: limit ?? 10 }, text);
  },
};

const check: Command = {
  name: "check",
  summary:
    "Check that the local memory files match their catalog, and whether this branch must sync with main ([policy.sync_main]), after fetching origin when it is reachable.",
  usage: "worker check [--main REF] [--offline] [--repo DIR] [--config FILE] [--json]",
  options: {
    main: {
      type: "string",
      value: "REF",
      description:
        "main to compare with (default: the newest of origin/main, main, origin/master, master)",
    },
    offline: { type: "boolean", description: "do not fetch origin first" },
  },
  async run(args) {
    const [{ openContext }, { checkMemory }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/check.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const r = await checkMemory(ctx, {
      main: stringOption(args, "main"),
      offline: args.values.offline === true,
    });
    const files =
      r.missing.length + r.modified.length + r.unlisted.length + r.unsafe.length === 0 &&
      !r.catalog_modified &&
      r.focus_problem === null;
    const lines = [
      files
        ? `memory matches catalog version ${r.catalog_version} (${r.catalog_hash})`
        : `memory does not match catalog version ${r.catalog_version} (${r.catalog_hash}):`,
      ...(r.catalog_modified ? ["  catalog: memory/catalog.json was modified"] : []),
      ...r.missing.map((p) => `  missing:  ${p}`),
      ...r.modified.map((p) => `  modified: ${p}`),
      ...r.unlisted.map((p) => `  unlisted: ${p}`),
      ...r.unsafe.map((p) => `  refused:  ${p}`),
      ...(r.focus_problem !== null ? [`  focus:    ${r.focus_problem}`] : []),
      driftLine(r.drift),
    ];
    return {
      json: r,
      text: `${r.ok ? "ok: " : ""}${lines.join("\n")}\n`,
      exitCode: r.ok ? EXIT.ok : EXIT.findings,
    };
  },
};

/** The drift line of `worker check`: what the README's agent loop acts on. */
function driftLine(d: DriftReport | null): string {
  if (d === null) return "no main to compare with";
  if (d.reason === "uncommitted_memory") {
    return `memory not committed (uncommitted_memory): ${d.detail}; then run worker check again`;
  }
  if (d.sync_required) {
    return `sync required (${d.reason}): ${d.detail}; ${d.required_action} from ${d.main_ref} (${d.main_sha_expected.slice(0, 12)}): run worker sync`;
  }
  const ahead = d.detail === "in sync with main" ? "" : `; ${d.detail}`;
  return `in sync with ${d.main_ref} (${d.commits_behind} commit(s) behind)${ahead}`;
}

const heartbeat: Command = {
  name: "heartbeat",
  summary:
    "Report liveness and progress (a heartbeat.v1 envelope on the local spool), with this branch's main ancestor and the catalog hash it sees.",
  usage:
    "worker heartbeat [--stage S] [--issue N] [--attempt N] [--progress 0..1] [--main REF] [--worker ID] [--run-id ID] [--bus URL] [--repo DIR] [--config FILE] [--json]",
  options: {
    stage: {
      type: "string",
      value: "S",
      description: "what the worker is doing (plan, code, test...)",
    },
    issue: { type: "string", value: "N", description: "the issue it works on" },
    attempt: { type: "string", value: "N", description: "attempt number" },
    progress: { type: "string", value: "0..1", description: "how far along" },
    main: { type: "string", value: "REF", description: "main to measure the ancestor against" },
    ...SENDER_OPTIONS,
  },
  async run(args) {
    const bus = busOption(args);
    const [{ openContext }, { emitHeartbeat }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/emit.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const attempt = numberOption(args, "attempt");
    const result = await emitHeartbeat(
      ctx,
      {
        stage: stringOption(args, "stage"),
        issue: stringOption(args, "issue"),
        attempt,
        progress: numberOption(args, "progress"),
        main: stringOption(args, "main"),
      },
      senderOf(args),
      bus,
    );
    return { json: result, text: deliveredText(result) };
  },
};

const sync: Command = {
  name: "sync",
  summary:
    "Bring main into this branch when [policy.sync_main] requires it (merge or rebase), after fetching origin when it is reachable, and report what memory changed.",
  usage: "worker sync [--main REF] [--action merge|rebase] [--force] [--json]",
  options: {
    main: {
      type: "string",
      value: "REF",
      description: "main to sync with (default as worker check)",
    },
    action: {
      type: "string",
      value: "A",
      description: "merge | rebase (default: [policy.sync_main] required_action)",
    },
    force: { type: "boolean", description: "sync even when the policy does not require it" },
  },
  async run(args) {
    const [{ openContext }, { parseSyncAction, syncWithMain }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/sync.js"),
    ]);
    const action = parseSyncAction(stringOption(args, "action"));
    const ctx = await openContext(repoOptions(args));
    const r = await syncWithMain(ctx, {
      main: stringOption(args, "main"),
      action,
      force: args.values.force === true,
    });
    const lines = r.synced
      ? [
          `synced with ${r.main_ref} (${r.main_sha?.slice(0, 12)}) by ${r.action === "rebase_main" ? "rebase" : "merge"}: ${r.reason}`,
          `memory: catalog version ${r.before.catalog_version} -> ${r.after.catalog_version}, ${r.engrams_added.length} engram(s) added, ${r.engrams_removed.length} removed${r.focus_changed ? ", MEMORY.md changed" : ""}`,
          ...r.engrams_added.map((p) => `  + ${p}`),
          ...r.engrams_removed.map((p) => `  - ${p}`),
        ]
      : [`nothing to do: ${r.reason}`];
    return { json: r, text: `${lines.join("\n")}\n` };
  },
};

export const WORKER_COMMANDS: readonly Command[] = [
  emit,
  recall,
  check,
  heartbeat,
  sync,
  ...GRAPH_COMMANDS,
  session,
  mcp,
  setup,
  hook,
];
