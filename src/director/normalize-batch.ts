import { normalizeLine, quarantineExcerpt } from "../core/normalize.js";
import type { Redactor } from "../core/redact.js";
import { type SerializedEvent, serializeEvent } from "../state/buffer.js";
import type { QuarantineRecord } from "../state/quarantine.js";

export interface InputLine {
  text: string;
  source: string;
  line: number;
}

export interface BatchSettings {
  receivedAt: string;
  maxMessageBytes: number;
  redactor: Redactor;
  sealKey: Uint8Array | undefined;
}

export type LineOutcome =
  | { ok: true; event: SerializedEvent }
  | { ok: false; record: QuarantineRecord; redactions: number };

/**
 * Normalizes a batch of input lines into serialized events or quarantine records, in input
 * order.
 */
export function normalizeBatch(
  lines: readonly InputLine[],
  settings: BatchSettings,
): LineOutcome[] {
  const { receivedAt, redactor } = settings;
  const out: LineOutcome[] = [];
  for (const input of lines) {
    const result = normalizeLine(input.text, settings);
    if (result.ok) {
      out.push({ ok: true, event: serializeEvent(result.event) });
      continue;
    }
    const excerpt = quarantineExcerpt(input.text, redactor);
    out.push({
      ok: false,
      redactions: result.redactions + excerpt.count,
      record: {
        received_at: receivedAt,
        source: input.source,
        line: input.line,
        reason: result.reason,
        detail: result.detail,
        excerpt: excerpt.text,
        bytes: Buffer.byteLength(input.text, "utf8"),
      },
    });
  }
  return out;
}
