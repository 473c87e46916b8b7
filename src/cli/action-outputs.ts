#!/usr/bin/env node
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { Proposal } from "../core/rendering/pr-body.js";
import {
  renderStepSummary,
  type StepSummaryInput,
  stepSummaryFromProposal,
} from "../core/rendering/step-summary.js";
import { fileSystemError, StateError, UsageError } from "../errors.js";
import { reportError } from "./report.js";

/**
 * The GitHub Action's glue: reads the `--json` result of `director run --pr`, `director guard`
 * or `worker check`, and appends the step outputs to `$GITHUB_OUTPUT` (and, with `--summary`,
 * a budget table to `$GITHUB_STEP_SUMMARY`). Kept out of shell and jq so it is tested.
 */

const USAGE =
  "action-outputs --result FILE|- [--status FILE] [--summary]\n\n" +
  "  --result FILE   the --json output of the director or worker command (- for stdin)\n" +
  "  --status FILE   `director status --json`, for the budgets of the summary table\n" +
  "  --summary       append the proposal's headline, flagged and held items and a budget table to $GITHUB_STEP_SUMMARY\n";

const Count = z.number().int().nonnegative();
const Usage = z.object({ files: Count, bytes: Count });
const Tier = z.object({ files: Count, bytes: Count, max_files: Count, max_bytes: Count });

const Budgets = z.object({
  st_max_files: Count,
  st_max_total_bytes: Count,
  lt_max_files: Count,
  lt_max_total_bytes: Count,
});

/** The part of a `Proposal` the step summary reads. */
const ProposalFields = z.looseObject({
  head: z.looseObject({ catalog_version: Count, catalog_hash: z.string() }),
  compacted_events: Count,
  written: z.array(z.unknown()),
  promoted: z.array(z.unknown()),
  evicted: z.array(z.unknown()),
  tiers_before: z.object({ st: Usage, lt: Usage }),
  tiers_after: z.object({ st: Usage, lt: Usage }),
  budgets: Budgets,
  focus: z.object({ bytes_before: Count, bytes_after: Count, max_bytes: Count }).nullable(),
  // The knowledge-first lines: counted, flagged and held items (ids, kinds, reasons, texts).
  knowledge: z.array(z.looseObject({ kind: z.string(), text: z.string() })).optional(),
  flags: z
    .array(
      z.looseObject({
        reason: z.string(),
        engram_id: z.string(),
        item_id: z.string().optional(),
        item_kind: z.string(),
      }),
    )
    .optional(),
  withheld: z
    .array(
      z.looseObject({ id: z.string(), reason: z.string(), kind: z.string(), text: z.string() }),
    )
    .optional(),
});

const PullRequest = z.looseObject({ number: z.number().int().positive(), url: z.string() });

/** The fields of a command result the outputs come from; everything else is ignored. */
const RESULT_FIELDS = {
  ok: z.boolean(),
  catalog_version: Count,
  catalog_hash: z.string(),
  catalog: z.looseObject({ version: Count, hash: z.string() }),
  pr: PullRequest.nullable(),
  compacted_events: Count,
  engrams_written: Count,
  engrams_promoted: Count,
  engrams_evicted: Count,
  tiers: z.object({ st: Usage, lt: Usage }),
  /** `director run --pr`: the branch outcome, with its pull request and what it proposes. */
  proposal: z.looseObject({
    pr: PullRequest.nullable().optional(),
    review: ProposalFields.nullable().optional(),
  }),
};

type ResultFields = {
  [K in keyof typeof RESULT_FIELDS]?: z.infer<(typeof RESULT_FIELDS)[K]>;
};

const StatusFields = z.looseObject({ tiers: z.looseObject({ st: Tier, lt: Tier }) });

/** Each field on its own: one of an unexpected type does not hide the others. */
function fieldsOf(result: unknown): ResultFields {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return {};
  const record = result as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(RESULT_FIELDS)) {
    const parsed = schema.safeParse(record[key]);
    if (parsed.success && record[key] !== undefined) out[key] = parsed.data;
  }
  const fields = out as ResultFields;
  // `director run --pr` nests its pull request in `proposal`.
  if (fields.pr === undefined && fields.proposal?.pr !== undefined) fields.pr = fields.proposal.pr;
  return fields;
}

/**
 * The action's outputs from a command's JSON result: `pr-number`, `pr-url`,
 * `catalog-version`, `catalog-hash` and `ok`; an empty string for what the result lacks.
 */
export function actionOutputs(result: unknown): Record<string, string> {
  const r = fieldsOf(result);
  const version = r.catalog_version ?? r.catalog?.version;
  const hash = r.catalog_hash ?? r.catalog?.hash;
  return {
    "pr-number": r.pr ? String(r.pr.number) : "",
    "pr-url": r.pr ? r.pr.url : "",
    "catalog-version": version === undefined ? "" : String(version),
    "catalog-hash": hash ?? "",
    ok: r.ok === undefined ? "" : String(r.ok),
  };
}

