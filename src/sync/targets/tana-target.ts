import type { OutgoingItem } from "../../core/sync/outgoing.js";
import type { SyncType } from "../../core/sync/policy.js";
import { DEFAULT_SETTLE_SECONDS, type MappingEntry } from "../../core/sync/queue.js";
import {
  archiveNode,
  fitNode,
  type PlannedNode,
  parseDescription,
  planCalls,
  renderNode,
  type TanaLimits,
  type TanaNode,
  type TanaSchemaIds,
  type TanaTagKind,
  tagKind,
} from "../../core/sync/tana-nodes.js";
import type { TanaSyncConfig } from "../../schema/config.js";
import type { Registry } from "../../schema/registry.js";
import { EntityLinker } from "./tana-entities.js";
import { TanaInputClient, TanaNodeGoneError } from "./tana-input-client.js";
import { TanaLocalClient } from "./tana-local-client.js";
import { PartsJournal } from "./tana-parts.js";
import { createSchema, schemaProgressFromMapping, schemaProgressMapping } from "./tana-schema.js";
import { annotate, asTargetError, createNodes, writeInPlace } from "./tana-write.js";
import {
  type BatchEntry,
  type BatchOutcome,
  type BatchSyncTarget,
  type SchemaReport,
  SyncTargetError,
  type TargetHealth,
} from "./target.js";

export interface TanaTargetOptions {
  config: TanaSyncConfig;
  token: string;
  localToken: string;
  registry: Registry;
  /** Schema ids recorded in the mapping, or null before `sync init`. */
  schema: TanaSchemaIds | null;
  /** The Director's clock (archive dates). */
  clock: () => string;
  fetch?: typeof fetch;
  /** Waits out a Local API Retry-After (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * When each mapped node was written (remote id -> ISO time, from the mapping): a node
   * written less than `settleSeconds` ago may be missing from the Local API's search (its
   * index lags behind writes) without being gone.
   */
  syncedAt?: ReadonlyMap<string, string>;
  settleSeconds?: number;
  /**
   * Where the journal of content sent in parts lives (`<state>/sync/tana/parts.json`); null
   * or absent: kept in memory only (a killed run's parts are then finished by the Local API).
   */
  partsPath?: string | null;
  /** The queue's id mapping: a parts journal entry whose outcome it records is done with. */
  mapping?: Readonly<Record<string, MappingEntry>>;
  /**
   * Records the schema nodes an init has made so far, as each call is answered (mapping
   * entries): an init stopped between its calls is run again on them, making nothing twice.
   */
  recordSchemaProgress?: (entries: Record<string, MappingEntry>) => void;
}

/** A node engram wrote, as the Local API lists it. */
export interface LiveNode {
  key: string;
  hash: string;
}

const HEALTH_MS = 5000;

/**
 * Tana as a sync target: learning and proposal nodes created through the Input API in calls of
 * up to 100 nodes and 5000 characters, one a second; updated, trashed, searched and checked
 * through the Local API while the desktop app runs, or annotated and marked archived through the
 * Input API when it does not.
 */
export class TanaTarget implements BatchSyncTarget {
  readonly name = "tana";
  readonly input: TanaInputClient;
  readonly local: TanaLocalClient | null;
  /** What the run should tell the user: entities not linked, nodes found gone. */
  readonly notes: string[] = [];
  /** Keys whose mapped node was gone and was created again. */
  readonly recreated: string[] = [];
  private schema: TanaSchemaIds | null;
  private localUp = false;
  private workspace: string | null = null;
  private listing: Map<string, string> | null = null;
  /** Ids of the nodes engram wrote that the listing found alive (not trashed). */
  private liveIds: Set<string> | null = null;
  private readonly planned = new Map<string, PlannedNode>();
  /** Each planned item's node with its whole content (an annotation carries it whole). */
  private readonly rendered = new Map<string, TanaNode>();
  /** Which parts of content sent in parts reached Tana, across runs. */
  readonly parts: PartsJournal;
  private readonly invalid = new Map<string, string>();
  /** Links to people and projects, and what could not be linked and why. */
  readonly linker: EntityLinker;
  private readonly limits: TanaLimits;

