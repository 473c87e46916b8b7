import { NOW, newId, notFound, plainText, richTextOut, validation } from "./fake-notion-shapes.js";

/** Limits the fake enforces, as Notion documents them. */
export const FAKE_LIMITS = { text: 2000, elements: 100, children: 100, payload: 500 * 1024 };

interface DataSource {
  id: string;
  database_id: string;
  title: string;
  properties: Record<string, string>;
}
interface Page {
  id: string;
  data_source_id: string;
  properties: Record<string, unknown>;
  children: string[];
  /** When queries start to see the page, on the server's clock (eventual visibility). */
  visible_at: number;
  /** In the trash: still retrievable by id, left out of queries, refused any edit but a restore. */
  in_trash: boolean;
  created_time: string;
  last_edited_time: string;
}
interface Block {
  id: string;
  parent: string;
  body: Record<string, unknown>;
}

/** Checks every rich-text array in a value: at most 100 elements of at most 2000 characters. */
export function checkRichText(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    const texts = value.filter((v) => v && typeof v === "object" && "text" in (v as object));
    if (texts.length > 0 && value.length > FAKE_LIMITS.elements) {
      throw validation(
        `${path}.length should be ≤ \`${FAKE_LIMITS.elements}\`, instead was \`${value.length}\`.`,
      );
    }
    for (const [i, v] of value.entries()) checkRichText(v, `${path}[${i}]`);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const record = value as Record<string, unknown>;
  const text = record.text as { content?: unknown } | undefined;
  if (text && typeof text.content === "string" && text.content.length > FAKE_LIMITS.text) {
    throw validation(
      `${path}.text.content.length should be ≤ \`${FAKE_LIMITS.text}\`, instead was \`${text.content.length}\`.`,
    );
  }
  for (const [k, v] of Object.entries(record)) checkRichText(v, `${path}.${k}`);
}

/** Databases, data sources, pages and blocks, kept in memory, in Notion's shapes. */
export class FakeNotionStore {
  readonly dataSources = new Map<string, DataSource>();
  readonly databases = new Map<
    string,
    { id: string; title: string; parent: string; sources: string[] }
  >();
  readonly pages = new Map<string, Page>();
  readonly blocks = new Map<string, Block>();
  /** Page creations per sync_key, to prove that nothing is created twice. */
  readonly createdKeys = new Map<string, number>();
  /** The server's clock and when a page created at a moment shows up in queries. */
  now: () => number = () => Date.now();
  visibleAt: (created: number) => number = (created) => created;

  createDatabase(body: Record<string, unknown>): unknown {
    const parent = body.parent as { page_id?: string } | undefined;
    if (!parent?.page_id) throw validation("body.parent.page_id should be defined.");
    const initial = (body.initial_data_source as { properties?: Record<string, unknown> }) ?? {};
    const properties: Record<string, string> = {};
    for (const [name, def] of Object.entries(initial.properties ?? {})) {
      properties[name] = Object.keys(def as object)[0] ?? "rich_text";
    }
    if (!Object.values(properties).includes("title")) {
      throw validation("Title property is required.");
    }
    const id = newId();
    const source = newId();
    const title = plainText(body.title);
    this.databases.set(id, { id, title, parent: parent.page_id, sources: [source] });
    this.dataSources.set(source, { id: source, database_id: id, title, properties });
    return this.databaseObject(id);
  }

  databaseObject(id: string): unknown {
    const db = this.databases.get(id);
    if (!db) throw notFound("database", id);
    return {
      object: "database",
      id,
      title: richTextOut([{ text: { content: db.title } }]),
      parent: { type: "page_id", page_id: db.parent },
      data_sources: db.sources.map((s) => ({ id: s, name: db.title })),
      created_time: NOW,
      last_edited_time: NOW,
      in_trash: false,
      is_inline: false,
    };
  }

  dataSourceObject(id: string): unknown {
    const ds = this.dataSource(id);
    const properties: Record<string, unknown> = {};
    for (const [name, type] of Object.entries(ds.properties)) {
      properties[name] = { id: name.slice(0, 4), name, type, [type]: {} };
    }
    return {
      object: "data_source",
      id,
      parent: { type: "database_id", database_id: ds.database_id },
      title: richTextOut([{ text: { content: ds.title } }]),
      properties,
      created_time: NOW,
      last_edited_time: NOW,
    };
  }

