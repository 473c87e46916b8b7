import { Client } from "@notionhq/client";
import { sha256Hex } from "../../core/model/canonical.js";
import type { SyncValue } from "../../core/sync/item.js";
import { isRemovedItem } from "../../core/sync/markdown.js";
import type { OutgoingItem } from "../../core/sync/outgoing.js";
import { type MemorySyncType, SYNC_TYPES, type SyncType } from "../../core/sync/policy.js";
import type { NotionSyncConfig } from "../../schema/config.js";
import { notFound, wrap } from "./notion-errors.js";
import {
  foundPage,
  type NotionFound,
  type NotionPage,
  type NotionPageState,
  plainId,
} from "./notion-pages.js";
import {
  blockBatches,
  contentBlocks,
  DATABASES,
  propertyDefinitions,
  propertyValue,
  richText,
  TITLE,
} from "./notion-schema.js";
import {
  type SchemaReport,
  type SyncTarget,
  SyncTargetError,
  type TargetHealth,
} from "./target.js";
import { ThrottledFetch } from "./throttle.js";

export type { NotionFound } from "./notion-pages.js";

export const NOTION_VERSION = "2025-09-03";

/** Where each item type lives: the database and its (single) data source. */
export type NotionIds = Partial<Record<SyncType, { database_id: string; data_source_id?: string }>>;

export interface NotionTargetOptions {
  config: NotionSyncConfig;
  token: string;
  /** Ids recorded by `sync init`; the config's database ids win. */
  recorded: NotionIds;
  fetch?: typeof fetch;
  /** Retries of a 429 by the client (default 2); hybrid recall, which someone waits on, asks none. */
  retries?: number;
}

/** Notion API 2025-09-03 through the official client: one database per item type. */
export class NotionTarget implements SyncTarget {
  readonly name = "notion";
  readonly throttle: ThrottledFetch;
  private readonly client: Client;
  private readonly ids: NotionIds;
  private readonly warnings: string[] = [];
  /** Types whose database the config names or this run made: no need to check its parent. */
  private readonly vouched = new Set<SyncType>();

  constructor(private readonly options: NotionTargetOptions) {
    this.throttle = new ThrottledFetch(options.config.requests_per_second, options.fetch ?? fetch);
    this.client = new Client({
      auth: options.token,
      baseUrl: options.config.base_url,
      notionVersion: NOTION_VERSION,
      timeoutMs: Math.round(options.config.timeout_seconds * 1000),
      retry: {
        maxRetries: options.retries ?? 2,
        initialRetryDelayMs: 500,
        maxRetryDelayMs: 60_000,
      },
      fetch: this.throttle.fetch as never,
    });
    this.ids = { ...options.recorded };
    for (const type of SYNC_TYPES) {
      const configured = options.config.databases[databaseKey(type)];
      if (configured !== undefined && configured !== this.ids[type]?.database_id) {
        this.ids[type] = { database_id: configured };
      }
      if (configured !== undefined) this.vouched.add(type);
    }
  }

  /** The ids in use, for the record in the state folder. */
  recordedIds(): NotionIds {
    return { ...this.ids };
  }

  async health(): Promise<TargetHealth> {
    const started = Date.now();
    const schema: TargetHealth["schema"] = {};
    if (this.options.token === "") {
      return {
        healthy: false,
        error: "auth",
        message: `no token: set the environment variable ${this.options.config.token_env}`,
        latency_ms: 0,
        rate_limit: null,
        schema,
      };
    }
    const report = (error: TargetHealth["error"], message: string | null): TargetHealth => ({
      healthy: error === null,
      error,
      message,
      latency_ms: Date.now() - started,
      rate_limit:
        this.throttle.rate.limit === null && this.throttle.rate.remaining === null
          ? null
          : this.throttle.rate,
      schema,
    });
    try {
      await this.client.users.me({});
    } catch (error) {
      const e = wrap(error);
      return report(e.kind, e.message);
    }
    const problems: string[] = [];
    for (const type of SYNC_TYPES) {
      try {
        const state = await this.checkSchema(type);
        schema[type] = state.problem ?? "ok";
        if (state.problem) problems.push(`${DATABASES[type].title}: ${state.problem}`);
      } catch (error) {
        const e = wrap(error);
        if (e.kind !== "schema") return report(e.kind, e.message);
        schema[type] = e.message;
        problems.push(`${DATABASES[type].title}: ${e.message}`);
      }
    }
    return problems.length > 0 ? report("schema", problems.join("; ")) : report(null, null);
  }

