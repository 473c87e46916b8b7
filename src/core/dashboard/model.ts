import type { Catalog } from "../../schema/engram.js";
import type { WorkerState } from "../swarm/swarm.js";
import type { VersionRecord } from "../versions/log.js";

/** One budget as a person reads it: what is used against what is allowed. */
export interface BudgetUse {
  /** What is measured, e.g. `st files`. */
  label: string;
  used: number;
  max: number;
  unit: "events" | "bytes" | "files" | "items";
}

/** What `director status` knows, in the shape the dashboard needs (a subset of its report). */
export interface DashboardStatus {
  catalog: { version: number; hash: string; entries: number; created_at: string };
  buffer: { events: number; bytes: number; max_events: number; max_bytes: number };
  tiers: Record<
    "st" | "lt",
    { files: number; bytes: number; max_files: number; max_bytes: number }
  >;
  focus: {
    present: boolean;
    fresh: boolean;
    bytes: number;
    items: number;
    max_bytes: number;
    max_items: number;
  };
  quarantine: { records: number; by_reason: Record<string, number> };
  spool: { files: number };
  last_compaction_at: string | null;
  swarm: {
    workers: readonly (Pick<
      WorkerState,
      | "worker"
      | "last_seen"
      | "age_seconds"
      | "live"
      | "stage"
      | "issue"
      | "progress"
      | "errors"
      | "catalog_mismatch"
    > & {
      drift: {
        sync_required: boolean;
        reason: string | null;
        required_action: string | null;
        commits_behind: number | null;
        seconds_behind: number | null;
      } | null;
    })[];
  };
}

/** One sync target's queue as the state folder holds it (configured targets only). */
export interface SyncTargetInput {
  target: string;
  state: string | null;
  records: readonly {
    state: "pending" | "failed" | "synced";
    last_error: string | null;
    last_attempt_at: string | null;
  }[];
  last_check_at: string | null;
  status_reason: string | null;
}

/** A decision accepted from a session (`memory/knowledge/decision.json`). */
export interface KnowledgeDecision {
  id: string;
  text: string;
  rationale: string | null;
  version: number;
  written_at: string;
}

export interface DashboardInput {
  /** When the page was made (the receipt clock or SOURCE_DATE_EPOCH). */
  generatedAt: string;
  /** A name for the page's title (the repository folder's). */
  name: string;
  status: DashboardStatus;
  catalog: Catalog;
  /** What the page shows of each engram, by id (`engramView`); an unreadable one is absent. */
  engrams: ReadonlyMap<string, EngramView>;
  focusText: string | undefined;
  versions: readonly VersionRecord[];
  /** Bytes of memory at a logged version, where its snapshot could be read. */
  versionBytes: ReadonlyMap<number, number>;
  knowledgeDecisions: readonly KnowledgeDecision[];
  sync: readonly SyncTargetInput[];
}

/**
 * The part of an engram the page shows, taken from its parsed file whatever it holds: the
 * page displays, `director verify` judges, so a damaged file shows what it has.
 */