  dataSource(id: string): DataSource {
    const ds = this.dataSources.get(id);
    if (!ds) throw notFound("data source", id);
    return ds;
  }

  updateDataSource(id: string, body: Record<string, unknown>): unknown {
    const ds = this.dataSource(id);
    for (const [name, def] of Object.entries((body.properties as Record<string, unknown>) ?? {})) {
      if (def === null) delete ds.properties[name];
      else ds.properties[name] = Object.keys(def as object)[0] ?? "rich_text";
    }
    return this.dataSourceObject(id);
  }

  /** Every property must exist in the data source, with the value shape of its type. */
  private checkProperties(ds: DataSource, properties: Record<string, unknown>): void {
    for (const [name, value] of Object.entries(properties)) {
      const type = ds.properties[name];
      if (type === undefined) throw validation(`${name} is not a property that exists.`);
      if (!value || typeof value !== "object" || !(type in (value as object))) {
        throw validation(`${name} is expected to be ${type}.`);
      }
    }
  }

  createPage(body: Record<string, unknown>): unknown {
    const parent = body.parent as { data_source_id?: string } | undefined;
    if (!parent?.data_source_id) throw validation("body.parent.data_source_id should be defined.");
    const ds = this.dataSource(parent.data_source_id);
    const properties = (body.properties as Record<string, unknown>) ?? {};
    this.checkProperties(ds, properties);
    const children = (body.children as unknown[]) ?? [];
    if (children.length > FAKE_LIMITS.children) {
      throw validation(
        `body.children.length should be ≤ \`100\`, instead was \`${children.length}\`.`,
      );
    }
    const id = newId();
    const page: Page = {
      id,
      data_source_id: ds.id,
      properties,
      children: [],
      visible_at: this.visibleAt(this.now()),
      in_trash: false,
      created_time: NOW,
      last_edited_time: NOW,
    };
    this.pages.set(id, page);
    this.addChildren(id, children);
    const key = plainText((properties.sync_key as { rich_text?: unknown })?.rich_text);
    if (key !== "") this.createdKeys.set(key, (this.createdKeys.get(key) ?? 0) + 1);
    return this.pageObject(id);
  }

  page(id: string): Page {
    const page = this.pages.get(id);
    if (!page) throw notFound("page", id);
    return page;
  }

  pageObject(id: string): unknown {
    const page = this.page(id);
    const ds = this.dataSource(page.data_source_id);
    const properties: Record<string, unknown> = {};
    for (const [name, type] of Object.entries(ds.properties)) {
      const value = (page.properties[name] as Record<string, unknown> | undefined)?.[type];
      const shaped =
        type === "title" || type === "rich_text" ? richTextOut(value ?? []) : (value ?? null);
      properties[name] = { id: name.slice(0, 4), type, [type]: shaped };
    }
    return {
      object: "page",
      id,
      parent: { type: "data_source_id", data_source_id: ds.id, database_id: ds.database_id },
      properties,
      created_time: page.created_time,
      last_edited_time: page.last_edited_time,
      in_trash: page.in_trash,
      archived: page.in_trash,
      url: `https://www.notion.so/${id.replace(/-/g, "")}`,
    };
  }

  updatePage(id: string, body: Record<string, unknown>): unknown {
    const page = this.page(id);
    // `archived` is the deprecated name of `in_trash`; Notion takes either.
    const trash = body.in_trash ?? body.archived;
    if (page.in_trash && trash !== false) {
      throw validation(
        "Can't edit page that is archived. You must unarchive the page before editing.",
      );
    }
    if (typeof trash === "boolean") page.in_trash = trash;
    const properties = (body.properties as Record<string, unknown>) ?? {};
    this.checkProperties(this.dataSource(page.data_source_id), properties);
    page.properties = { ...page.properties, ...properties };
    return this.pageObject(id);
  }

