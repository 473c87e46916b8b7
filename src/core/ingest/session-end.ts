import type { Sealed } from "../../schema/common.js";
import type { SessionEndItem, SessionEndPayload } from "../../schema/envelope.js";
import { wellFormedValue } from "../model/fields.js";
import { type Redactor, redactValue } from "./redact.js";
import { sealText } from "./seal.js";

/**
 * One part of an ended session as the Director keeps it: every free text redacted again
 * (the worker did already; other writers may not have), sensitive text sealed (or dropped
 * without a seal key), never stored in clear.
 */
export function normalizeSessionPart(
  payload: SessionEndPayload,
  clean: (text: string) => string,
  redactor: Redactor,
  sealKey: Uint8Array | undefined,
): { session: SessionEndPayload; redactions: number } {
  let redactions = 0;
  const items = payload.items.map((raw): SessionEndItem => {
    const item: SessionEndItem = { ...raw };
    if (item.text !== undefined) item.text = clean(item.text);
    if (item.rationale !== undefined) item.rationale = clean(item.rationale);
    if (item.value !== undefined) {
      // Well formed first: a `\ud800` escape in a writer's JSON must not reach a document.
      const redacted = redactValue(wellFormedValue(item.value), redactor);
      item.value = redacted.value;
      redactions += redacted.count;
    }
    if (item.privacy === "sensitive" && (item.text !== undefined || item.rationale !== undefined)) {
      const sealed: Sealed[] = [...(item.sealed ?? [])];
      if (sealKey !== undefined) {
        if (item.text !== undefined) sealed.push(sealText(sealKey, "text", item.text));
        if (item.rationale !== undefined) {
          sealed.push(sealText(sealKey, "rationale", item.rationale));
        }
      }
      delete item.text;
      delete item.rationale;
      if (sealed.length > 0) item.sealed = sealed;
    }
    return item;
  });
  const session: SessionEndPayload = {
    session_id: payload.session_id,
    name: payload.name === undefined || payload.name === null ? null : clean(payload.name),
    parent_version: payload.parent_version,
    parent_catalog_hash: payload.parent_catalog_hash,
    parent_commit: payload.parent_commit ?? null,
    ended_at: payload.ended_at,
    part: payload.part,
    parts: payload.parts,
    item_count: payload.item_count,
    items,
  };
  return { session, redactions };
}
