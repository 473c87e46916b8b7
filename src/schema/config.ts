import { z } from "zod";
import { StateConfig, WorkerConfig } from "./checkout-config.js";
import { NatsConfig, Seconds } from "./nats-config.js";
import { QuarantineConfig } from "./quarantine-config.js";
import { GraphitiGroup, SourcesConfig } from "./sources-config.js";
import { TanaSyncConfig } from "./tana-config.js";

export { NatsConfig, TanaSyncConfig };

const PositiveInt = z.number().int().positive();
const Ratio = z.number().gt(0).lt(1);
const Confidence = z.number().min(0).max(1);

/** `[memory]`: buffer, tier, engram and focus-view budgets, compaction and promotion policy. */
export const MemoryConfig = z
  .object({
    buffer_max_bytes: PositiveInt.default(32 * 1024 * 1024).describe(
      "Hard byte budget of the event buffer (normalized events).",
    ),
    buffer_max_events: PositiveInt.default(100_000).describe(
      "Hard event-count budget of the buffer.",
    ),
    buffer_keep_recent_events: z
      .number()
      .int()
      .nonnegative()
      .default(200)
      .describe(
        "The newest window of events that compaction leaves alone; only director run --flush and a history import (--from-git) compact it too.",
      ),
    buffer_high_water_ratio: Ratio.default(0.8).describe(
      "Soft trigger: above this share of a budget the buffer is compacted, at most once per compaction_min_interval_seconds.",
    ),
    buffer_low_water_ratio: Ratio.default(0.5).describe(
      "Compaction takes the oldest events until the buffer is at or below this share of its budgets.",
    ),
    engram_max_bytes: PositiveInt.default(16 * 1024).describe("Largest size of one engram file."),
    st_max_total_bytes: PositiveInt.default(4 * 1024 * 1024).describe("Byte budget of memory/st."),
    lt_max_total_bytes: PositiveInt.default(8 * 1024 * 1024).describe("Byte budget of memory/lt."),
    st_max_files: PositiveInt.default(512).describe("File budget of memory/st."),
    lt_max_files: PositiveInt.default(1024).describe("File budget of memory/lt."),
    memory_md_max_bytes: PositiveInt.default(16 * 1024).describe("Byte budget of MEMORY.md."),
    memory_md_max_items: PositiveInt.default(60).describe("Item (bullet) budget of MEMORY.md."),
    memory_md_update_cadence: z
      .enum(["on_merge", "periodic", "hybrid"])
      .default("on_merge")
      .describe("When MEMORY.md is regenerated."),
    memory_md_update_every_n_heartbeats: PositiveInt.default(20).describe(
      "With periodic or hybrid cadence: regenerate after this many heartbeats.",
    ),
    compaction_min_interval_seconds: z
      .number()
      .nonnegative()
      .default(300)
      .describe("Soft-triggered compactions are at least this far apart (receipt time)."),
    promote_repeat_min: PositiveInt.default(3).describe(
      "Promote a fact or lesson to LT once it appears in this many ST engrams.",
    ),
    promote_recall_min: PositiveInt.default(5).describe(
      "Promote an ST engram to LT once it has been recalled this many times.",
    ),
    promote_decisions: z.boolean().default(true).describe("Promote explicit decisions to LT."),
    promote_min_confidence: Confidence.default(0.7).describe(
      "Notes with a stated confidence below this are not promoted.",
    ),
    history_min_confidence: Confidence.default(0.6).describe(
      "A decision `ingest --from-git` infers with a confidence below this is proposed (`director confirm`), not remembered.",
    ),
    stall_seconds: PositiveInt.default(600).describe(
      "A gap between a worker's heartbeats longer than this is reported as a stall.",
    ),
    dedup_window_events: PositiveInt.default(1_000_000).describe(
      "How many already-compacted event ids are remembered to reject resends.",
    ),
    publish: z
      .enum(["auto", "pull-request", "work-tree"])
      .default("auto")
      .describe(
        "Where memory is published, so where an ingest's compactions for room go: work-tree (written there when the ingest ends), pull-request (kept in the state folder for the next director run --pr), or auto (pull-request when GITHUB_REPOSITORY or GITHUB_ACTIONS=true is set, github.repository is, a run --pr ran here or the engram branch exists).",
      ),
  })
  .strict();
export type MemoryConfig = z.infer<typeof MemoryConfig>;