  async ensureSchema(): Promise<SchemaReport> {
    const parent = this.options.config.parent_page_id;
    const created: SyncType[] = [];
    const validated: SyncType[] = [];
    for (const type of SYNC_TYPES) {
      const spec = DATABASES[type];
      if (this.ids[type] === undefined) {
        if (parent === undefined) {
          throw new SyncTargetError(
            "[sync.notion] parent_page_id is not set: the databases need a parent page",
            "validation",
          );
        }
        const db = (await this.call(() =>
          this.client.databases.create({
            parent: { type: "page_id", page_id: parent },
            title: richText(spec.title),
            initial_data_source: { properties: propertyDefinitions(spec.properties) as never },
          }),
        )) as { id: string; data_sources?: { id: string }[] };
        const source = db.data_sources?.[0]?.id;
        this.ids[type] = { database_id: db.id, ...(source ? { data_source_id: source } : {}) };
        this.vouched.add(type);
        created.push(type);
        continue;
      }
      const state = await this.checkSchema(type).catch((error) => {
        throw wrap(error);
      });
      if (state.missing.length > 0) {
        // Repairs what a person removed or renamed: the missing properties are added back.
        const properties: Record<string, Record<string, unknown>> = {};
        for (const name of state.missing) {
          properties[name] = { [spec.properties[name] as string]: {} };
        }
        await this.call(() =>
          this.client.dataSources.update({
            data_source_id: state.dataSource,
            properties: properties as never,
          }),
        );
      }
      validated.push(type);
    }
    const ids: SchemaReport["ids"] = {};
    for (const type of SYNC_TYPES) {
      const id = this.ids[type]?.database_id;
      if (id !== undefined) ids[type] = id;
    }
    return { created, validated, ids };
  }

  async upsert(item: OutgoingItem, remoteId: string | null): Promise<string> {
    // A replaced item: its page leaves; nothing stands for it any more (src/core/sync/withdraw.ts).
    if (isRemovedItem(item.fields)) return this.withdraw(item, remoteId);
    const dataSource = await this.dataSource(item.type);
    const properties = this.properties(item);
    const blocks = contentBlocks(item.content);
    const bodyHash = `sha256:${sha256Hex(item.content)}`;
    (properties as Record<string, unknown>).body_hash = propertyValue("rich_text", bodyHash);
    // "": the item's page was withdrawn to the trash, where it cannot be edited: a new one.
    const own =
      remoteId === null || remoteId === "" ? null : await this.ownPage(item, remoteId, dataSource);
    if (own === null) {
      const batches = blockBatches(blocks);
      const page = (await this.call(() =>
        this.client.pages.create({
          parent: { type: "data_source_id", data_source_id: dataSource },
          properties: properties as never,
          ...(batches[0] ? { children: batches[0] as never } : {}),
        }),
      )) as { id: string };
      await this.append(page.id, batches.slice(1));
      return page.id;
    }
    await this.call(() =>
      this.client.pages.update({ page_id: own.id, properties: properties as never }),
    );
    const previous = (own.properties?.body_hash?.rich_text ?? [])
      .map((t) => t.plain_text ?? t.text?.content ?? "")
      .join("");
    if (previous !== bodyHash) {
      await this.clearChildren(own.id);
      await this.append(own.id, blockBatches(blocks));
    }
    return own.id;
  }

  /**
   * Moves the item's page to Notion's trash (`in_trash: true`; the client marks `archived`
   * deprecated), once: a page already in the trash, or gone, is left as it is, so a send
   * repeated after a crash changes nothing. Only a page of this item type's database is
   * trashed (`ownPage`), never one a restored state folder names elsewhere. Returns "": no
   * page stands for the item any more.
   */
  private async withdraw(item: OutgoingItem, remoteId: string | null): Promise<string> {
    const dataSource = await this.dataSource(item.type);
    let page: NotionPageState | null;
    try {
      page =
        remoteId === null || remoteId === ""
          ? await this.pageOfKey(item)
          : await this.ownPage(item, remoteId, dataSource);
    } catch (error) {
      // Deleted for good (or no longer shared with the integration): nothing left to trash.
      if (notFound(error)) return "";
      throw error;
    }
    if (page === null || page.in_trash === true || page.archived === true) return "";
    const id = page.id;
    await this.call(() => this.client.pages.update({ page_id: id, in_trash: true }));
    return "";
  }

