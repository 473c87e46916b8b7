import type { MemoryConfig } from "../../schema/config.js";
import type { Catalog, Engram } from "../../schema/engram.js";
import { contradictionFlags } from "../checks/contradictions.js";
import {
  holdsSecret,
  lowConfidenceFlags,
  maskSecrets,
  reviewFlags,
} from "../checks/review-flags.js";
import { tierUsage } from "../compaction/budget.js";
import { countFocusItems } from "../rendering/focus-header.js";
import type { Proposal, ProposalRow } from "../rendering/pr-body.js";
import { focusLineDiff } from "./focus-diff.js";
import { type KnowledgeItem, knowledgeItems } from "./knowledge.js";
import type { WithheldItem } from "./withhold.js";

export interface ProposalInput {
  /** `focusText`: the base's MEMORY.md (null: none), for the lines the proposal changes. */
  base: {
    branch: string;
    sha: string;
    catalog: Catalog;
    focusBytes: number | null;
    focusText?: string | null;
  };
  /** `focusText`: the head's MEMORY.md; without it the body says nothing of its lines. */
  head: { branch: string; catalog: Catalog; focusBytes: number | null; focusText?: string | null };
  /** The engrams the head adds to the base, by id (read from the proposal's files). */
  added: ReadonlyMap<string, Engram>;
  /**
   * The engrams of the base the head keeps: current memory, what a new decision may
   * contradict (src/core/checks/contradictions.ts). None: nothing is checked.
   */
  kept?: readonly Engram[];
  memory: Pick<
    MemoryConfig,
    | "st_max_files"
    | "st_max_total_bytes"
    | "lt_max_files"
    | "lt_max_total_bytes"
    | "memory_md_max_bytes"
  > &
    Partial<Pick<MemoryConfig, "promote_min_confidence" | "memory_md_max_items">>;
  rejectedSkipped: number;
  /** Items the branch leaves out: held until released, or rejected one by one. */
  withheld?: readonly WithheldItem[];
  /**
   * The sessions' knowledge records the head adds (`proposedRecords`), as items whose
   * `engram_id` is their knowledge file: listed and flagged like the engrams' items.
   */
  records?: readonly KnowledgeItem[];
  /**
   * When each commit a history import's items were read from was made (sha -> ISO-8601 UTC,
   * read from git by the caller): such an item's "when" is its newest commit's time, since its
   * engram's window is the import's.
   */
  commitTimes?: ReadonlyMap<string, string>;
}

/**
 * What the pull request proposes, main against the engram branch: new engrams (and which of
 * them are long-term, with the reasons promotion recorded), evictions, the events and the
 * time window they came from, the budgets before and after, and the knowledge the new
 * engrams add with the items a reviewer should look at first.
 */
