import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import { CONFIRMED_BY } from "../core/graph/freshness.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { StateError } from "../errors.js";
import { recallScope } from "../graph/scope.js";
import { readCatalog } from "../repo/memory-tree.js";
import { NOTE_KINDS, OUTCOMES } from "../schema/envelope.js";
import { emitNote } from "../worker/emit.js";
import { recallIn, recordRecall } from "../worker/recall.js";
import { LoadedMemory } from "./loaded-memory.js";
import { registerSyncTool, remoteRecallOutput, remoteRecallPart } from "./sync-tools.js";
import { guarded, structured } from "./tool-result.js";

/**
 * engram's own MCP server: the worker's read and write operations as MCP tools, and the
 * memory files as resources. Every tool answers with structured content checked against
 * its output schema; a failure is a tool result with `isError`, never a crash of the server.
 */

// Hostile input is refused by the schema before any work: no unbounded strings.
const TEXT_MAX = 10_000;
const QUERY_MAX = 2_000;

/** `MemoryScope` (src/graph/scope.ts): one shape for every read. */
const scopeSchema = z.object({
  repository: z.string(),
  memory_version: z.number().int(),
  catalog_hash: z.string(),
  tiers: z.array(z.enum(["st", "lt"])),
  engrams_in_scope: z.number().int().optional(),
  learnings_in_scope: z.number().int().optional(),
  activity_sources: z
    .object({
      git: z.literal(true),
      github: z.object({ asked: z.boolean(), reason: z.string() }),
    })
    .optional(),
  remote_store: z.object({ asked: z.boolean(), reason: z.string() }),
});

const recallOutput = {
  status: z.enum(["found", "no_match", "memory_empty"]),
  message: z.string(),
  scope: scopeSchema,
  hits: z.array(
    z.object({
      engram_id: z.string(),
      path: z.string(),
      scope: z.enum(["st", "lt"]),
      version: z.string(),
      score: z.number(),
      topics: z.array(z.string()),
      matched: z.array(z.string()),
      snippet: z.string(),
      source: z.literal("local"),
    }),
  ),
  signal: z.boolean(),
  ...remoteRecallOutput,
};

const LEARNING_TYPES = ["decision", "insight", "pattern", "convention", "self_knowledge"] as const;

const contextOutput = {
  status: z.enum(["found", "no_match", "memory_empty"]),
  message: z.string(),
  scope: scopeSchema,
  topic: z.string(),
  max_tokens: z.number().int(),
  tokens: z.number().int(),
  tokenizer: z.string(),
  items: z.array(
    z.object({
      id: z.string(),
      type: z.enum(LEARNING_TYPES),
      text: z.string(),
      rationale: z.string().nullable(),
      score: z.number(),
      via: z.enum(["match", "neighbour"]),
      shared: z.array(z.string()),
      engram_id: z.string(),
      evidence: z.number().int(),
    }),
  ),
  omitted: z.number().int(),
  markdown: z.string(),
};

const freshnessOutput = {
  scope: scopeSchema,
  threshold_days: z.number(),
  now: z.string(),
  fresh: z.number().int(),
  stale: z.number().int(),
  temporal_stale: z.number().int(),
  learnings: z.array(
    z.object({
      id: z.string(),
      type: z.string(),
      text: z.string(),
      confirmed_at: z.string(),
      // Every way freshness finds it, seed.json imports ("origin") included.
      confirmed_by: z.enum(CONFIRMED_BY),
      graph_activity: z
        .object({ at: z.string(), entity: z.string(), detail: z.string() })
        .nullable(),
      contextual_at: z.string(),
      age_days: z.number(),
      fresh: z.boolean(),
      temporal_fresh: z.boolean(),
      why: z.string(),
    }),
  ),
};

const emitOutput = {
  event_id: z.string(),
  spooled: z.boolean(),
  transport: z.string(),
};

const statusOutput = {
  scope: scopeSchema,
  catalog: z.object({ version: z.number(), hash: z.string(), entries: z.number() }),
  tiers: z.object({
    st: z.object({ files: z.number(), bytes: z.number() }),
    lt: z.object({ files: z.number(), bytes: z.number() }),
  }),
  focus: z.object({ present: z.boolean(), bytes: z.number() }),
};

export interface MemoryServerOptions {
  /** The version the server reports in its initialize answer. */
  version: string;
  /** Worker id for recall signals and notes (default: the worker's usual id). */
  worker?: string | undefined;
  /** Loaded memory shared by the servers of one process (one per HTTP session). */
  memory?: LoadedMemory | undefined;
}

