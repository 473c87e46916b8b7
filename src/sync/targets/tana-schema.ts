import type { MappingEntry } from "../../core/sync/queue.js";
import {
  bodyChars,
  fieldDefinitions,
  nodeCount,
  planCalls,
  TAG_FIELDS,
  TANA_FIELDS,
  type TanaCallBody,
  type TanaFieldName,
  type TanaLimits,
  type TanaSchemaIds,
  type TanaTagKind,
  tagDefinitions,
} from "../../core/sync/tana-nodes.js";
import type { TanaCreated, TanaInputClient } from "./tana-input-client.js";
import type { TanaLocalClient } from "./tana-local-client.js";
import { SyncTargetError } from "./target.js";

/** Mapping keys of the schema ids, beside the items' keys in the queue's id mapping. */
export const SCHEMA_PREFIX = "tana-schema:";
const tagKey = (kind: TanaTagKind) => `${SCHEMA_PREFIX}tag:${kind}`;
const fieldKey = (kind: TanaTagKind, name: TanaFieldName) =>
  `${SCHEMA_PREFIX}field:${kind}:${name}`;

const KINDS: readonly TanaTagKind[] = ["learning", "proposal"];

/**
 * The schema ids recorded in the mapping for these tag names, or null when any is missing or
 * was recorded for another name (the config changed: the tags are created again).
 */
export function schemaFromMapping(
  mapping: Readonly<Record<string, MappingEntry>>,
  names: Record<TanaTagKind, string>,
): TanaSchemaIds | null {
  const ids: TanaSchemaIds = {
    tags: { learning: "", proposal: "" },
    fields: { learning: {}, proposal: {} },
  };
  for (const kind of KINDS) {
    const tag = mapping[tagKey(kind)];
    if (tag === undefined || tag.content_hash !== `name:${names[kind]}`) return null;
    ids.tags[kind] = tag.remote_id;
    for (const name of TAG_FIELDS[kind]) {
      const field = mapping[fieldKey(kind, name)];
      if (field !== undefined) ids.fields[kind][name] = field.remote_id;
    }
  }
  return ids;
}

/** The mapping entries that record the schema ids. */
export function schemaMapping(
  ids: TanaSchemaIds,
  names: Record<TanaTagKind, string>,
  at: string,
): Record<string, MappingEntry> {
  const out: Record<string, MappingEntry> = {};
  for (const kind of KINDS) {
    out[tagKey(kind)] = {
      remote_id: ids.tags[kind],
      content_hash: `name:${names[kind]}`,
      synced_at: at,
    };
    for (const [name, id] of Object.entries(ids.fields[kind])) {
      out[fieldKey(kind, name as TanaFieldName)] = {
        remote_id: id,
        content_hash: `field:${name}`,
        synced_at: at,
      };
    }
  }
  return out;
}

/**
 * The schema nodes an init made so far, recorded as each call is answered (`tana-schema:made:`
 * keys): an init stopped between its calls (a failure, a kill) is run again on them instead of
 * leaving the first calls' fields and tags in the workspace and making them twice.
 */
export interface SchemaProgress {
  fields: Partial<Record<TanaFieldName, string>>;
  tags: Partial<Record<TanaTagKind, string>>;
}

const madeFieldKey = (name: TanaFieldName) => `${SCHEMA_PREFIX}made:field:${name}`;
const madeTagKey = (kind: TanaTagKind) => `${SCHEMA_PREFIX}made:tag:${kind}`;

/** What an earlier init made, from the mapping (a tag only under the name it was made for). */
export function schemaProgressFromMapping(
  mapping: Readonly<Record<string, MappingEntry>>,
  names: Record<TanaTagKind, string>,
): SchemaProgress {
  const progress: SchemaProgress = { fields: {}, tags: {} };
  for (const name of Object.keys(TANA_FIELDS) as TanaFieldName[]) {
    const made = mapping[madeFieldKey(name)];
    if (made?.content_hash === `field:${name}`) progress.fields[name] = made.remote_id;
  }
  for (const kind of KINDS) {
    const made = mapping[madeTagKey(kind)];
    if (made?.content_hash === `name:${names[kind]}`) progress.tags[kind] = made.remote_id;
  }
  return progress;
}

/** The mapping entries that record an init's progress. */
export function schemaProgressMapping(
  progress: SchemaProgress,
  names: Record<TanaTagKind, string>,
  at: string,
): Record<string, MappingEntry> {
  const out: Record<string, MappingEntry> = {};
  for (const [name, id] of Object.entries(progress.fields)) {
    out[madeFieldKey(name as TanaFieldName)] = {
      remote_id: id,
      content_hash: `field:${name}`,
      synced_at: at,
    };
  }
  for (const [kind, id] of Object.entries(progress.tags)) {
    out[madeTagKey(kind as TanaTagKind)] = {
      remote_id: id,
      content_hash: `name:${names[kind as TanaTagKind]}`,
      synced_at: at,
    };
  }
  return out;
}

/**
 * The entries that record a finished init: its schema ids, and its progress marked used (a
 * later init, after a tag was deleted in Tana, starts afresh rather than from nodes of this one).
 */
export function schemaRecord(
  ids: TanaSchemaIds,
  names: Record<TanaTagKind, string>,
  at: string,
  mapping: Readonly<Record<string, MappingEntry>>,
): Record<string, MappingEntry> {
  const out = schemaMapping(ids, names, at);
  for (const [key, entry] of Object.entries(mapping)) {
    if (key.startsWith(`${SCHEMA_PREFIX}made:`) && entry.content_hash !== "used") {
      out[key] = { ...entry, content_hash: "used", synced_at: at };
    }
  }
  return out;
}

