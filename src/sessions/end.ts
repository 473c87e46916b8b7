import type { Delivery } from "../bus/delivery.js";
import type { BusUrl } from "../bus/url.js";
import { receiptTime } from "../clock.js";
import type { RepoContext } from "../context/repo-context.js";
import type { SessionItem } from "../core/versions/items.js";
import { StateError } from "../errors.js";
import type { Envelope, SessionEndPayload } from "../schema/envelope.js";
import { deliver, type SenderIdentity } from "../worker/emit.js";
import { buildEnvelope, workerId } from "../worker/envelope.js";
import { endSessionWith, type SessionHeader, sessionsDir } from "./store.js";

export interface EndResult extends Delivery {
  session_id: string;
  parent_version: number;
  parent_catalog_hash: string;
  parent_commit: string | null;
  ended_at: string;
  items: number;
  /** Envelopes the buffer took to stay within `agent_bus.max_message_bytes`: one delivery. */
  parts: number;
  event_ids: string[];
}

const MESSAGE = "session_end.v1";

/**
 * The event id of a part: derived from the session, so a second delivery of the same end
 * (a retry after a crash, a spool drained twice) is a duplicate at the Director.
 */
export function sessionPartEventId(sessionId: string, part: number): string {
  return `session_end-${sessionId}-${part}`;
}

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * Cuts the items into parts whose envelopes each fit in `maxBytes`, in order. An item too
 * large for any envelope is refused, naming it: nothing is sent.
 */
export function splitItems(
  header: SessionHeader,
  items: readonly SessionItem[],
  maxBytes: number,
  envelopeBytes: number,
): SessionItem[][] {
  const parts: SessionItem[][] = [[]];
  let used = envelopeBytes;
  for (const item of items) {
    // A comma between items, at most.
    const size = bytes(item) + 1;
    if (envelopeBytes + size > maxBytes) {
      throw new StateError(
        `session ${header.session_id}: item #${item.seq} (${item.kind}) is ${size} bytes, too large for one message within agent_bus.max_message_bytes = ${maxBytes}; discard the session or raise the limit`,
      );
    }
    const current = parts.at(-1) as SessionItem[];
    if (used + size > maxBytes && current.length > 0) {
      parts.push([item]);
      used = envelopeBytes + size;
    } else {
      current.push(item);
      used += size;
    }
  }
  return parts;
}

/**
 * Ends a session: its whole buffer goes to the Director as one delivery (one spool file, one
 * hub send, one NATS publish batch, one ref commit), with the version it started from. The
 * session is marked ended once the delivery is durable (there or in the spool); writing to
 * it afterwards, or ending it again, is refused.
 */
export async function endSession(
  ctx: RepoContext,
  sessionId: string,
  sender: SenderIdentity,
  bus: BusUrl,
): Promise<EndResult> {
  const maxBytes = ctx.config.agent_bus.max_message_bytes;
  return endSessionWith(sessionsDir(ctx.paths.root), sessionId, async ({ header, items }) => {
    const endedAt = receiptTime();
    const from = {
      id: workerId(sender.worker),
      run_id: sender.runId ?? process.env.GITHUB_RUN_ID,
    };
    const sentAt = new Date().toISOString();
    const payloadOf = (part: number, parts: number, slice: readonly SessionItem[]) =>
      ({
        session_id: header.session_id,
        name: header.name,
        parent_version: header.parent_version,
        parent_catalog_hash: header.parent_catalog_hash,
        parent_commit: header.parent_commit,
        ended_at: endedAt,
        part,
        parts,
        item_count: items.length,
        items: slice as SessionEndPayload["items"],
      }) satisfies SessionEndPayload;
    // The envelope without items, with room for large part numbers: what every part carries.
    const bare = await buildEnvelope(MESSAGE, payloadOf(99_999, 99_999, []), from, sentAt, 99_999);
    const overhead =
      bytes({ ...bare, event_id: sessionPartEventId(header.session_id, 99_999) }) + 16;
    const slices = splitItems(header, items, maxBytes, overhead);
    const envelopes: Envelope[] = await Promise.all(
      slices.map(async (slice, i) => ({
        ...(await buildEnvelope(MESSAGE, payloadOf(i + 1, slices.length, slice), from, sentAt, i)),
        event_id: sessionPartEventId(header.session_id, i + 1),
      })),
    );
    const delivery = await deliver(ctx, envelopes, bus);
    const result: EndResult = {
      session_id: header.session_id,
      parent_version: header.parent_version,
      parent_catalog_hash: header.parent_catalog_hash,
      parent_commit: header.parent_commit,
      ended_at: endedAt,
      items: items.length,
      parts: envelopes.length,
      event_ids: envelopes.map((e) => e.event_id as string),
      ...delivery,
    };
    return {
      result,
      marker: {
        ended_at: endedAt,
        parts: envelopes.length,
        items: items.length,
        transport: delivery.transport,
        spooled: delivery.spooled,
      },
    };
  });
}
