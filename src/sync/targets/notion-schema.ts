import type { SyncValue } from "../../core/sync/item.js";
import type { MemorySyncType } from "../../core/sync/policy.js";

/** The Notion property types the four databases use. */
export type NotionPropertyType =
  | "title"
  | "rich_text"
  | "number"
  | "select"
  | "multi_select"
  | "date"
  | "checkbox";

/** The title property of every database. */
export const TITLE = "Name";

const KEYS = {
  sync_key: "rich_text",
  content_hash: "rich_text",
  body_hash: "rich_text",
  encrypted: "checkbox",
} as const;

const COMMON = {
  [TITLE]: "title",
  project: "rich_text",
  local_id: "rich_text",
  privacy: "select",
  shareable: "checkbox",
  ...KEYS,
} as const;

/** Database titles and properties, one database per item type (the seed's sync operations). */
export const DATABASES: Record<
  MemorySyncType,
  { title: string; properties: Record<string, NotionPropertyType> }
> = {
  episode: {
    title: "Episodes",
    properties: {
      ...COMMON,
      type: "select",
      kind: "select",
      confidence: "number",
      surprise_score: "number",
      outcome: "select",
      timestamp: "date",
      tags: "multi_select",
      sender: "rich_text",
    },
  },
  insight: {
    title: "Insights",
    properties: {
      ...COMMON,
      type: "select",
      confidence: "number",
      evidence_count: "number",
      status: "select",
      discovered: "date",
      last_validated: "date",
      actionable: "checkbox",
      tags: "multi_select",
    },
  },
  pattern: {
    title: "Patterns",
    properties: {
      ...COMMON,
      pattern_type: "select",
      frequency: "number",
      first_seen: "date",
      last_seen: "date",
      confidence: "number",
      context: "rich_text",
    },
  },
  evolution: {
    title: "Evolution",
    properties: {
      ...COMMON,
      generation: "number",
      status: "select",
      engrams: "number",
      st_files: "number",
      st_bytes: "number",
      lt_files: "number",
      lt_bytes: "number",
      catalog_hash: "rich_text",
      timestamp: "date",
    },
  },
};

/** Notion's limits (developers.notion.com, "Request limits"). */
export const LIMITS = {
  text_chars: 2000,
  rich_text_elements: 100,
  children_per_request: 100,
  payload_bytes: 500 * 1024,
  select_chars: 100,
  multi_select_options: 100,
} as const;

type RichText = { type: "text"; text: { content: string } };

/** Text as rich-text elements of at most 2000 characters each: chunked, never truncated. */
export function richText(text: string): RichText[] {
  const out: RichText[] = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += LIMITS.text_chars) {
    out.push({ type: "text", text: { content: chars.slice(i, i + LIMITS.text_chars).join("") } });
  }
  return out;
}

/** The property definitions for creating a database (or adding what a schema lacks). */
export function propertyDefinitions(
  properties: Record<string, NotionPropertyType>,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, type] of Object.entries(properties)) out[name] = { [type]: {} };
  return out;
}

/** A select option name: Notion refuses commas and names over 100 characters. */
const optionName = (value: string) =>
  Array.from(value.replace(/,/g, " ")).slice(0, LIMITS.select_chars).join("") || "-";

/** One property value in Notion's shape; `undefined` when the value has none. */
export function propertyValue(type: NotionPropertyType, value: SyncValue): unknown {
  if (value === null) return undefined;
  switch (type) {
    case "title":
    case "rich_text": {
      const elements = richText(Array.isArray(value) ? value.join(", ") : String(value));
      // A property holds at most 100 elements (200,000 characters); longer values belong in
      // the page content, which has no such cap.
      return { [type]: elements.slice(0, LIMITS.rich_text_elements) };
    }
    case "number":
      return typeof value === "number" ? { number: value } : undefined;
    case "checkbox":
      return { checkbox: value === true };
    case "select":
      return { select: { name: optionName(String(value)) } };
    case "multi_select": {
      const names = (Array.isArray(value) ? value : [String(value)]).map(optionName);
      return {
        multi_select: [...new Set(names)]
          .slice(0, LIMITS.multi_select_options)
          .map((name) => ({ name })),
      };
    }
    case "date":
      return { date: { start: String(value) } };
  }
}

/** The content as paragraph blocks, each paragraph at most 100 rich-text elements. */
export function contentBlocks(content: string): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  for (const paragraph of content.split(/\n{2,}/)) {
    if (paragraph.trim() === "") continue;
    const elements = richText(paragraph);
    for (let i = 0; i < elements.length; i += LIMITS.rich_text_elements) {
      blocks.push({
        object: "block",
        type: "paragraph",
        paragraph: { rich_text: elements.slice(i, i + LIMITS.rich_text_elements) },
      });
    }
  }
  return blocks;
}

/**
 * Splits blocks into requests of at most 100 children whose JSON stays under the payload
 * limit (with room for the rest of the request).
 */
export function blockBatches(
  blocks: readonly Record<string, unknown>[],
  budget = LIMITS.payload_bytes - 64 * 1024,
): Record<string, unknown>[][] {
  const batches: Record<string, unknown>[][] = [];
  let current: Record<string, unknown>[] = [];
  let bytes = 0;
  for (const block of blocks) {
    const size = Buffer.byteLength(JSON.stringify(block), "utf8") + 1;
    if (
      current.length > 0 &&
      (current.length >= LIMITS.children_per_request || bytes + size > budget)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(block);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
