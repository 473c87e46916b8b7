import type { SyncValue } from "./item.js";
import type { OutgoingItem } from "./outgoing.js";

/**
 * Tana Input API payloads (tanainc/tana-input-api-samples `types.ts`), built as plain data:
 * the learning and proposal supertags, their nodes, and the calls that carry them within
 * Tana's limits (100 nodes and 5000 characters a call). Pure: no I/O, no clock.
 */
export type TanaValue =
  | { name: string }
  | { dataType: "date"; name: string }
  | { dataType: "reference"; id: string }
  | { dataType: "boolean"; value: boolean };

export interface TanaField {
  type: "field";
  attributeId: string;
  children: TanaValue[];
}

export interface TanaNode {
  name: string;
  description?: string;
  supertags?: { id: string }[];
  children?: (TanaNode | TanaField)[];
}

export interface TanaCallBody {
  targetNodeId?: string;
  nodes: TanaNode[];
}

/** The Input API's system supertags: a supertag definition and a field definition. */
export const SYS_SUPERTAG = "SYS_T01";
export const SYS_FIELD = "SYS_T02";

export type TanaFieldKind = "plain" | "number" | "date" | "options" | "instance";

/** Every field of the two supertags (shared by name: Tana fields are workspace-wide). */
export const TANA_FIELDS = {
  type: { kind: "options", about: "pattern, insight or self_knowledge" },
  content: { kind: "plain", about: "The learning's full text" },
  confidence: { kind: "number", about: "0 to 10" },
  source: { kind: "plain", about: "Where engram read it" },
  confirmedAt: { kind: "date", about: "When it was confirmed" },
  seedEntryId: { kind: "plain", about: "The learning's id in engram (maps back to memory)" },
  relatedPeople: { kind: "instance", about: "People the learning is about" },
  relatedProjects: { kind: "instance", about: "Projects the learning is about" },
  status: { kind: "options", about: "pending, accepted or rejected" },
  extractedFrom: { kind: "plain", about: "What proposed it" },
  decidedAt: { kind: "date", about: "When the proposal was decided" },
  archivedAt: { kind: "date", about: "When the learning left memory" },
} as const satisfies Record<string, { kind: TanaFieldKind; about: string }>;
export type TanaFieldName = keyof typeof TANA_FIELDS;

/** The seed's fields of each supertag, plus `archivedAt` (set when memory drops a learning). */
export const TAG_FIELDS = {
  learning: [
    "type",
    "content",
    "confidence",
    "source",
    "confirmedAt",
    "seedEntryId",
    "relatedPeople",
    "relatedProjects",
    "archivedAt",
  ],
  proposal: ["status", "confidence", "extractedFrom", "decidedAt", "content", "archivedAt"],
} as const satisfies Record<"learning" | "proposal", readonly TanaFieldName[]>;

/** The ids `sync init` creates and records: the two supertags and every field. */
export type TanaTagKind = keyof typeof TAG_FIELDS;

export interface TanaSchemaIds {
  tags: Record<TanaTagKind, string>;
  /** Field ids per tag: the same ids when engram created both, a tag's own when it was found. */
  fields: Record<TanaTagKind, Partial<Record<TanaFieldName, string>>>;
}

/** The field definitions, created first under SCHEMA (their ids go into the tags). */
export function fieldDefinitions(
  names: readonly TanaFieldName[] = Object.keys(TANA_FIELDS) as TanaFieldName[],
): TanaCallBody {
  return {
    targetNodeId: "SCHEMA",
    nodes: names.map((name) => ({
      name,
      description: `engram: ${TANA_FIELDS[name].about}`,
      supertags: [{ id: SYS_FIELD }],
    })),
  };
}

const ABOUT_TAG: Record<TanaTagKind, string> = {
  learning: "A learning of engram's shared memory",
  proposal: "A learning proposed to engram's shared memory, under review",
};

/** The supertags with their fields (an empty default value each, as Tana's sample does). */
export function tagDefinitions(
  names: Record<TanaTagKind, string>,
  fields: Record<TanaFieldName, string>,
  kinds: readonly TanaTagKind[] = ["learning", "proposal"],
): TanaCallBody {
  const tag = (kind: TanaTagKind, about: string): TanaNode => ({
    name: names[kind],
    description: about,
    supertags: [{ id: SYS_SUPERTAG }],
    children: TAG_FIELDS[kind].map((f) => ({
      type: "field",
      attributeId: fields[f],
      children: [{ name: "" }],
    })),
  });
  return {
    targetNodeId: "SCHEMA",
    nodes: kinds.map((kind) => tag(kind, ABOUT_TAG[kind])),
  };
}

