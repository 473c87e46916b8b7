import type { SyncType } from "../../core/sync/policy.js";
import { TITLE } from "./notion-schema.js";

/*
 * What the Notion target reads of the pages it finds: their shapes in the API's answers, and
 * what hybrid recall shows of a page found by a search.
 */

/** What an update reads of a page: where it is, and the body hash it holds. */
export interface NotionPageState {
  id: string;
  /** In Notion's trash (`archived` is the deprecated name of the same state). */
  in_trash?: boolean;
  archived?: boolean;
  parent?: { database_id?: string; data_source_id?: string };
  properties?: Record<
    string,
    { rich_text?: { plain_text?: string; text?: { content: string } }[] }
  >;
}

export interface NotionPage {
  id: string;
  url?: string;
  properties?: Record<
    string,
    {
      type?: string;
      title?: { plain_text?: string }[];
      rich_text?: { plain_text?: string }[];
      multi_select?: { name: string }[];
      checkbox?: boolean;
    }
  >;
}

/** A page found by `search`, with what recall shows of it. */
export interface NotionFound {
  type: SyncType;
  page_id: string;
  url: string | null;
  title: string;
  tags: string[];
  sync_key: string | null;
  local_id: string | null;
  encrypted: boolean;
}

export function foundPage(type: SyncType, page: NotionPage): NotionFound {
  const p = page.properties ?? {};
  const text = (name: string) =>
    (p[name]?.title ?? p[name]?.rich_text ?? []).map((t) => t.plain_text ?? "").join("");
  const orNull = (value: string) => (value === "" ? null : value);
  return {
    type,
    page_id: page.id,
    url: page.url ?? null,
    title: text(TITLE),
    tags: (p.tags?.multi_select ?? []).map((t) => t.name),
    sync_key: orNull(text("sync_key")),
    local_id: orNull(text("local_id")),
    encrypted: p.encrypted?.checkbox === true,
  };
}

/** A Notion id as a plain lower-case hex string: ids are written with and without dashes. */
export function plainId(id: string): string {
  return id.replaceAll("-", "").toLowerCase();
}
