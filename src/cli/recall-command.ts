import { DEFAULT_RECALL_TOKENS } from "../core/recall/fit.js";
import type { RecallHit } from "../core/recall/recall.js";
import { UsageError } from "../errors.js";
import { type Command, numberOption, type ParsedArgs, repoOptions, stringOption } from "./args.js";
import { REMOTE_RECALL_OPTIONS, remoteRecallOptions } from "./recall-options.js";

const SCOPES = ["st", "lt", "history"] as const;
type Scope = (typeof SCOPES)[number];

/** `worker recall`: notes ranked for a question, memory and the repository's history. */
export const recall: Command = {
  name: "recall",
  summary:
    "Search memory and the repository's commit history for the notes that answer a question: each hit is one fact, decision, lesson, episode or commit, whole when it fits the token budget; with --confidence, also the external stores memory syncs to (Notion, Graphiti), by how sure you are. The recall is recorded as a promotion signal.",
  usage:
    "worker recall QUERY [--limit N] [--max-tokens N] [--scope st,lt,history] [--include-superseded] [--confidence 0..1] [--refresh] [--no-signal] [--worker ID] [--session ID] [--repo DIR] [--config FILE] [--json]",
  options: {
    limit: { type: "string", value: "N", description: "most hits (default 10)" },
    "max-tokens": {
      type: "string",
      value: "N",
      description: `most tokens of note text in all hits together, filled in rank order (default ${DEFAULT_RECALL_TOKENS} with --json, none otherwise)`,
    },
    scope: {
      type: "string",
      value: "st,lt,history",
      description:
        "only these scopes: st (short-term memory), lt (long-term), history (the commit history); default all",
    },
    "no-signal": { type: "boolean", description: "do not record the recall for promotion" },
    "include-superseded": {
      type: "boolean",
      description:
        "also the short-term copies of notes a long-term engram carried forward (left out by default)",
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
    const scopes = scopesOption(args);
    const limit = positiveInteger(args, "limit");
    const maxTokens =
      positiveInteger(args, "max-tokens") ??
      (args.values.json === true ? DEFAULT_RECALL_TOKENS : undefined);
    const remote = remoteRecallOptions(args);
    const [{ openContext }, { recallMemory }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../worker/recall.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const query = args.positionals[0] as string;
    const recallOptions = {
      limit,
      scopes,
      maxTokens,
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
    const text = hits.length === 0 ? "no match\n" : `${hits.map(hitText).join("\n")}\n`;
    if (remote === undefined) return { json: hits, text };
    // Only a stated confidence loads the sync code (and, if a store is asked, its client).
    const { hybridRecallOutput } = await import("./recall-output.js");
    return hybridRecallOutput(ctx, query, hits, { ...remote, limit: limit ?? 10 }, text);
  },
};

/** A hit for a person: score, kind, where and when, then the note and its reason. */
export function hitText(hit: RecallHit): string {
  const where =
    hit.commit !== undefined
      ? `commit ${hit.commit.slice(0, 12)}`
      : (hit.path ?? hit.engram_id ?? hit.id);
  const when = hit.at.slice(0, 10);
  const who = hit.senders.length > 0 ? `, ${hit.senders.slice(0, 3).join(", ")}` : "";
  const superseded = hit.superseded_by ? `  (superseded by ${hit.superseded_by.join(", ")})` : "";
  const lines = [
    `${hit.score.toFixed(3)}  ${hit.kind} [${hit.scope}] ${where} (${when}${who})${superseded}`,
    `        ${oneLine(hit.text)}`,
  ];
  if (hit.rationale !== undefined) lines.push(`        why: ${oneLine(hit.rationale)}`);
  return lines.join("\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

function positiveInteger(args: ParsedArgs, name: string): number | undefined {
  const n = numberOption(args, name);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) {
    throw new UsageError(`--${name}: expected a positive integer, got ${n}`);
  }
  return n;
}

function scopesOption(args: ParsedArgs): Scope[] | undefined {
  const value = stringOption(args, "scope");
  if (value === undefined) return undefined;
  const scopes = [...new Set(value.split(",").map((s) => s.trim()))];
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new UsageError(`--scope: expected st, lt or history (comma-separated), got "${s}"`);
    }
  }
  return scopes as Scope[];
}