  /** The page a data source query finds by the item's key (pages in the trash are not listed). */
  private async pageOfKey(item: OutgoingItem): Promise<NotionPageState | null> {
    const found = await this.findByKey(item.type, item.key);
    return found === null ? null : { id: found };
  }

  takeWarnings(): string[] {
    return this.warnings.splice(0);
  }

  /**
   * The page to update: `remoteId` when it is in this item type's database. The id comes from
   * the state folder, which a branch may have restored, so a page elsewhere (another project's
   * database) is never written: the item's own page is looked up by its sync key instead
   * (null: none, create it), and the run says so.
   */
  private async ownPage(
    item: OutgoingItem,
    remoteId: string,
    dataSource: string,
  ): Promise<NotionPageState | null> {
    const page = (await this.call(() =>
      this.client.pages.retrieve({ page_id: remoteId }),
    )) as NotionPageState;
    const database = this.ids[item.type]?.database_id;
    const own = [database, dataSource].filter((id) => id !== undefined).map(plainId);
    const parents = [page.parent?.database_id, page.parent?.data_source_id]
      .filter((id): id is string => typeof id === "string")
      .map(plainId);
    if (parents.some((id) => own.includes(id))) return { ...page, id: remoteId };
    const where = page.parent?.database_id ?? page.parent?.data_source_id ?? "no database";
    this.warnings.push(
      `${item.key}: the sync queue names Notion page ${remoteId}, which is in ${where}, not in this project's ${DATABASES[memoryType(item.type)].title} database ${database ?? "(none)"}: that page was not written (was the state folder restored from another branch?); the item went to its own page`,
    );
    const found = await this.findByKey(item.type, item.key);
    if (found === null) return null;
    return {
      ...((await this.call(() => this.client.pages.retrieve({ page_id: found }))) as object),
      id: found,
    };
  }

  async findByKey(type: SyncType, key: string): Promise<string | null> {
    const dataSource = await this.dataSource(type);
    const result = (await this.call(() =>
      this.client.dataSources.query({
        data_source_id: dataSource,
        filter: { property: "sync_key", rich_text: { equals: key } },
        page_size: 1,
      }),
    )) as { results: { id: string }[] };
    return result.results[0]?.id ?? null;
  }

  /**
   * Hybrid recall: the pages of the knowledge databases whose title (or a tag) holds a word
   * of the query, one filtered query per database. Notion's text filters are
   * case-insensitive substring matches; the caller ranks them by whole words.
   */
  async search(words: readonly string[], limit: number): Promise<NotionFound[]> {
    if (words.length === 0) return [];
    const found: NotionFound[] = [];
    for (const type of SEARCHED) {
      if (this.ids[type] === undefined) continue;
      const dataSource = await this.dataSource(type);
      const spec = DATABASES[type].properties;
      const filters = words
        .slice(0, MAX_SEARCH_WORDS)
        .flatMap((word) => [
          { property: TITLE, title: { contains: word } },
          ...(spec.tags === "multi_select"
            ? [{ property: "tags", multi_select: { contains: word } }]
            : []),
        ]);
      const result = (await this.call(() =>
        this.client.dataSources.query({
          data_source_id: dataSource,
          filter: { or: filters } as never,
          page_size: Math.min(limit, 100),
        }),
      )) as { results: NotionPage[] };
      for (const page of result.results) found.push(foundPage(type, page));
    }
    return found;
  }

  private properties(item: OutgoingItem): Record<string, unknown> {
    const spec = DATABASES[memoryType(item.type)].properties;
    const values: Record<string, SyncValue> = {
      ...item.fields,
      [TITLE]: item.title,
      sync_key: item.key,
      content_hash: item.content_hash,
      encrypted: item.encrypted,
    };
    const out: Record<string, unknown> = {};
    for (const [name, type] of Object.entries(spec)) {
      const value = values[name];
      if (value === undefined) continue;
      const shaped = propertyValue(type, value);
      if (shaped !== undefined) out[name] = shaped;
    }
    return out;
  }

  private async append(
    pageId: string,
    batches: readonly Record<string, unknown>[][],
  ): Promise<void> {
    for (const children of batches) {
      await this.call(() =>
        this.client.blocks.children.append({ block_id: pageId, children: children as never }),
      );
    }
  }