/** The description every synced node carries: how a listing finds the key and content again. */
export function nodeDescription(key: string, contentHash: string): string {
  return `engram ${key} ${contentHash}`;
}

/** The key and content hash of a node written by engram, or null for any other node. */
export function parseDescription(
  description: string | undefined,
): { key: string; hash: string } | null {
  const m = /^engram ((?:learning|proposal):[A-Za-z0-9_-]+) (sha256:[0-9a-f]{64})$/.exec(
    description ?? "",
  );
  return m ? { key: m[1] as string, hash: m[2] as string } : null;
}

/** Tana node ids for the item's people and projects, as resolved by the target. */
export interface TanaLinks {
  people: string[];
  projects: string[];
}

const text = (v: SyncValue | undefined): string | null =>
  typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null;

/** Confidence on the seed's scale (0 to 10) from engram's (0 to 1). */
function confidenceOnTen(v: SyncValue | undefined): string | null {
  return typeof v === "number" ? String(Math.round(v * 100) / 10) : null;
}

/** The field values of an item, in its supertag's field order; absent values are left out. */
export function fieldValues(item: OutgoingItem, links: TanaLinks): [TanaFieldName, TanaValue[]][] {
  const f = item.fields;
  const plain = (v: string | null): TanaValue[] => (v === null ? [] : [{ name: v }]);
  const date = (v: string | null): TanaValue[] =>
    v === null ? [] : [{ dataType: "date", name: v }];
  const refs = (ids: readonly string[]): TanaValue[] =>
    ids.map((id) => ({ dataType: "reference", id }));
  const values: Record<TanaFieldName, TanaValue[]> = {
    type: plain(text(f.type)),
    content: plain(item.content === "" ? null : item.content),
    confidence: plain(confidenceOnTen(f.confidence)),
    source: plain(text(f.source)),
    confirmedAt: date(text(f.confirmed_at)),
    seedEntryId: plain(item.local_id),
    relatedPeople: refs(links.people),
    relatedProjects: refs(links.projects),
    status: plain(text(f.status)),
    extractedFrom: plain(text(f.extracted_from)),
    decidedAt: date(text(f.decided_at)),
    archivedAt: [],
  };
  return TAG_FIELDS[tagKind(item)]
    .map((name): [TanaFieldName, TanaValue[]] => [name, values[name]])
    .filter(([, v]) => v.length > 0);
}

export function tagKind(item: Pick<OutgoingItem, "type">): TanaTagKind {
  return item.type === "proposal" ? "proposal" : "learning";
}

/** The node of a learning or proposal: its supertag, its key in the description, its fields. */
export function renderNode(item: OutgoingItem, ids: TanaSchemaIds, links: TanaLinks): TanaNode {
  const kind = tagKind(item);
  const fields = ids.fields[kind];
  return {
    name: item.title === "" ? item.local_id : item.title,
    description: nodeDescription(item.key, item.content_hash),
    supertags: [{ id: ids.tags[kind] }],
    children: fieldValues(item, links).flatMap(([name, children]): TanaField[] => {
      const attributeId = fields[name];
      return attributeId === undefined ? [] : [{ type: "field", attributeId, children }];
    }),
  };
}

/**
 * What the Input API can add to a node it did not just create: a child. An update of an
 * existing node (when the Local API does not run) is a child carrying the new field values.
 */
export function annotationNode(item: OutgoingItem, node: TanaNode): TanaNode {
  return {
    name: `engram update ${item.content_hash.slice(7, 19)}`,
    description: `Replaces the field values above: ${nodeDescription(item.key, item.content_hash)}`,
    ...(node.children ? { children: node.children } : {}),
  };
}

/** The child that marks a node archived (its learning left memory) through the Input API. */
export function archiveNode(archivedAt: string | undefined, at: string): TanaNode {
  return {
    name: "archived by engram: no longer in memory",
    ...(archivedAt !== undefined
      ? {
          children: [
            { type: "field", attributeId: archivedAt, children: [{ dataType: "date", name: at }] },
          ],
        }
      : {}),
  };
}

export interface TanaLimits {
  max_nodes: number;
  max_chars: number;
}

/**
 * The nodes a call creates, counted with care: every node, field and value of the tree (a
 * field is a node in Tana, and so is each value), so a count Tana makes differently can only be
 * lower.
 */
export function nodeCount(nodes: readonly (TanaNode | TanaField | TanaValue)[]): number {
  let n = 0;
  for (const node of nodes) {
    n++;
    const children = (node as { children?: (TanaNode | TanaField | TanaValue)[] }).children;
    if (children) n += nodeCount(children);
  }
  return n;
}

/** Characters of a request body as sent (its JSON). */
export function bodyChars(body: TanaCallBody): number {
  return JSON.stringify(body).length;
}