export function buildProposal(input: ProposalInput): Proposal {
  const { base, head } = input;
  const baseIds = new Set(base.catalog.entries.map((e) => e.engram_id));
  const headIds = new Set(head.catalog.entries.map((e) => e.engram_id));
  const added = head.catalog.entries.filter((e) => !baseIds.has(e.engram_id));
  const rows: (ProposalRow & { reasons: string[] })[] = added.map((entry) => {
    const engram = input.added.get(entry.engram_id);
    return {
      engram_id: entry.engram_id,
      scope: entry.scope,
      path: entry.path,
      topics: entry.topics,
      first_fact: engram?.facts[0] ?? engram?.decisions[0]?.title ?? "(sealed or empty)",
      ...(engram ? { event_count: engram.provenance.event_count } : {}),
      reasons: engram?.promotion?.reasons ?? [],
    };
  });
  const windows = added
    .map((e) => input.added.get(e.engram_id)?.source_window)
    .filter((w) => w !== undefined);
  const engrams = added.map((e) => input.added.get(e.engram_id)).filter((e) => e !== undefined);
  const fromEngrams = withCommitTimes(knowledgeItems(engrams), input.commitTimes);
  // A record stating what an engram states is one item: listed once, under the engram.
  const listed = new Set(fromEngrams.map((k) => k.id));
  const knowledge = [...fromEngrams, ...(input.records ?? []).filter((r) => !listed.has(r.id))];
  const strip = ({ reasons: _reasons, ...row }: ProposalRow & { reasons: string[] }) => row;
  const stOnly = rows.filter((r) => r.scope === "st");
  return {
    base: {
      branch: base.branch,
      sha: base.sha,
      catalog_version: base.catalog.catalog_version,
      catalog_hash: base.catalog.hash,
    },
    head: {
      branch: head.branch,
      catalog_version: head.catalog.catalog_version,
      catalog_hash: head.catalog.hash,
    },
    // LT engrams carry forward ST content already counted: only ST events are new events.
    compacted_events: stOnly.reduce((sum, r) => sum + (r.event_count ?? 0), 0),
    source_window:
      windows.length === 0
        ? null
        : {
            start_ts: windows.map((w) => w.start_ts).sort()[0] as string,
            end_ts: windows
              .map((w) => w.end_ts)
              .sort()
              .at(-1) as string,
          },
    written: rows.map(strip),
    promoted: rows
      .filter((r) => r.scope === "lt")
      .map((r) => ({ ...strip(r), reason: r.reasons.join("; ") || "promoted" })),
    evicted: base.catalog.entries
      .filter((e) => !headIds.has(e.engram_id))
      .map((e) => ({ engram_id: e.engram_id, scope: e.scope, path: e.path })),
    tiers_before: tierUsage(base.catalog.entries),
    tiers_after: tierUsage(head.catalog.entries),
    budgets: {
      st_max_files: input.memory.st_max_files,
      st_max_total_bytes: input.memory.st_max_total_bytes,
      lt_max_files: input.memory.lt_max_files,
      lt_max_total_bytes: input.memory.lt_max_total_bytes,
    },
    focus:
      head.focusBytes === null
        ? null
        : {
            bytes_before: base.focusBytes ?? 0,
            bytes_after: head.focusBytes,
            max_bytes: input.memory.memory_md_max_bytes,
            // Items only where the texts were read and the budget is known.
            ...(typeof head.focusText === "string" && input.memory.memory_md_max_items !== undefined
              ? {
                  items_before: countFocusItems(base.focusText ?? ""),
                  items_after: countFocusItems(head.focusText),
                  max_items: input.memory.memory_md_max_items,
                }
              : {}),
          },
    ...(input.rejectedSkipped > 0 ? { rejected_skipped: input.rejectedSkipped } : {}),
    ...(typeof head.focusText === "string"
      ? { memory_md: focusLineDiff(base.focusText ?? "", head.focusText) }
      : {}),
    // What the body and --json show: a secret-like run is hidden, as in the flags.
    knowledge: knowledge.map((item) =>
      holdsSecret(item)
        ? {
            ...item,
            text: maskSecrets(item.text),
            ...(item.rationale === undefined ? {} : { rationale: maskSecrets(item.rationale) }),
          }
        : item,
    ),
    flags: [
      ...reviewFlags(knowledge, engrams),
      ...contradictionFlags(knowledge, input.kept ?? [], engrams),
      // No floor given (a caller without the config): no decision is below it.
      ...(input.memory.promote_min_confidence === undefined
        ? []
        : lowConfidenceFlags(knowledge, input.memory.promote_min_confidence)),
    ],
    ...(input.withheld !== undefined && input.withheld.length > 0
      ? { withheld: [...input.withheld] }
      : {}),
  };
}

/** A history import's items, dated by their newest commit where git gave its time. */
function withCommitTimes(
  items: KnowledgeItem[],
  times: ReadonlyMap<string, string> | undefined,
): KnowledgeItem[] {
  if (times === undefined || times.size === 0) return items;
  return items.map((item) => {
    if (item.at !== undefined || item.commits === undefined) return item;
    const at = item.commits
      .map((sha) => times.get(sha))
      .filter((t) => t !== undefined)
      .sort()
      .at(-1);
    return at === undefined ? item : { ...item, at };
  });
}