export interface EngramView {
  /** The end of the events' window: when its decisions were made. */
  end_ts: string;
  facts: string[];
  decisions: { title: string; rationale: string }[];
  supersedes: string[];
  provenance: { created_by: string; run_id: string; senders: string[]; event_count: number };
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");
const texts = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** What the page shows of an engram file's parsed JSON; missing or mistyped fields are empty. */
export function engramView(json: unknown): EngramView {
  const e = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
  const window = (e.source_window ?? {}) as Record<string, unknown>;
  const provenance = (e.provenance ?? {}) as Record<string, unknown>;
  const decisions = Array.isArray(e.decisions) ? e.decisions : [];
  return {
    end_ts: text(window.end_ts) || text(e.created_at),
    facts: texts(e.facts),
    decisions: decisions
      .filter((d): d is Record<string, unknown> => typeof d === "object" && d !== null)
      .map((d) => ({ title: text(d.title), rationale: text(d.rationale) }))
      .filter((d) => d.title !== ""),
    supersedes: texts(e.supersedes),
    provenance: {
      created_by: text(provenance.created_by),
      run_id: text(provenance.run_id),
      senders: texts(provenance.senders),
      event_count: typeof provenance.event_count === "number" ? provenance.event_count : 0,
    },
  };
}

export interface DashboardEngram {
  id: string;
  scope: "st" | "lt";
  version: string;
  bytes: number;
  /** False when the file could not be read: `director verify` says why. */
  readable: boolean;
  topics: string[];
  facts: string[];
  decisions: string[];
  provenance: { created_by: string; run_id: string; senders: string[]; event_count: number };
  supersedes: string[];
  superseded_by: string | null;
}

export interface DashboardDecision {
  date: string;
  title: string;
  rationale: string;
  /** The engram or knowledge record that holds it. */
  source: string;
  /** The long-term engram that carried this one's engram forward, if any. */
  superseded_by: string | null;
  /** The short-term engrams this decision's engram carries forward. */
  supersedes: string[];
}

export interface DashboardWorker {
  id: string;
  live: boolean;
  last_seen: string;
  age_seconds: number;
  stage: string | null;
  issue: string | null;
  progress: number | null;
  errors: number;
  drift: string;
}

export interface DashboardSyncTarget {
  target: string;
  state: string;
  queue_depth: number;
  synced: number;
  failed: number;
  /** Synced over synced and failed, 0..1; null before any send settled. */
  success_rate: number | null;
  last_error: string | null;
  last_check_at: string | null;
}

export interface DashboardVersion {
  version: number;
  created_at: string;
  made_by: string;
  engrams: number;
  facts: number;
  bytes: number | null;
}

/** Everything the page shows, as plain data: rendered to HTML and embedded for the script. */
export interface DashboardModel {
  name: string;
  generated_at: string;
  catalog: DashboardStatus["catalog"];
  budgets: BudgetUse[];
  quarantine: DashboardStatus["quarantine"];
  spool_files: number;
  last_compaction_at: string | null;
  focus: { present: boolean; fresh: boolean; items: { section: string; text: string }[] };
  decisions: DashboardDecision[];
  engrams: DashboardEngram[];
  topics: { topic: string; count: number }[];
  workers: DashboardWorker[];
  sync: DashboardSyncTarget[];
  versions: DashboardVersion[];
}

/**
 * How much of an engram's facts the page carries: enough to find it and judge it, not the
 * whole file (10,000 engrams must open in a browser in a second; the file has the rest).
 */
const FACTS_SHOWN = 3;
const FACT_CHARS = 120;

function cut(fact: string): string {
  return fact.length <= FACT_CHARS ? fact : `${fact.slice(0, FACT_CHARS - 1)}…`;
}

/** The dashboard's data from what the adapters read; pure and deterministic. */
export function buildDashboardModel(input: DashboardInput): DashboardModel {
  const { status } = input;
  const engrams = engramRows(input);
  return {
    name: input.name,
    generated_at: input.generatedAt,
    catalog: status.catalog,
    budgets: budgetsOf(status),
    quarantine: status.quarantine,
    spool_files: status.spool.files,
    last_compaction_at: status.last_compaction_at,
    focus: {
      present: status.focus.present,
      fresh: status.focus.fresh,
      items: focusItems(input.focusText),
    },
    decisions: decisionsOf(engrams, input),
    engrams,
    topics: topicCounts(engrams),
    workers: status.swarm.workers.map((w) => ({
      id: w.worker,
      live: w.live,
      last_seen: w.last_seen,
      age_seconds: Math.round(w.age_seconds),
      stage: w.stage,
      issue: w.issue,
      progress: w.progress,
      errors: w.errors,
      drift: driftText(w),
    })),
    sync: input.sync.map(syncRow),
    versions: input.versions.map((v) => ({
      version: v.version,
      created_at: v.created_at,
      made_by: makerText(v.made_by),
      engrams: v.counts.engrams,
      facts: v.counts.facts,
      bytes: input.versionBytes.get(v.version) ?? null,
    })),
  };
}

function budgetsOf(s: DashboardStatus): BudgetUse[] {
  return [
    { label: "buffer events", used: s.buffer.events, max: s.buffer.max_events, unit: "events" },
    { label: "buffer bytes", used: s.buffer.bytes, max: s.buffer.max_bytes, unit: "bytes" },
    { label: "st files", used: s.tiers.st.files, max: s.tiers.st.max_files, unit: "files" },
    { label: "st bytes", used: s.tiers.st.bytes, max: s.tiers.st.max_bytes, unit: "bytes" },
    { label: "lt files", used: s.tiers.lt.files, max: s.tiers.lt.max_files, unit: "files" },
    { label: "lt bytes", used: s.tiers.lt.bytes, max: s.tiers.lt.max_bytes, unit: "bytes" },
    { label: "MEMORY.md items", used: s.focus.items, max: s.focus.max_items, unit: "items" },
    { label: "MEMORY.md bytes", used: s.focus.bytes, max: s.focus.max_bytes, unit: "bytes" },
  ];
}

function engramRows(input: DashboardInput): DashboardEngram[] {
  const supersededBy = new Map<string, string>();
  for (const [id, engram] of input.engrams) {
    for (const old of engram.supersedes) supersededBy.set(old, id);
  }
  const rows: DashboardEngram[] = [];
  for (const entry of input.catalog.entries) {
    const engram = input.engrams.get(entry.engram_id);
    rows.push({
      id: entry.engram_id,
      scope: entry.scope,
      version: entry.version,
      bytes: entry.bytes,
      readable: engram !== undefined,
      topics: [...entry.topics],
      facts: (engram?.facts ?? []).slice(0, FACTS_SHOWN).map(cut),
      decisions: (engram?.decisions ?? []).map((d) => cut(d.title)),
      provenance: engram?.provenance ?? { created_by: "", run_id: "", senders: [], event_count: 0 },
      supersedes: engram?.supersedes ?? [],
      superseded_by: supersededBy.get(entry.engram_id) ?? null,
    });
  }
  // Newest first, then by id: the order a reviewer scans, stable for the same memory.
  return rows.sort((a, b) =>
    a.version === b.version ? (a.id < b.id ? -1 : 1) : a.version < b.version ? 1 : -1,
  );
}

/**
 * Decisions of the engrams and of the sessions' knowledge, newest first. A long-term engram
 * restates the decisions of the short-term ones it supersedes: each decision is shown once,
 * from its earliest engram, with what carried it forward.
 */
function decisionsOf(rows: readonly DashboardEngram[], input: DashboardInput): DashboardDecision[] {
  const byKey = new Map<string, DashboardDecision>();
  for (const row of [...rows].reverse()) {
    const engram = input.engrams.get(row.id);
    if (!engram) continue;
    for (const d of engram.decisions) {
      const key = `${d.title}\n${d.rationale}`;
      const date = engram.end_ts;
      const held = byKey.get(key);
      // At the same time, the short-term engram is the origin and the long-term one carried it.
      const earlier =
        held === undefined ||
        date < held.date ||
        (date === held.date && row.scope === "st" && held.superseded_by === null);
      if (earlier) {
        byKey.set(key, {
          date,
          title: d.title,
          rationale: d.rationale,
          source: row.id,
          superseded_by: row.superseded_by,
          supersedes: row.supersedes,
        });
      }
    }
  }
  for (const k of input.knowledgeDecisions) {
    const key = `${k.text}\n${k.rationale ?? ""}`;
    if (byKey.has(key)) continue;
    byKey.set(key, {
      date: k.written_at,
      title: k.text,
      rationale: k.rationale ?? "",
      source: `${k.id} (v${k.version})`,
      superseded_by: null,
      supersedes: [],
    });
  }
  return [...byKey.values()].sort((a, b) =>
    a.date === b.date ? (a.title < b.title ? -1 : 1) : a.date < b.date ? 1 : -1,
  );
}

function topicCounts(rows: readonly DashboardEngram[]): { topic: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const row of rows) for (const t of row.topics) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts]
    .map(([topic, count]) => ({ topic, count }))
    .sort((a, b) => b.count - a.count || (a.topic < b.topic ? -1 : 1));
}