export interface SchemaOutcome {
  ids: TanaSchemaIds;
  created: TanaTagKind[];
  /** Tags that already existed under the name (found through the Local API) and were adopted. */
  adopted: TanaTagKind[];
}

/**
 * Creates what is missing: with the Local API, a tag already named so is adopted and given the
 * seed's fields; otherwise the fields are created under SCHEMA, then the tags with those fields,
 * each in as few calls as `max_nodes_per_call` and `max_chars_per_call` allow.
 */
export async function createSchema(
  input: TanaInputClient,
  local: { client: TanaLocalClient; workspace: string } | null,
  names: Record<TanaTagKind, string>,
  limits: TanaLimits,
  made: { progress: SchemaProgress; record: (progress: SchemaProgress) => void } = {
    progress: { fields: {}, tags: {} },
    record: () => {},
  },
): Promise<SchemaOutcome> {
  const existing: Partial<Record<TanaTagKind, string>> = {};
  if (local !== null) {
    const tags = await local.client.listTags(local.workspace);
    for (const kind of KINDS) {
      const found = tags.find((t) => t.name === names[kind]);
      if (found !== undefined) existing[kind] = found.id;
    }
  }
  const ids: TanaSchemaIds = {
    tags: { learning: "", proposal: "" },
    fields: { learning: {}, proposal: {} },
  };
  const created: TanaTagKind[] = [];
  const adopted: TanaTagKind[] = [];
  const missing = KINDS.filter((k) => existing[k] === undefined);
  if (missing.length > 0) {
    // Every tag must fit a call with its fields (ids of the longest form) before any is made.
    const widest = Object.fromEntries(
      Object.keys(TANA_FIELDS).map((n) => [n, "x".repeat(16)]),
    ) as Record<TanaFieldName, string>;
    schemaCalls(tagDefinitions(names, widest, missing), limits);
    const progress: SchemaProgress = {
      fields: { ...made.progress.fields },
      tags: { ...made.progress.tags },
    };
    const allFields = Object.keys(TANA_FIELDS) as TanaFieldName[];
    const newFields = allFields.filter((n) => progress.fields[n] === undefined);
    // Each call's nodes are recorded once it is answered, before the next call.
    await postWithin(input, fieldDefinitions(newFields), limits, (nodes, from) => {
      for (const [i, node] of nodes.entries()) {
        progress.fields[newFields[from + i] as TanaFieldName] = node.nodeId;
      }
      made.record(progress);
    });
    const fieldIds = progress.fields as Record<TanaFieldName, string>;
    const newTags = missing.filter((k) => progress.tags[k] === undefined);
    await postWithin(input, tagDefinitions(names, fieldIds, newTags), limits, (nodes, from) => {
      for (const [i, node] of nodes.entries()) {
        progress.tags[newTags[from + i] as TanaTagKind] = node.nodeId;
      }
      made.record(progress);
    });
    for (const kind of missing) {
      const id = progress.tags[kind];
      if (id === undefined)
        throw new SyncTargetError(`Tana did not create tag ${names[kind]}`, "schema");
      ids.tags[kind] = id;
      for (const name of TAG_FIELDS[kind]) ids.fields[kind][name] = fieldIds[name];
      created.push(kind);
    }
  }
  for (const kind of KINDS) {
    const id = existing[kind];
    if (id === undefined || local === null) continue;
    ids.tags[kind] = id;
    for (const name of TAG_FIELDS[kind]) {
      ids.fields[kind][name] = await local.client.addField(id, name, TANA_FIELDS[name].kind);
    }
    adopted.push(kind);
  }
  return { ids, created, adopted };
}

/**
 * The nodes of a schema call in calls within the limits, in order. A supertag goes with all
 * its fields in one call (that is how the Input API gives a tag its fields): one over the
 * limits alone is refused, before anything is created, with the setting that lets it through.
 */
function schemaCalls(body: TanaCallBody, limits: TanaLimits): TanaCallBody[] {
  const target = body.targetNodeId ?? "SCHEMA";
  const planned = body.nodes.map((node, i) => ({ key: String(i), node, overflow: [] }));
  return planCalls(planned, target, limits).map((call) => {
    const nodes = call.map((p) => p.node);
    const count = nodeCount(nodes);
    const chars = bodyChars({ targetNodeId: target, nodes });
    if (count > limits.max_nodes || chars > limits.max_chars) {
      throw new SyncTargetError(
        `Tana schema node "${nodes[0]?.name}" needs ${count} nodes and ${chars} characters in one call, over [sync.tana] max_nodes_per_call = ${limits.max_nodes} or max_chars_per_call = ${limits.max_chars}: raise them to at least ${count} and ${chars}`,
        "schema",
      );
    }
    return { targetNodeId: target, nodes };
  });
}

/**
 * Sends a schema call in as many calls as the limits need, handing each call's created nodes
 * (and the index of its first node in `body`) to `answered` before the next call.
 */
async function postWithin(
  input: TanaInputClient,
  body: TanaCallBody,
  limits: TanaLimits,
  answered: (nodes: TanaCreated[], from: number) => void,
): Promise<void> {
  if (body.nodes.length === 0) return;
  let from = 0;
  for (const call of schemaCalls(body, limits)) {
    const created = await input.post(call);
    if (created.length !== call.nodes.length) {
      throw new SyncTargetError(
        `Tana created ${created.length} of ${call.nodes.length} schema nodes in one call`,
        "schema",
      );
    }
    answered(created, from);
    from += call.nodes.length;
  }
}