  addChildren(parent: string, children: unknown[]): unknown[] {
    if (children.length > FAKE_LIMITS.children) {
      throw validation(
        `body.children.length should be ≤ \`100\`, instead was \`${children.length}\`.`,
      );
    }
    const page = this.page(parent);
    if (page.in_trash) {
      throw validation(
        "Can't edit block that is archived. You must unarchive the block before editing.",
      );
    }
    const out: unknown[] = [];
    for (const child of children) {
      const id = newId();
      this.blocks.set(id, { id, parent, body: child as Record<string, unknown> });
      page.children.push(id);
      out.push(this.blockObject(id));
    }
    return out;
  }

  blockObject(id: string): unknown {
    const block = this.blocks.get(id);
    if (!block) throw notFound("block", id);
    const type = String(block.body.type ?? "paragraph");
    const inner = block.body[type] as { rich_text?: unknown } | undefined;
    return {
      object: "block",
      id,
      parent: { type: "page_id", page_id: block.parent },
      type,
      [type]: { ...inner, rich_text: richTextOut(inner?.rich_text ?? []), color: "default" },
      has_children: false,
      in_trash: false,
      created_time: NOW,
      last_edited_time: NOW,
    };
  }

  deleteBlock(id: string): unknown {
    const block = this.blocks.get(id);
    if (!block) throw notFound("block", id);
    const out = { ...(this.blockObject(id) as object), in_trash: true, archived: true };
    this.blocks.delete(id);
    const page = this.pages.get(block.parent);
    if (page) page.children = page.children.filter((c) => c !== id);
    return out;
  }

  /**
   * Supports the filters the target uses: `equals` and `contains` on text properties,
   * `contains` on a multi-select, and `or` / `and` compounds (text matches case-insensitive,
   * as Notion's).
   */
  query(dataSourceId: string, body: Record<string, unknown>): unknown[] {
    this.dataSource(dataSourceId);
    const filter = body.filter as Filter | undefined;
    const now = this.now();
    return [...this.pages.values()]
      .filter((p) => p.data_source_id === dataSourceId && p.visible_at <= now && !p.in_trash)
      .filter((p) => filter === undefined || matches(p.properties, filter))
      .map((p) => this.pageObject(p.id));
  }

  /** Pages of one data source with their content as text, for assertions. */
  pagesOf(title: string): {
    id: string;
    key: string;
    properties: Record<string, unknown>;
    content: string;
    in_trash: boolean;
  }[] {
    const ds = [...this.dataSources.values()].find((d) => d.title === title);
    if (!ds) return [];
    return [...this.pages.values()]
      .filter((p) => p.data_source_id === ds.id)
      .map((p) => ({
        id: p.id,
        key: plainText((p.properties.sync_key as { rich_text?: unknown })?.rich_text),
        properties: p.properties,
        in_trash: p.in_trash,
        content: p.children
          .map((c) =>
            plainText(
              (this.blocks.get(c)?.body.paragraph as { rich_text?: unknown } | undefined)
                ?.rich_text,
            ),
          )
          .join("\n\n"),
      }));
  }
}

interface Filter {
  or?: Filter[];
  and?: Filter[];
  property?: string;
  title?: { equals?: string; contains?: string };
  rich_text?: { equals?: string; contains?: string };
  multi_select?: { contains?: string };
}

function matches(properties: Record<string, unknown>, filter: Filter): boolean {
  if (filter.or) return filter.or.some((f) => matches(properties, f));
  if (filter.and) return filter.and.every((f) => matches(properties, f));
  if (!filter.property) return true;
  const value = properties[filter.property] as
    | { title?: unknown; rich_text?: unknown; multi_select?: { name: string }[] }
    | undefined;
  if (filter.multi_select) {
    const wanted = filter.multi_select.contains ?? "";
    return (value?.multi_select ?? []).some((o) => o.name === wanted);
  }
  const condition = filter.title ?? filter.rich_text;
  const text = plainText(value?.title ?? value?.rich_text);
  if (condition?.equals !== undefined) return text === condition.equals;
  if (condition?.contains !== undefined) {
    return text.toLowerCase().includes(condition.contains.toLowerCase());
  }
  return true;
}
