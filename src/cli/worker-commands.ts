import { readFileSync } from "node:fs";
import { fileSystemError, UsageError } from "../errors.js";
import type { DriftReport } from "../repo/drift.js";
import { NOTE_KINDS, OUTCOMES } from "../schema/note-kinds.js";
import type { EmitResult } from "../worker/emit.js";
import type { UndrainedSpool } from "../worker/stranded.js";
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
import { recall } from "./recall-command.js";
import { busOption, checkBusOption, SENDER_OPTIONS, senderOf } from "./sender-options.js";
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
    supersedes: {
      type: "string",
      multiple: true,
      value: "ID",
      description:
        "a memory item this note replaces: its note id from worker recall --json (e_…#d0, or the 8-digit id MEMORY.md shows)",
    },
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
    checkBusOption(args);
    const [{ openContext }, { emitNote }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/emit.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const bus = await busOption(args, ctx);
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
        supersedes: listOption(args, "supersedes"),
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
  "supersedes",
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
  checkBusOption(args);
  const [{ openContext }, { emitNotes }] = await Promise.all([
    import("../context/repo-context.js"),
    import("../worker/emit.js"),
  ]);
  const ctx = await openContext(repoOptions(args));
  const bus = await busOption(args, ctx);
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
      ...(r.undrained_spool ? [await undrainedLine(r.undrained_spool)] : []),
    ];
    return {
      json: r,
      text: `${r.ok ? "ok: " : ""}${lines.join("\n")}\n`,
      exitCode: r.ok ? EXIT.ok : EXIT.findings,
    };
  },
};

/** What waits in a spool no Director drains, and what to do about it. */
async function undrainedLine(u: UndrainedSpool): Promise<string> {
  const { strandedRemedy } = await import("../worker/stranded.js");
  return `stranded: ${u.files} spool file(s) in ${u.path} (oldest ${u.oldest ?? "unknown"}) wait where no Director drains them; ${strandedRemedy()}`;
}

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
    checkBusOption(args);
    const [{ openContext }, { emitHeartbeat }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/emit.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const bus = await busOption(args, ctx);
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

const resend: Command = {
  name: "resend",
  summary:
    "Send this checkout's spooled notes over the bus (--bus, else $ENGRAM_BUS, else [worker] bus): what a clone spooled where no Director drains it, or what waited while the bus was down. Each arrives once; the spool keeps only what the bus did not take.",
  usage: "worker resend [--bus URL] [--repo DIR] [--config FILE] [--json]",
  options: {
    bus: {
      type: "string",
      value: "URL",
      description:
        "where to send: git:REMOTE | tcp://HOST:PORT | tls://HOST:PORT | nats://HOST:PORT",
    },
  },
  async run(args) {
    checkBusOption(args);
    const [{ openContext }, { resendSpool }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/resend.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const r = await resendSpool(ctx, await busOption(args, ctx));
    const lines =
      r.files === 0 && r.unreadable.length === 0
        ? [`nothing to resend: the spool is empty (${r.spool})`]
        : [
            `resent ${r.acknowledged} of ${r.envelopes} envelope(s) from ${r.files} spool file(s) over ${r.bus}; ${r.left} left in the spool`,
            ...(r.fallback_reason ? [`  ${r.bus} unavailable: ${r.fallback_reason}`] : []),
            ...r.unreadable.map((u) => `  kept, not an envelope file: ${u}`),
          ];
    return {
      json: r,
      text: `${lines.join("\n")}\n`,
      exitCode: r.left > 0 || r.unreadable.length > 0 ? EXIT.findings : EXIT.ok,
    };
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
  resend,
  sync,
  ...GRAPH_COMMANDS,
  session,
  mcp,
  setup,
  hook,
];