export const AgentBusConfig = z
  .object({
    max_message_bytes: PositiveInt.default(65_536).describe("Largest envelope accepted, in bytes."),
    heartbeat_interval_seconds: PositiveInt.default(30).describe(
      "How often workers send heartbeats.",
    ),
    heartbeat_ttl_seconds: PositiveInt.default(120).describe(
      "A worker silent this long is not live.",
    ),
    max_connections: PositiveInt.max(65_536)
      .default(512)
      .describe(
        "Most worker connections the TCP hub holds at once; one more is refused (the worker spools).",
      ),
    sender_share: z
      .number()
      .gt(0)
      .max(1)
      .default(0.25)
      .describe(
        "Most of the buffer's budgets one sender may take: through the TCP hub (its address, or its certificate under TLS) while the buffer is past its high-water mark, past which the hub stops reading it until a compaction; in the spool (the id it names) of buffer_max_bytes at any time, past which its sends are refused until a drain.",
      ),
    sources: z
      .array(z.string().regex(/^(nats:\/\/|git:)\S+$/, "expected nats://HOST:PORT or git:REMOTE"))
      .max(16)
      .default([])
      .describe(
        "Networked bus sources `director run` drains besides the local spool (nats://HOST:PORT, git:REMOTE).",
      ),
    nats: NatsConfig.prefault({}).describe(
      "The NATS JetStream transport (--bus nats://HOST:PORT): stream, subjects, the Director's durable consumer, timeouts.",
    ),
  })
  .strict();
export type AgentBusConfig = z.infer<typeof AgentBusConfig>;

export const SyncMainPolicy = z
  .object({
    max_commits_behind: z
      .number()
      .int()
      .nonnegative()
      .default(20)
      .describe("A worker whose branch misses more of main's commits than this must sync."),
    max_seconds_behind: z
      .number()
      .int()
      .nonnegative()
      .default(86_400)
      .describe("A worker whose main ancestor is older than this (seconds) must sync."),
    require_catalog_hash_match: z
      .boolean()
      .default(true)
      .describe("A worker whose catalog hash differs from main's must sync."),
    required_action: z
      .enum(["merge_main", "rebase_main"])
      .default("merge_main")
      .describe("How a worker that must sync brings main in (`worker sync`, `sync_required.v1`)."),
  })
  .strict();

export const RedactionConfig = z
  .object({
    patterns: z
      .array(z.string())
      .default([])
      .describe("Extra regular expressions (JavaScript syntax) whose matches are redacted."),
  })
  .strict();

// A branch name GitHub and git both accept: no spaces, `..`, `//`, leading `-` or `/`, trailing
// `/` or `.lock`.
const BranchName = z
  .string()
  .regex(
    /^(?![-/])(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._/-]+$/,
    "expected a git branch name",
  );

/** `[github]`: where and how the Director proposes memory as a pull request. */
export const GitHubConfig = z
  .object({
    repository: z
      .string()
      .regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/, "expected OWNER/NAME")
      .optional()
      .meta({ examples: ["octo-org/app"] })
      .describe("OWNER/NAME of the repository, when GITHUB_REPOSITORY is unset."),
    api_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .meta({ examples: ["https://github.example.com/api/v3"] })
      .describe(
        "REST API base URL (GitHub Enterprise Server: https://HOST/api/v3), used only when GITHUB_API_URL is unset and ENGRAM_ALLOW_HOSTS allows its host; default https://api.github.com.",
      ),
    base_branch: BranchName.default("main").describe("Branch the memory PR targets."),
    head_branch: BranchName.default("engram/memory").describe(
      "Branch the Director commits memory to; the PR's head. An engram/ branch, not base_branch.",
    ),
    labels: z
      .array(z.string().min(1).max(50))
      .max(100)
      .default(["memory"])
      .describe("Labels put on the memory PR (created with colour ededed when missing)."),
    reviewers: z
      .array(z.string().regex(/^[A-Za-z0-9-]+(\[bot\])?$/, "expected a GitHub login"))
      .max(15)
      .default([])
      .describe("Logins asked to review the memory PR when it is opened."),
    team_reviewers: z
      .array(z.string().regex(/^[A-Za-z0-9_.-]+$/, "expected a team slug"))
      .max(15)
      .default([])
      .describe("Team slugs asked to review the memory PR when it is opened."),
    draft: z.boolean().default(false).describe("Open the memory PR as a draft."),
    use_git_data_api: z
      .boolean()
      .default(false)
      .describe(
        "Commit through the GitHub Git Data API even when a writable git remote exists (false: push with git).",
      ),
  })
  .strict();
export type GitHubConfig = z.infer<typeof GitHubConfig>;

const Fraction = z.number().min(0).max(1);

const DatabaseId = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .meta({ examples: ["0f1e2d3c4b5a49687766554433221100"] });

