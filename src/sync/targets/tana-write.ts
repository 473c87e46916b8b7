import type { OutgoingItem } from "../../core/sync/outgoing.js";
import {
  annotationNode,
  fitNode,
  nodeDescription,
  type PlannedNode,
  type TanaLimits,
  type TanaNode,
} from "../../core/sync/tana-nodes.js";
import type { TanaCreated, TanaInputClient } from "./tana-input-client.js";
import type { TanaLocalClient } from "./tana-local-client.js";
import {
  type PartsEntry,
  type PartsJournal,
  partsEntry,
  sendMissingParts,
  trashStrays,
} from "./tana-parts.js";
import { type BatchOutcome, SyncTargetError } from "./target.js";

/**
 * A node updated in place through the Local API: name, description and each field, the
 * content whole (the Local API has no 5000-character limit). Then the parts posted beside it
 * (by a create cut short, or before this update) and the Input API's annotations are
 * trashed: they would say the content twice.
 */
export async function writeInPlace(
  local: TanaLocalClient,
  parts: PartsJournal,
  item: OutgoingItem,
  node: TanaNode,
  remoteId: string,
  contentAttr: string | undefined,
): Promise<void> {
  await local.updateNode(remoteId, {
    name: node.name,
    description: nodeDescription(item.key, item.content_hash),
  });
  for (const field of node.children ?? []) {
    if (!("attributeId" in field)) continue;
    // References in Tana Paste form; options by name.
    const content =
      field.attributeId === contentAttr
        ? item.content
        : field.children
            .map((v) => ("id" in v ? `[[^${v.id}]]` : "name" in v ? v.name : String(v.value)))
            .join(", ");
    await local.setFieldContent(remoteId, field.attributeId, content);
  }
  await trashStrays(local, remoteId);
  parts.forget(item.key);
}

/** The journal's parts are of this node and this content (bounds ascending, to its end). */
function fitsContent(known: PartsEntry, remoteId: string, item: OutgoingItem): boolean {
  const b = known.bounds;
  const ascending = b.every((v, i) => i === 0 || v >= (b[i - 1] as number));
  return (
    known.node === remoteId &&
    known.hash === item.content_hash &&
    ascending &&
    b[b.length - 1] === item.content.length
  );
}

/**
 * An update through the Input API alone. When the node already holds this content, or the
 * start of it (a run cut short between its parts), exactly the missing parts are posted.
 * Otherwise a child annotation carries the new field values (`rendered`: the node with its
 * whole content), its content in parts of its own when it is long.
 */
export async function annotate(
  input: TanaInputClient,
  parts: PartsJournal,
  limits: TanaLimits,
  item: OutgoingItem,
  rendered: TanaNode,
  remoteId: string,
  contentAttr: string | undefined,
): Promise<void> {
  const known = parts.get(item.key);
  if (known !== undefined && fitsContent(known, remoteId, item)) {
    await sendMissingParts(input, parts, item.key, item.content);
    return;
  }
  const fitted = fitNode(
    item.key,
    annotationNode(item, rendered),
    contentAttr ?? "",
    remoteId,
    limits,
  );
  // Journalled as it leaves: a second annotation after a lost answer would say it all twice.
  const entry = partsEntry(remoteId, null, item.content_hash, item.content, fitted.overflow);
  let made: TanaCreated | undefined;
  try {
    [made] = await input.post({ targetNodeId: remoteId, nodes: [fitted.node] }, () =>
      parts.set(item.key, entry),
    );
  } catch (error) {
    const kind = (error as SyncTargetError).kind;
    if (kind === "rate_limited" || kind === "validation") parts.forget(item.key);
    throw error;
  }
  if (made === undefined) {
    throw new SyncTargetError(`${item.key}: Tana answered no annotation node`, "unavailable");
  }
  parts.set(item.key, { ...entry, parent: made.nodeId });
  await sendMissingParts(input, parts, item.key, item.content);
}

/**
 * Nodes created by one Input API call for a group of planned nodes, then the overflowing
 * content of any node sent in parts (journalled first, so a run killed between the parts
 * sends only the missing ones). `created`: the ids of the nodes Tana made.
 */
export async function createNodes(
  input: TanaInputClient,
  parts: PartsJournal,
  parent: string,
  items: readonly OutgoingItem[],
  plans: readonly PlannedNode[],
): Promise<{ outcomes: BatchOutcome[]; created: string[] }> {
  const answered = await input.post({ targetNodeId: parent, nodes: plans.map((p) => p.node) });
  const outcomes: BatchOutcome[] = [];
  const created: string[] = [];
  for (const [i, plan] of plans.entries()) {
    const nodeId = answered[i]?.nodeId;
    if (nodeId === undefined) {
      outcomes.push({
        key: plan.key,
        ok: false,
        error: new SyncTargetError(
          `Tana answered ${answered.length} nodes for ${plans.length}`,
          "unavailable",
        ),
      });
      continue;
    }
    created.push(nodeId);
    const item = items[i] as OutgoingItem;
    try {
      if (plan.overflow.length > 0) {
        const entry = partsEntry(nodeId, nodeId, item.content_hash, item.content, plan.overflow);
        parts.set(plan.key, entry);
        await sendMissingParts(input, parts, plan.key, item.content);
      }
    } catch (error) {
      // The node exists, its content is not whole: looked up by its key, then updated.
      outcomes.push({ key: plan.key, ok: false, error: asUnknown(error) });
      continue;
    }
    outcomes.push({ key: plan.key, ok: true, remoteId: nodeId });
  }
  return { outcomes, created };
}

/** A failure as a sync target error (an unknown one: the target is unavailable). */
export function asTargetError(error: unknown): SyncTargetError {
  return error instanceof SyncTargetError
    ? error
    : new SyncTargetError((error as Error).message, "unavailable", undefined, { cause: error });
}

/** A failure after the node was made: its outcome counts as unknown (looked up first). */
function asUnknown(error: unknown): SyncTargetError {
  const e = asTargetError(error);
  return e.kind === "unavailable"
    ? e
    : new SyncTargetError(e.message, "unavailable", undefined, { cause: e });
}