  constructor(private readonly options: TanaTargetOptions) {
    const c = options.config;
    this.limits = { max_nodes: c.max_nodes_per_call, max_chars: c.max_chars_per_call };
    this.input = new TanaInputClient({
      endpoint: c.endpoint,
      token: options.token,
      callsPerSecond: c.calls_per_second,
      limits: this.limits,
      timeoutMs: c.timeout_seconds * 1000,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.local =
      c.local_api_url === undefined
        ? null
        : new TanaLocalClient({
            baseUrl: c.local_api_url,
            token: options.localToken,
            timeoutMs: c.timeout_seconds * 1000,
            ...(options.sleep ? { sleep: options.sleep } : {}),
          });
    this.schema = options.schema;
    this.parts = new PartsJournal(options.partsPath ?? null);
    const mapping = options.mapping;
    if (mapping !== undefined) {
      this.parts.prune((key, e) => {
        const m = mapping[key];
        return m !== undefined && m.remote_id === e.node && m.content_hash === e.hash;
      });
    }
    this.linker = new EntityLinker(
      {
        registry: options.registry,
        map: c.entities,
        tags: { person: c.person_tag, project: c.project_tag },
      },
      this.local,
      async () => (this.local as TanaLocalClient).listTags(await this.workspaceId()),
    );
  }

  get schemaIds(): TanaSchemaIds | null {
    return this.schema;
  }

  get tagNames(): Record<TanaTagKind, string> {
    return {
      learning: this.options.config.learning_tag,
      proposal: this.options.config.proposal_tag,
    };
  }

  /**
   * Healthy when the token is there and Tana answers: the Local API's `/health` when one is
   * configured (the desktop app must run: updates, trash and entity search need it), else the
   * Input API endpoint (a GET, which creates nothing).
   */
  async health(): Promise<TargetHealth> {
    const started = performance.now();
    const schema: TargetHealth["schema"] = {
      learning: this.schema ? "ok" : "missing",
      proposal: this.schema ? "ok" : "missing",
    };
    const answer = (error: TargetHealth["error"], message: string | null): TargetHealth => ({
      healthy: error === null,
      error,
      message,
      latency_ms: Math.round(performance.now() - started),
      rate_limit: null,
      schema,
    });
    if (this.options.token === "") {
      return answer("auth", `no Input API token in $${this.options.config.token_env}`);
    }
    if (this.local !== null) {
      const down = await this.local.health(HEALTH_MS);
      this.localUp = down === null;
      if (down !== null) return answer("unavailable", down);
      return answer(null, null);
    }
    const down = await this.input.reachable(HEALTH_MS);
    return answer(down === null ? null : "unavailable", down);
  }

  /** Creates the supertags and their fields when the recorded ones are missing or gone. */
  async ensureSchema(): Promise<SchemaReport> {
    if (this.local !== null && !this.localUp) await this.health();
    const localUse =
      this.localUp && this.local !== null
        ? { client: this.local, workspace: await this.workspaceId() }
        : null;
    if (this.schema !== null) {
      const gone = localUse === null ? [] : await this.goneTags(localUse.workspace);
      if (gone.length === 0) {
        return { created: [], validated: ["learning", "proposal"], ids: this.reportIds() };
      }
      this.notes.push(
        `tana: supertag(s) ${gone.join(", ")} recorded but gone from the workspace; created again`,
      );
    }
    // A first init goes on from what an earlier one made; tags gone from Tana start afresh.
    const progress =
      this.schema === null
        ? schemaProgressFromMapping(this.options.mapping ?? {}, this.tagNames)
        : { fields: {}, tags: {} };
    const record = this.options.recordSchemaProgress;
    const outcome = await createSchema(this.input, localUse, this.tagNames, this.limits, {
      progress,
      record: (p) => record?.(schemaProgressMapping(p, this.tagNames, this.options.clock())),
    });
    this.schema = outcome.ids;
    return {
      created: outcome.created,
      validated: outcome.adopted,
      ids: this.reportIds(),
    };
  }

  private reportIds(): SchemaReport["ids"] {
    return this.schema
      ? { learning: this.schema.tags.learning, proposal: this.schema.tags.proposal }
      : {};
  }

  private async goneTags(workspace: string): Promise<string[]> {
    const tags = new Set(
      (await (this.local as TanaLocalClient).listTags(workspace)).map((t) => t.id),
    );
    const ids = this.schema as TanaSchemaIds;
    return (["learning", "proposal"] as const)
      .filter((k) => !tags.has(ids.tags[k]))
      .map((k) => this.tagNames[k]);
  }

  private async workspaceId(): Promise<string> {
    if (this.workspace === null) {
      const configured = this.options.config.workspace_id;
      const first = configured ?? (await (this.local as TanaLocalClient).workspaces())[0]?.id;
      if (first === undefined) {
        throw new SyncTargetError("Tana Local API lists no workspace", "schema");
      }
      this.workspace = first;
    }
    return this.workspace;
  }

  /**
   * Every node engram wrote that Tana still holds (not in the trash), by node id, through the
   * Local API, page by page; null when the Local API does not run.
   */
  async liveNodes(): Promise<Map<string, LiveNode> | null> {
    if (this.local === null || !this.localUp || this.schema === null) return null;
    const out = new Map<string, LiveNode>();
    for (const tag of [this.schema.tags.learning, this.schema.tags.proposal]) {
      for (const node of await this.local.searchAll({ hasType: tag })) {
        const parsed = parseDescription(node.description);
        if (!node.inTrash && parsed !== null) out.set(node.id, parsed);
      }
    }
    this.listing = new Map([...out].map(([id, n]) => [n.key, id]));
    this.liveIds = new Set(out.keys());
    return out;
  }

  /**
   * The node engram wrote for this key, from the Local API's listing. Throws when Tana cannot
   * be searched (no Local API: the Input API is write-only), so that an unknown outcome stays
   * unknown instead of passing for "not there".
   */
  async findByKey(_type: SyncType, key: string): Promise<string | null> {
    if (this.schema === null) return null;
    if (this.local !== null && !this.localUp) await this.health();
    // Not searchable now: a node whose parts were journalled is known by its id all the same.
    const journalled = this.parts.get(key)?.node;
    if (journalled !== undefined && !this.localUp) return journalled;
    if (this.local === null) {
      throw new SyncTargetError(
        `${key}: its last call may have created its node, and the Input API cannot be searched; it is not created again until a run with the Local API (local_api_url, the desktop app running) looks it up`,
        "unavailable",
      );
    }
    if (this.listing === null && (await this.liveNodes()) === null) {
      throw new SyncTargetError(
        `${key}: Tana Local API not reachable to look it up`,
        "unavailable",
      );
    }
    return this.listing?.get(key) ?? null;
  }

  async planBatches(entries: readonly BatchEntry[]): Promise<BatchEntry[][]> {
    const schema = this.requireSchema();
    if (this.localUp && this.listing === null) {
      try {
        await this.liveNodes();
      } catch (error) {
        // New items are created all the same; only an equivalent node made outside this
        // queue (a lost mapping) goes unnoticed this run.
        this.notes.push(`tana: listing engram's nodes failed (${(error as Error).message})`);
      }
    }
    const creates: { entry: BatchEntry; planned: PlannedNode }[] = [];
    const updates: BatchEntry[][] = [];
    for (const original of entries) {
      let entry = original;
      // An equivalent node already in Tana (the same learning key): updated, not created again.
      const existing = entry.remoteId === null ? (this.listing?.get(entry.item.key) ?? null) : null;
      if (existing !== null) entry = { ...entry, remoteId: existing };
      const links = await this.linker.linksOf(entry.item);
      const node = renderNode(entry.item, schema, links);
      const content = schema.fields[tagKind(entry.item)].content ?? "";
      let planned: PlannedNode;
      try {
        planned = fitNode(entry.item.key, node, content, this.parent(), this.limits);
      } catch (error) {
        // Too big even alone: its own group, answered as rejected without a call.
        this.invalid.set(entry.item.key, (error as Error).message);
        updates.push([entry]);
        continue;
      }
      this.planned.set(entry.item.key, planned);
      this.rendered.set(entry.item.key, node);
      if (entry.remoteId === null) creates.push({ entry, planned });
      else updates.push([entry]);
    }
    const calls = planCalls(
      creates.map((c) => c.planned),
      this.parent(),
      this.limits,
    );
    const byKey = new Map(creates.map((c) => [c.entry.item.key, c.entry]));
    return [...calls.map((call) => call.map((p) => byKey.get(p.key) as BatchEntry)), ...updates];
  }

  async upsertBatch(batch: readonly BatchEntry[]): Promise<BatchOutcome[]> {
    const first = batch[0];
    const invalid = first === undefined ? undefined : this.invalid.get(first.item.key);
    if (first !== undefined && invalid !== undefined) {
      return [
        { key: first.item.key, ok: false, error: new SyncTargetError(invalid, "validation") },
      ];
    }
    if (batch.length === 1 && first !== undefined && first.remoteId !== null) {
      return [await this.update(first.item, first.remoteId)];
    }
    return this.create(batch.map((e) => e.item));
  }

  async upsert(item: OutgoingItem, remoteId: string | null): Promise<string> {
    const [entry] = await this.planBatches([{ item, remoteId }]);
    const [outcome] = await this.upsertBatch(entry ?? []);
    if (outcome === undefined)
      throw new SyncTargetError(`${item.key}: nothing sent`, "unavailable");
    if (!outcome.ok) throw outcome.error;
    return outcome.remoteId;
  }

  /** Trashes the node (Local API) or marks it archived with a child (Input API). */
  async archive(remoteId: string): Promise<"trashed" | "marked" | "gone"> {
    if (this.local !== null && this.localUp) {
      if ((await this.ownNode(remoteId)) === "gone") return "gone";
      await this.local.trash(remoteId);
      this.liveIds?.delete(remoteId);
      return "trashed";
    }
    const archivedAt = this.schema?.fields.learning.archivedAt;
    try {
      await this.input.post({
        targetNodeId: remoteId,
        nodes: [archiveNode(archivedAt, this.options.clock())],
      });
      return "marked";
    } catch (error) {
      if (error instanceof TanaNodeGoneError) return "gone";
      throw error;
    }
  }

  /**
   * Gone: not there at all, or missing from the listing (trashed) although written long
   * enough ago for the search index to show it.
   */
  async isGone(remoteId: string): Promise<boolean> {
    if ((await (this.local as TanaLocalClient).readNode(remoteId)) === null) return true;
    return this.liveIds !== null && !this.liveIds.has(remoteId) && !this.recent(remoteId);
  }

  /**
   * Whether a node the queue names may be written or trashed (Local API): `ours` when the
   * listing of engram's supertags shows it, `gone` when it is not there or not listed although
   * written long enough ago (trashed, or never engram's: either way it is not touched). The
   * queue comes from the state folder, which a branch may have restored, so a node the listing
   * cannot vouch for yet (the listing failed, or the node is too recent for the index) is not
   * written unless it bears the name engram gives the item (`name`): otherwise the call fails
   * as unavailable and the next run asks again.
   */
  private async ownNode(remoteId: string, name?: string): Promise<"ours" | "gone"> {
    if (this.liveIds?.has(remoteId) === true) return "ours";
    const node = await (this.local as TanaLocalClient).readNode(remoteId);
    if (node === null) return "gone";
    if (this.liveIds !== null && !this.recent(remoteId)) return "gone";
    if (name !== undefined && node.name === name) return "ours";
    throw new SyncTargetError(
      `tana: node ${remoteId} is not listed among engram's nodes (${this.liveIds === null ? "the listing failed" : "written moments ago"}): not written until a listing shows it`,
      "unavailable",
    );
  }

  /** Written less than the settle time ago: the search index may not show it yet. */
  private recent(remoteId: string): boolean {
    const at = this.options.syncedAt?.get(remoteId);
    if (at === undefined) return false;
    const settle = (this.options.settleSeconds ?? DEFAULT_SETTLE_SECONDS) * 1000;
    const age = Date.parse(this.options.clock()) - Date.parse(at);
    // A time ahead of the clock is no reason to wait: the mapping may come from a branch.
    return age >= 0 && age < settle;
  }

  private requireSchema(): TanaSchemaIds {
    if (this.schema === null) {
      throw new SyncTargetError(
        "no Tana supertags recorded: run director sync init --target tana",
        "schema",
      );
    }
    return this.schema;
  }

  private parent(): string {
    return this.options.config.target_node_id;
  }

  /** Links made, and skipped: no such node, more than one, the lookup failed. */
  get links() {
    return this.linker.counts;
  }

  /** The entities left unlinked this run, one line per entity and reason. */
  linkNotes(): string[] {
    return this.linker.notes();
  }

  /** One Input API call for the group, then the overflowing content of any node, in parts. */
  private async create(items: readonly OutgoingItem[]): Promise<BatchOutcome[]> {
    const plans = items.map((i) => this.planned.get(i.key) as PlannedNode);
    const made = await createNodes(this.input, this.parts, this.parent(), items, plans);
    for (const id of made.created) this.liveIds?.add(id);
    return made.outcomes;
  }

  /** Updates a node in place (Local API) or annotates it (Input API); a node gone is created again. */
  private async update(item: OutgoingItem, remoteId: string): Promise<BatchOutcome> {
    const plan = this.planned.get(item.key) as PlannedNode;
    try {
      if (this.local !== null && this.localUp) {
        if ((await this.ownNode(remoteId, plan.node.name)) === "gone") {
          throw new TanaNodeGoneError("node gone", remoteId);
        }
        const contentAttr = this.requireSchema().fields[tagKind(item)].content;
        await writeInPlace(this.local, this.parts, item, plan.node, remoteId, contentAttr);
      } else {
        const contentAttr = this.requireSchema().fields[tagKind(item)].content;
        const rendered = this.rendered.get(item.key) as TanaNode;
        await annotate(this.input, this.parts, this.limits, item, rendered, remoteId, contentAttr);
      }
      return { key: item.key, ok: true, remoteId };
    } catch (error) {
      if (!(error instanceof TanaNodeGoneError)) {
        return { key: item.key, ok: false, error: asTargetError(error) };
      }
      this.recreated.push(item.key);
      this.notes.push(`${item.key}: its Tana node ${remoteId} is gone; created again`);
      const [outcome] = await this.create([item]);
      return outcome as BatchOutcome;
    }
  }
}