/** `[sync.notion]`: the Notion target (API version 2025-09-03, data sources). */
export const NotionSyncConfig = z
  .object({
    base_url: z
      .url({ protocol: /^https?$/ })
      .default("https://api.notion.com")
      .describe("API base URL; ENGRAM_NOTION_URL wins, and another host needs ENGRAM_ALLOW_HOSTS."),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
      .default("NOTION_TOKEN")
      .describe("Token variable; another than NOTION_TOKEN needs ENGRAM_ALLOW_TOKEN_VARS."),
    parent_page_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ examples: ["1a2b3c4d5e6f47a8b9c0d1e2f3a4b5c6"] })
      .describe("Page under which `director sync init --target notion` creates the databases."),
    databases: z
      .object({
        episodes: DatabaseId.describe("The Episodes database."),
        insights: DatabaseId.describe("The Insights database."),
        patterns: DatabaseId.describe("The Patterns database."),
        evolution: DatabaseId.describe("The Evolution database (memory versions)."),
      })
      .strict()
      .prefault({})
      .describe(
        "Database ids; those left out are taken from what `sync init` recorded in the state folder.",
      ),
    requests_per_second: z
      .number()
      .positive()
      .max(100)
      .default(3)
      .describe("Average request rate (Notion allows about 3 per second per integration)."),
    timeout_seconds: Seconds.default(30).describe("A request without an answer this long fails."),
  })
  .strict();
export type NotionSyncConfig = z.infer<typeof NotionSyncConfig>;

/** `[sync.graphiti]`: a Graphiti MCP knowledge-graph server (streamable HTTP). */
export const GraphitiSyncConfig = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .default("http://localhost:8000/mcp/")
      .describe(
        "The server's streamable HTTP MCP endpoint; ENGRAM_GRAPHITI_URL wins, and another host needs ENGRAM_ALLOW_HOSTS.",
      ),
    backend: z
      .enum(["neo4j", "falkordb"])
      .default("neo4j")
      .describe(
        'Graph database behind the server: "falkordb" escapes Lucene special characters in search queries.',
      ),
    timeout_seconds: Seconds.default(30).describe("A call without an answer this long fails."),
    health_timeout_seconds: Seconds.default(5).describe("The health check gives up after this."),
    retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(3)
      .describe("Retries (exponential backoff) of a call that timed out, was refused, 429 or 5xx."),
    confirm_wait_seconds: Seconds.default(10).describe(
      "How long a send waits for get_episodes to list a queued episode before leaving it pending.",
    ),
    groups: z
      .object({
        engram: GraphitiGroup.default("engram").describe("Group of engram's own sync items."),
        learning: GraphitiGroup.default("learning").describe("Group of learning notes."),
        research: GraphitiGroup.default("research").describe("Group of research notes."),
      })
      .strict()
      .prefault({})
      .describe("The group_id per kind of episode."),
  })
  .strict();
export type GraphitiSyncConfig = z.infer<typeof GraphitiSyncConfig>;

/** `[sync]`: what memory sends to external stores, when, and how often it retries. */
export const SyncConfig = z
  .object({
    project: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .meta({ examples: ["my-app"] })
      .describe("Project name written on every item; default: the repository folder's name."),
    default_privacy: z
      .enum(["public", "private", "sensitive"])
      .default("private")
      .describe(
        "Privacy of items that carry no privacy of their own (memory versions); notes default to private.",
      ),
    default_confidence: Fraction.default(0.5).describe(
      "Confidence of an insight or lesson when no note behind it stated one.",
    ),
    episode_min_confidence: Fraction.default(0.7).describe(
      "An episode with a success or failure at this confidence or above is synced.",
    ),
    episode_min_surprise: Fraction.default(0.3).describe(
      "An episode whose surprise (|confidence - outcome value|) is at least this is synced.",
    ),
    insight_validated_min_confidence: Fraction.default(0.6).describe(
      "A validated insight (promoted to LT) needs at least this confidence (priority 1).",
    ),
    insight_validated_min_evidence: PositiveInt.default(3).describe(
      "... and at least this many engrams repeating it.",
    ),
    insight_pending_min_confidence: Fraction.default(0.8).describe(
      "A pending insight (ST only) needs at least this confidence (priority 2).",
    ),
    insight_pending_min_evidence: PositiveInt.default(2).describe(
      "... and at least this many engrams repeating it.",
    ),
    pattern_frequent_min_occurrences: PositiveInt.default(10).describe(
      "A pattern seen this often is synced whatever its confidence (priority 1).",
    ),
    pattern_established_min_occurrences: PositiveInt.default(5).describe(
      "A pattern seen this often with pattern_established_min_confidence is synced (priority 2).",
    ),
    pattern_established_min_confidence: Fraction.default(0.6).describe(
      "... with at least this confidence is synced (priority 2).",
    ),
    batch_interval_seconds: z
      .number()
      .int()
      .nonnegative()
      .default(300)
      .describe("Priority 2 items are sent in batches at most this often."),
    retry_delays_seconds: z
      .array(z.number().int().nonnegative())
      .min(1)
      .max(10)
      .default([60, 300, 1800])
      .describe("Waits before each retry; after the last one an item is failed."),
    synced_retention_days: PositiveInt.default(7).describe(
      "Synced records leave the queue after this many days (their id mapping stays).",
    ),
    failed_retention_days: PositiveInt.default(30).describe(
      "Failed records are archived after this many days.",
    ),
    log_keep_weeks: PositiveInt.default(8).describe(
      "The sync log rotates weekly; this many weekly files are kept.",
    ),
    recall_cache_ttl_seconds: PositiveInt.default(86_400).describe(
      "How long remote recall results are cached locally.",
    ),
    notion: NotionSyncConfig.prefault({}).describe("The Notion target."),
    graphiti: GraphitiSyncConfig.prefault({}).describe("The Graphiti knowledge-graph target."),
    tana: TanaSyncConfig.prefault({}).describe("The Tana target."),
  })
  .strict();