/** A node to create, with the content parts that did not fit in its call (sent as children). */
export interface PlannedNode {
  key: string;
  node: TanaNode;
  overflow: string[];
}

/** Splits text into parts whose JSON string is at most `maxJson` characters, on code points. */
export function splitForJson(text: string, maxJson: number): string[] {
  const parts: string[] = [];
  let part = "";
  let size = 2; // the quotes
  for (const ch of text) {
    const cost = JSON.stringify(ch).length - 2;
    if (size + cost > maxJson && part !== "") {
      parts.push(part);
      part = "";
      size = 2;
    }
    part += ch;
    size += cost;
  }
  if (part !== "" || parts.length === 0) parts.push(part);
  return parts;
}

/**
 * The child that carries one overflowing part of a node's content. Its description says which
 * part of how many, and of which content (its hash), so that a reader and a reconciler can
 * tell a missing, a repeated or an outdated part.
 */
export function overflowNode(
  part: string,
  index: number,
  total: number,
  contentHash?: string,
): TanaNode {
  const of = contentHash === undefined ? "" : ` (${contentHash})`;
  return { name: part, description: `content, part ${index} of ${total}${of}` };
}

/** Which part of how many, and of which content, a child is; null for any other child. */
export function parsePart(
  description: string | undefined,
): { index: number; total: number; hash: string | null } | null {
  const m = /^content, part (\d{1,6}) of (\d{1,6})(?: \((sha256:[0-9a-f]{64})\))?$/.exec(
    description ?? "",
  );
  return m ? { index: Number(m[1]), total: Number(m[2]), hash: m[3] ?? null } : null;
}

/** Room for a part in a follow-up call: the limit less the call's own characters. */
export function overflowRoom(limits: TanaLimits, nodeId: string): number {
  const empty = bodyChars({
    targetNodeId: nodeId,
    nodes: [overflowNode("", 999_999, 999_999, `sha256:${"0".repeat(64)}`)],
  });
  return limits.max_chars - empty - 8;
}

/**
 * Fits one node into a call alone: when its body is over the character limit, its content
 * field keeps what fits and the rest becomes parts sent to the node once it exists.
 */
export function fitNode(
  key: string,
  node: TanaNode,
  contentAttr: string,
  targetNodeId: string,
  limits: TanaLimits,
): PlannedNode {
  if (nodeCount([node]) > limits.max_nodes) {
    throw new RangeError(`${key}: ${nodeCount([node])} nodes, over ${limits.max_nodes} a call`);
  }
  if (bodyChars({ targetNodeId, nodes: [node] }) <= limits.max_chars) {
    return { key, node, overflow: [] };
  }
  const fields = (node.children ?? []) as TanaField[];
  const content = fields.find((c) => c.type === "field" && c.attributeId === contentAttr);
  const full = (content?.children[0] as { name?: string } | undefined)?.name ?? "";
  const without: TanaNode = {
    ...node,
    children: fields.map((c) => (c === content ? { ...c, children: [{ name: "" }] } : c)),
  };
  const room = limits.max_chars - bodyChars({ targetNodeId, nodes: [without] }) - 8;
  if (content === undefined || room < 100) {
    throw new RangeError(
      `${key}: the node is over ${limits.max_chars} characters without its content`,
    );
  }
  const [head = "", ...rest] = splitForJson(full, room);
  const tail = rest.join("");
  const parts = tail === "" ? [] : splitForJson(tail, overflowRoom(limits, "x".repeat(16)));
  return {
    key,
    node: {
      ...node,
      children: fields.map((c) => (c === content ? { ...c, children: [{ name: head }] } : c)),
    },
    overflow: parts,
  };
}

/**
 * Groups nodes into calls, in order: a call takes nodes while it stays within both limits.
 * Every node given fits in a call alone (see `fitNode`).
 */
export function planCalls(
  planned: readonly PlannedNode[],
  targetNodeId: string,
  limits: TanaLimits,
): PlannedNode[][] {
  const calls: PlannedNode[][] = [];
  let current: PlannedNode[] = [];
  let chars = bodyChars({ targetNodeId, nodes: [] });
  let count = 0;
  for (const p of planned) {
    const nodes = nodeCount([p.node]);
    const size = JSON.stringify(p.node).length;
    // One more node in a call costs its JSON and a comma.
    const over = chars + size + 1 > limits.max_chars || count + nodes > limits.max_nodes;
    if (current.length > 0 && over) {
      calls.push(current);
      current = [];
      chars = bodyChars({ targetNodeId, nodes: [] });
      count = 0;
    }
    chars += size + (current.length > 0 ? 1 : 0);
    count += nodes;
    current.push(p);
  }
  if (current.length > 0) calls.push(current);
  return calls;
}