/** MEMORY.md's bullet items under their section headings. */
export function focusItems(text: string | undefined): { section: string; text: string }[] {
  if (text === undefined) return [];
  const items: { section: string; text: string }[] = [];
  let section = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) section = line.slice(3).trim();
    else if (line.startsWith("- ")) items.push({ section, text: line.slice(2) });
  }
  return items;
}

function driftText(w: DashboardStatus["swarm"]["workers"][number]): string {
  const d = w.drift;
  if (d === null) return w.catalog_mismatch ? "sees another catalog" : "unknown";
  if (!d.sync_required) return "in step with main";
  const behind = [
    d.commits_behind !== null ? `${d.commits_behind} commit(s)` : "",
    d.seconds_behind !== null ? `${Math.round(d.seconds_behind)} s` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return `must ${d.required_action ?? "sync"} (${d.reason ?? "behind"}${behind ? `; ${behind} behind` : ""})`;
}

function syncRow(t: SyncTargetInput): DashboardSyncTarget {
  let synced = 0;
  let failed = 0;
  let lastError: { at: string; error: string } | null = null;
  for (const r of t.records) {
    if (r.state === "synced") synced++;
    if (r.state === "failed") failed++;
    if (r.last_error !== null) {
      const at = r.last_attempt_at ?? "";
      if (lastError === null || at > lastError.at) lastError = { at, error: r.last_error };
    }
  }
  return {
    target: t.target,
    state: t.state ?? "never checked",
    queue_depth: t.records.length - synced,
    synced,
    failed,
    success_rate: synced + failed === 0 ? null : synced / (synced + failed),
    last_error: lastError?.error ?? t.status_reason,
    last_check_at: t.last_check_at,
  };
}

function makerText(m: VersionRecord["made_by"]): string {
  switch (m.kind) {
    case "session":
      return `session ${m.session_id}`;
    case "rollback":
      return `rollback to v${m.target}`;
    case "set-aside":
      return `set-aside ${m.path}`;
    default:
      return m.kind;
  }
}