/**
 * `$GITHUB_OUTPUT` lines: `name=value`, or `name<<DELIM` … `DELIM` for a value with a line
 * break. The delimiter must not occur in any value (callers pass a random one).
 */
export function formatOutputs(outputs: Record<string, string>, delimiter: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(delimiter)) throw new Error(`bad delimiter ${delimiter}`);
  let out = "";
  for (const [name, value] of Object.entries(outputs)) {
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) throw new Error(`bad output name ${name}`);
    if (!/[\r\n]/.test(value)) {
      out += `${name}=${value}\n`;
      continue;
    }
    if (value.split(/\r?\n/).includes(delimiter)) {
      throw new Error(`output ${name} contains its delimiter`);
    }
    out += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  return out;
}

/**
 * What the step summary shows: the proposal when the result carries one, else the result's
 * tiers against the budgets of `director status --json`. Undefined when there are no budgets.
 */
export function summaryInput(result: unknown, status?: unknown): StepSummaryInput | undefined {
  const r = fieldsOf(result);
  const pr = r.pr === undefined ? undefined : r.pr && { number: r.pr.number, url: r.pr.url };
  // Only the validated fields are read (see ProposalFields); the rows are counted, not shown.
  const review = r.proposal?.review;
  if (review) return stepSummaryFromProposal(review as unknown as Proposal, pr);
  const s = StatusFields.safeParse(status);
  if (!s.success) return undefined;
  const { st, lt } = s.data.tiers;
  const outputs = actionOutputs(result);
  return {
    catalog_version: Number(outputs["catalog-version"] || 0),
    catalog_hash: outputs["catalog-hash"] ?? "",
    tiers: r.tiers ?? {
      st: { files: st.files, bytes: st.bytes },
      lt: { files: lt.files, bytes: lt.bytes },
    },
    budgets: {
      st_max_files: st.max_files,
      st_max_total_bytes: st.max_bytes,
      lt_max_files: lt.max_files,
      lt_max_total_bytes: lt.max_bytes,
    },
    ...(r.compacted_events === undefined
      ? {}
      : {
          compacted_events: r.compacted_events,
          engrams_written: r.engrams_written ?? 0,
          engrams_promoted: r.engrams_promoted ?? 0,
          engrams_evicted: r.engrams_evicted ?? 0,
        }),
    ...(pr === undefined ? {} : { pr }),
  };
}

function readJson(file: string, flag: string): unknown {
  let text: string;
  try {
    text = readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (error) {
    throw (
      fileSystemError(error, `--${flag} ${file}`, "read") ??
      new StateError(`--${flag} ${file}: cannot read it (${(error as Error).message})`, {
        cause: error,
      })
    );
  }
  // Commands print one JSON document; take the last non-empty line in case anything preceded it.
  const line = text.trim().split("\n").filter(Boolean).pop() ?? "";
  try {
    return JSON.parse(line);
  } catch (error) {
    throw new StateError(
      `--${flag} ${file}: not the JSON of a --json command (${text.length === 0 ? "empty" : (error as Error).message})`,
      { cause: error },
    );
  }
}

export interface ActionOutputsRun {
  outputs: Record<string, string>;
  summary: string | undefined;
}

/** Reads the files and appends to `$GITHUB_OUTPUT` and `$GITHUB_STEP_SUMMARY` (or stdout). */
export function runActionOutputs(argv: string[], env: NodeJS.ProcessEnv): ActionOutputsRun {
  let values: { result?: string; status?: string; summary?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        result: { type: "string" },
        status: { type: "string" },
        summary: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message, { usage: `usage: ${USAGE}` });
  }
  if (values.help) {
    process.stdout.write(`usage: ${USAGE}`);
    return { outputs: {}, summary: undefined };
  }
  if (values.result === undefined || values.result === "") {
    throw new UsageError("--result is required", { usage: `usage: ${USAGE}` });
  }
  const result = readJson(values.result, "result");
  const outputs = actionOutputs(result);
  const lines = formatOutputs(outputs, `ghadelimiter_${randomUUID().replace(/-/g, "")}`);
  if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, lines);
  else process.stdout.write(lines);

  let summary: string | undefined;
  if (values.summary) {
    const status = values.status === undefined ? undefined : readJson(values.status, "status");
    const input = summaryInput(result, status);
    summary =
      input === undefined
        ? "### engram Director\n\nNo budget table: the run reported no tiers and budgets.\n"
        : renderStepSummary(input);
    if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${summary}\n`);
    else process.stdout.write(`${summary}\n`);
  }
  return { outputs, summary };
}

function isEntryPoint(): boolean {
  const argv1 = process.argv[1];
  if (argv1 === undefined) return false;
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  try {
    runActionOutputs(process.argv.slice(2), process.env);
  } catch (error) {
    process.exitCode = reportError("action-outputs", error, false);
  }
}