export type SyncConfig = z.infer<typeof SyncConfig>;
/** `[sessions]`: the session buffer's budgets and the consolidation rules per kind of memory. */
export const SessionsConfig = z
  .object({
    buffer_max_items: PositiveInt.default(1000).describe(
      "Most items one session buffer holds; a write past it is refused.",
    ),
    buffer_max_bytes: PositiveInt.default(1024 * 1024).describe(
      "Most bytes one session buffer file holds; a write past it is refused.",
    ),
    episodes: z
      .enum(["append_all", "off"])
      .default("append_all")
      .describe("Episodes: append_all keeps every one with a permanent id; off rejects them."),
    knowledge: z
      .enum(["validate_and_merge", "off"])
      .default("validate_and_merge")
      .describe(
        "Facts, lessons, conventions, decisions: validate_and_merge keeps those above knowledge_min_confidence and merges duplicates; off rejects them.",
      ),
    knowledge_min_confidence: z
      .number()
      .min(0)
      .max(1)
      .default(0.7)
      .describe("validate_and_merge keeps knowledge whose confidence is above this."),
    state: z
      .enum(["latest_wins", "hold_conflicts"])
      .default("latest_wins")
      .describe(
        "State documents: latest_wins overwrites (a key changed since the parent is reported); hold_conflicts holds such a key for review instead.",
      ),
    state_history_max: z
      .number()
      .int()
      .nonnegative()
      .default(10)
      .describe("Earlier values kept per state document."),
    core: z
      .enum(["careful_merge", "off"])
      .default("careful_merge")
      .describe(
        "Core documents: careful_merge applies changes at or above core_min_confidence, never deletes, logs every change, and holds a key changed since the parent for review; off rejects them.",
      ),
    core_min_confidence: z
      .number()
      .min(0)
      .max(1)
      .default(0.9)
      .describe("careful_merge applies core changes at or above this confidence."),
    episodes_max: PositiveInt.default(50_000).describe(
      "Most session episodes kept in memory/sessions/; past it the oldest sessions' episode files are evicted first (restorable from history).",
    ),
    documents_max_bytes: PositiveInt.default(16 * 1024 * 1024).describe(
      "Most bytes of the session documents (memory/state, core, sessions, knowledge); past it the oldest episode files are evicted first, and a consolidation that still does not fit is refused.",
    ),
  })
  .strict();
export type SessionsConfig = z.infer<typeof SessionsConfig>;

export const Config = z
  .object({
    memory: MemoryConfig.prefault({}),
    agent_bus: AgentBusConfig.prefault({}),
    policy: z
      .object({ sync_main: SyncMainPolicy.prefault({}) })
      .strict()
      .prefault({}),
    redaction: RedactionConfig.prefault({}),
    quarantine: QuarantineConfig.prefault({}),
    state: StateConfig.prefault({}),
    github: GitHubConfig.prefault({}),
    sync: SyncConfig.prefault({}),
    sessions: SessionsConfig.prefault({}),
    sources: SourcesConfig.prefault({}),
    worker: WorkerConfig.prefault({}),
  })
  .strict();
export type Config = z.infer<typeof Config>;

export function defaultConfig(): Config {
  return Config.parse({});
}