  private async clearChildren(pageId: string): Promise<void> {
    let cursor: string | undefined;
    const ids: string[] = [];
    do {
      const page = (await this.call(() =>
        this.client.blocks.children.list({
          block_id: pageId,
          page_size: 100,
          ...(cursor ? { start_cursor: cursor } : {}),
        }),
      )) as { results: { id: string }[]; next_cursor: string | null; has_more: boolean };
      ids.push(...page.results.map((b) => b.id));
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
    for (const id of ids) await this.call(() => this.client.blocks.delete({ block_id: id }));
  }

  private async dataSource(type: SyncType): Promise<string> {
    const ids = this.ids[type];
    if (ids === undefined) {
      throw new SyncTargetError(
        `no ${DATABASES[memoryType(type)].title} database: run director sync init --target notion`,
        "schema",
      );
    }
    if (ids.data_source_id !== undefined && this.vouched.has(type)) return ids.data_source_id;
    const db = (await this.call(() =>
      this.client.databases.retrieve({ database_id: ids.database_id }),
    )) as { parent?: { page_id?: string }; data_sources?: { id: string }[] };
    if (!this.vouched.has(type)) this.vouch(type, db);
    const source = ids.data_source_id ?? db.data_sources?.[0]?.id;
    if (source === undefined) {
      throw new SyncTargetError(`database ${ids.database_id} has no data source`, "schema");
    }
    this.ids[type] = { ...ids, data_source_id: source };
    return source;
  }

  /**
   * A database id recorded in the state folder (which a branch may have restored) is used only
   * when the database is a child of the config's `parent_page_id`, and its recorded data
   * source is the database's: another project's database is never written.
   */
  private vouch(
    type: SyncType,
    db: { parent?: { page_id?: string }; data_sources?: { id: string }[] },
  ): void {
    const ids = this.ids[type] as { database_id: string; data_source_id?: string };
    const parent = this.options.config.parent_page_id;
    const sources = (db.data_sources ?? []).map((d) => plainId(d.id));
    const underParent =
      parent !== undefined && plainId(db.parent?.page_id ?? "") === plainId(parent);
    const ownSource =
      ids.data_source_id === undefined || sources.includes(plainId(ids.data_source_id));
    if (!underParent || !ownSource) {
      throw new SyncTargetError(
        `the state folder's sync/notion/databases.json names database ${ids.database_id} for ${DATABASES[memoryType(type)].title}, which is not ${underParent ? "the database of its recorded data source" : `a child of [sync.notion] parent_page_id (${parent ?? "not set"})`}: not used (was the state folder restored from another branch?); remove that file and run director sync init --target notion, or name the database in [sync.notion] databases`,
        "schema",
      );
    }
    this.vouched.add(type);
  }

  private async checkSchema(
    type: SyncType,
  ): Promise<{ dataSource: string; missing: string[]; problem: string | null }> {
    const dataSource = await this.dataSource(type);
    const ds = (await this.call(() =>
      this.client.dataSources.retrieve({ data_source_id: dataSource }),
    )) as { properties?: Record<string, { type?: string }> };
    const missing: string[] = [];
    const wrong: string[] = [];
    for (const [name, kind] of Object.entries(DATABASES[memoryType(type)].properties)) {
      const found = ds.properties?.[name];
      if (found === undefined) missing.push(name);
      else if (found.type !== kind) wrong.push(`${name} is ${found.type}, expected ${kind}`);
    }
    const problems = [...(missing.length > 0 ? [`missing ${missing.join(", ")}`] : []), ...wrong];
    return { dataSource, missing, problem: problems.length > 0 ? problems.join("; ") : null };
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw wrap(error);
    }
  }
}

/** The databases hybrid recall searches: memory versions hold no knowledge of their own. */
const SEARCHED: readonly MemorySyncType[] = ["episode", "insight", "pattern"];
/** Words of a query sent as filters (two each): Notion allows 100 filters in a compound. */
const MAX_SEARCH_WORDS = 16;

/** Notion holds memory's own collections; learning-graph nodes go to Tana. */
function memoryType(type: SyncType): MemorySyncType {
  if ((SYNC_TYPES as readonly string[]).includes(type)) return type as MemorySyncType;
  throw new SyncTargetError(`Notion has no database for ${type} items`, "validation");
}

function databaseKey(type: SyncType): keyof NotionSyncConfig["databases"] {
  return type === "evolution" ? "evolution" : (`${type}s` as "episodes" | "insights" | "patterns");
}