/** A new server (one per connection: an McpServer serves one transport). */
export function createMemoryServer(ctx: RepoContext, options: MemoryServerOptions): McpServer {
  const memory = options.memory ?? new LoadedMemory(ctx);
  let signals: Promise<unknown> = Promise.resolve();
  const server = new McpServer(
    { name: "engram", version: options.version },
    {
      instructions:
        "engram is this repository's shared memory. Call memory_recall before starting work on a topic, memory_emit to record a decision, fact, lesson or convention worth keeping, and read engram://MEMORY.md for the current focus.",
    },
  );

  server.registerTool(
    "memory_recall",
    {
      title: "Recall memory",
      description:
        "Search this repository's memory (engrams on main) by text, topic and tier. Every answer states the scope searched; an empty answer says whether memory itself is empty or the query matched nothing.",
      inputSchema: {
        query: z.string().min(1).max(QUERY_MAX).describe("what to look for"),
        limit: z.number().int().min(1).max(100).optional().describe("most hits (default 10)"),
        tiers: z
          .array(z.enum(["st", "lt"]))
          .min(1)
          .max(2)
          .optional()
          .describe("tiers to search (default both)"),
        confidence: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .describe(
            "how sure the caller already is (0..1): below 0.5 the sync stores are asked at once, 0.5-0.7 only when local memory finds nothing, 0.7+ validated in the background for the next recall; absent: local memory only",
          ),
        refresh: z
          .boolean()
          .optional()
          .describe("with confidence: ignore cached store answers (default false)"),
        include_superseded: z
          .boolean()
          .optional()
          .describe("also short-term engrams a long-term one superseded (default false)"),
      },
      outputSchema: recallOutput,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        const tiers: ("st" | "lt")[] = input.tiers
          ? [...new Set(input.tiers)].sort()
          : ["lt", "st"];
        const single = tiers.length === 1 ? tiers[0] : undefined;
        const loaded = await memory.get();
        const result = await recallIn(ctx, loaded, input.query, {
          limit: input.limit,
          scope: single,
          signal: false,
          includeSuperseded: input.include_superseded === true,
        });
        // The recall signal (a promotion hint) is spooled after the answer, one at a time,
        // so an agent does not wait for its fsync.
        if (result.hits.length > 0) {
          const hits = result.hits.map((h) => h.engram_id);
          signals = signals
            .then(() => recordRecall(ctx, input.query, hits, options.worker))
            .catch(() => undefined);
        }
        const remote = await remoteRecallPart(ctx, input, result.hits.length);
        const scope = {
          ...recallScope(ctx, loaded.catalog, tiers),
          remote_store: { asked: remote.remote.asked, reason: remote.remote.reason },
        };
        const status =
          result.hits.length + remote.remote_hits.length > 0
            ? "found"
            : scope.engrams_in_scope === 0
              ? "memory_empty"
              : "no_match";
        const message =
          status === "memory_empty"
            ? `no engram in tiers ${tiers.join(", ")} of ${scope.repository} at memory version ${scope.memory_version}: memory is empty there, not the query`
            : status === "no_match"
              ? `no engram of ${scope.engrams_in_scope} in scope matched "${input.query}"`
              : `${result.hits.length} hit(s) of ${scope.engrams_in_scope} engram(s) in scope${remote.remote_hits.length > 0 ? `, ${remote.remote_hits.length} from the sync stores` : ""}`;
        return structured({
          status,
          message,
          scope,
          hits: result.hits.map((h) => ({ ...h, source: "local" as const })),
          signal: result.hits.length > 0,
          ...remote,
        });
      }),
  );

  server.registerTool(
    "memory_context",
    {
      title: "Context for a topic",
      description:
        "The learnings related to a topic (its words, then learnings linked to the same files, projects and people), ranked and fitted to a token budget counted with a real tokenizer, as markdown ready to paste into a prompt. States its scope; tells an empty memory from a topic that matched nothing.",
      inputSchema: {
        topic: z.string().min(1).max(QUERY_MAX),
        max_tokens: z.number().int().min(1).max(100_000).optional().describe("default 2000"),
        type: z.enum(LEARNING_TYPES).optional(),
      },
      outputSchema: contextOutput,
      annotations: { readOnlyHint: true },
    },
    async (input) =>
      guarded(async () => {
        const { topicContext } = await import("../graph/queries.js");
        const r = await topicContext(ctx, input.topic, {
          maxTokens: input.max_tokens ?? 2000,
          type: input.type,
        });
        return structured({ ...r });
      }),
  );

  server.registerTool(
    "memory_freshness",
    {
      title: "Freshness of learnings",
      description:
        "Which learnings are stale: contextual freshness is the newer of when a learning was confirmed and when anything it links to (files, projects, components, people) last moved in git; the temporal-only verdict is given beside it.",
      inputSchema: {
        threshold_days: z.number().min(0.001).max(36_500).optional().describe("default 30"),
        stale_only: z.boolean().optional().describe("list only stale learnings (default true)"),
      },
      outputSchema: freshnessOutput,
      annotations: { readOnlyHint: true },
    },
    async (input) =>
      guarded(async () => {
        const { learningFreshness } = await import("../graph/queries.js");
        const now = Math.floor(Date.parse(receiptTime()) / 1000);
        const r = await learningFreshness(ctx, {
          thresholdDays: input.threshold_days ?? 30,
          now,
          env: process.env,
        });
        const learnings =
          input.stale_only === false ? r.learnings : r.learnings.filter((l) => !l.fresh);
        return structured({ ...r, learnings });
      }),
  );

  server.registerTool(
    "memory_emit",
    {
      title: "Record a note",
      description:
        "Record something worth remembering, as `worker emit` does: a memory_note.v1 on the local spool, durable when this returns. Secrets are redacted by the Director; mark private matters as sensitive.",
      inputSchema: {
        kind: z.enum(NOTE_KINDS),
        text: z.string().min(1).max(TEXT_MAX),
        rationale: z.string().max(TEXT_MAX).optional(),
        topics: z.array(z.string().min(1).max(100)).max(20).optional(),
        links: z.array(z.string().min(1).max(2000)).max(20).optional(),
        confidence: z.number().min(0).max(1).optional(),
        outcome: z.enum(OUTCOMES).optional(),
        privacy: z.enum(["private", "public", "sensitive"]).optional(),
        issue: z.string().max(100).optional(),
      },
      outputSchema: emitOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    async (input) =>
      guarded(async () => {
        const r = await emitNote(
          ctx,
          {
            kind: input.kind,
            text: input.text,
            rationale: input.rationale,
            topics: input.topics ?? [],
            links: input.links ?? [],
            confidence: input.confidence,
            outcome: input.outcome,
            privacy: input.privacy,
            issue: input.issue,
          },
          { worker: options.worker },
        );
        return structured({ event_id: r.event_id, spooled: r.spooled, transport: r.transport });
      }),
  );

  server.registerTool(
    "memory_status",
    {
      title: "Memory status",
      description: "The catalog version and hash, tier sizes and whether MEMORY.md is present.",
      inputSchema: {},
      outputSchema: statusOutput,
      annotations: { readOnlyHint: true },
    },
    async () =>
      guarded(async () => {
        const catalog = await readCatalog(ctx.repoDir);
        const tier = (scope: "st" | "lt") => {
          const entries = catalog.entries.filter((e) => e.scope === scope);
          return {
            files: entries.length,
            bytes: entries.reduce((sum, e) => sum + fileBytes(join(ctx.repoDir, e.path)), 0),
          };
        };
        const focusPath = join(ctx.repoDir, FOCUS_PATH);
        return structured({
          scope: recallScope(ctx, catalog, ["lt", "st"]),
          catalog: {
            version: catalog.catalog_version,
            hash: catalog.hash,
            entries: catalog.entries.length,
          },
          tiers: { st: tier("st"), lt: tier("lt") },
          focus: { present: existsSync(focusPath), bytes: fileBytes(focusPath) },
        });
      }),
  );

  registerSyncTool(server, ctx);

  server.registerResource(
    "focus",
    `engram://${FOCUS_PATH}`,
    {
      title: FOCUS_PATH,
      description: "The current-focus view of memory",
      mimeType: "text/markdown",
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: "text/markdown",
          text: readText(join(ctx.repoDir, FOCUS_PATH)),
        },
      ],
    }),
  );

  server.registerResource(
    "catalog",
    "engram://catalog.json",
    {
      title: "Catalog",
      description: "memory/catalog.json: every engram and its hash",
      mimeType: "application/json",
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: "application/json",
          text: readText(join(ctx.repoDir, CATALOG_PATH)),
        },
      ],
    }),
  );

  server.registerResource(
    "engram",
    new ResourceTemplate("engram://engrams/{engram_id}", {
      list: async () => {
        const catalog = await readCatalog(ctx.repoDir);
        return {
          resources: catalog.entries.map((e) => ({
            uri: `engram://engrams/${e.engram_id}`,
            name: e.engram_id,
            title: `${e.scope} ${e.version}: ${e.topics.slice(0, 5).join(", ")}`,
            mimeType: "application/json",
          })),
        };
      },
    }),
    { title: "Engram", description: "One engram file, by id", mimeType: "application/json" },
    async (uri, variables) => {
      const id = String(variables.engram_id ?? "");
      const catalog = await readCatalog(ctx.repoDir);
      const entry = catalog.entries.find((e) => e.engram_id === id);
      if (!entry) {
        throw new StateError(
          `no engram ${JSON.stringify(id.slice(0, 80))} in catalog version ${catalog.catalog_version}`,
        );
      }
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: "application/json",
            text: readText(engramFile(ctx.repoDir, entry.path)),
          },
        ],
      };
    },
  );

  return server;
}

function readText(path: string): string {
  if (!existsSync(path))
    throw new StateError(`${path} does not exist: run director init and director run`);
  return readFileSync(path, "utf8");
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * An engram file named by the catalog, as a path inside `memory/`: a catalog edited to point
 * elsewhere (`../../etc/passwd`) is refused rather than served.
 */
function engramFile(repoDir: string, path: string): string {
  const root = resolve(repoDir, MEMORY_DIR);
  const full = resolve(repoDir, path);
  if (!full.startsWith(root + sep)) {
    throw new StateError(
      `the catalog names ${JSON.stringify(path.slice(0, 200))}, outside ${MEMORY_DIR}/: run director verify`,
    );
  }
  return full;
}
