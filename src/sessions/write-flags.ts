import type { SessionItemKind } from "../core/versions/items.js";
import { UsageError } from "../errors.js";

/*
 * Which flags `worker session write` takes for each kind of item, in one table: the command's
 * option specs, its usage lines and the checks of a write all read it, so they cannot drift.
 * No imports but types and the errors module (loaded at start-up anyway): the CLI loads it at
 * start-up.
 */

/** A flag of `worker session write` that carries a field of the item. */
export type WriteFlag =
  | "text"
  | "rationale"
  | "confidence"
  | "outcome"
  | "key"
  | "value"
  | "privacy";

/** What each flag holds: its value's name (help and usage) and what it is for. */
export const WRITE_FLAGS: Record<WriteFlag, { value: string; description: string }> = {
  text: { value: "T", description: "write: what happened or was learned" },
  rationale: { value: "R", description: "write: why (knowledge kinds)" },
  confidence: { value: "X", description: "write: how sure the agent is, 0 to 1" },
  outcome: { value: "O", description: "write (episode): success | partial | failure | abandoned" },
  key: { value: "K", description: "write (state, core): the document key" },
  value: { value: "JSON", description: "write (state, core): its new value" },
  privacy: {
    value: "P",
    description: "write: public | private (default) | sensitive (sealed before it is stored)",
  },
};

export interface KindFlags {
  /** Checked in this order: the first one missing is the error. */
  required: readonly WriteFlag[];
  optional: readonly WriteFlag[];
}

const KNOWLEDGE: KindFlags = {
  required: ["text", "confidence"],
  optional: ["rationale", "privacy"],
};

/** The flags each kind takes; any other flag with that kind is a usage error. */
export const FLAGS_BY_KIND: Record<SessionItemKind, KindFlags> = {
  episode: { required: ["text", "confidence", "outcome"], optional: ["privacy"] },
  fact: KNOWLEDGE,
  lesson: KNOWLEDGE,
  convention: KNOWLEDGE,
  decision: KNOWLEDGE,
  state: { required: ["key", "value"], optional: [] },
  core: { required: ["key", "value", "confidence"], optional: [] },
};

/** The order flags are shown in usage lines. */
const SHOWN: readonly WriteFlag[] = [
  "key",
  "value",
  "text",
  "outcome",
  "confidence",
  "rationale",
  "privacy",
];

/** One usage line per set of kinds that take the same flags, in the table's order. */
export function writeUsageLines(prefix: string): string[] {
  const groups = new Map<KindFlags, SessionItemKind[]>();
  for (const [kind, flags] of Object.entries(FLAGS_BY_KIND) as [SessionItemKind, KindFlags][]) {
    groups.set(flags, [...(groups.get(flags) ?? []), kind]);
  }
  return [...groups].map(([flags, kinds]) => {
    const shown = (list: readonly WriteFlag[], optional: boolean) =>
      SHOWN.filter((f) => list.includes(f)).map((f) => {
        const flag = `--${f} ${WRITE_FLAGS[f].value}`;
        return optional ? `[${flag}]` : flag;
      });
    return [
      `${prefix} --kind ${kinds.join("|")}`,
      ...shown(flags.required, false),
      ...shown(flags.optional, true),
    ].join(" ");
  });
}

/** Longest `--text` or `--rationale` a session item carries (the bus's `SessionEndItem`). */
export const MAX_ITEM_TEXT = 8000;

/**
 * Room an ended session's envelope needs around its items (header, sender, session fields):
 * an item that leaves less could never be sent.
 */
export const SESSION_ENVELOPE_ROOM = 4096;

/**
 * Refuses, at `worker session write`, an item that `worker session end` could not send: a
 * text or rationale over 8000 characters (counted once secrets are redacted, as it is
 * stored), or an item too large for one message. Without it the write succeeded and the whole
 * session could no longer end. Names the flag; says what to do.
 */
export function checkWrittenItem(
  item: { text?: string; rationale?: string; value?: unknown; key?: string },
  maxMessageBytes: number,
): void {
  for (const flag of ["text", "rationale"] as const) {
    const value = item[flag];
    if (value !== undefined && value.length > MAX_ITEM_TEXT) {
      throw new UsageError(
        `--${flag}: ${value.length} characters (secrets redacted), at most ${MAX_ITEM_TEXT}: split it or shorten it`,
      );
    }
  }
  const size = Buffer.byteLength(JSON.stringify(item), "utf8");
  if (size + SESSION_ENVELOPE_ROOM > maxMessageBytes) {
    const flag = item.key !== undefined ? "--value" : "--text";
    throw new UsageError(
      `${flag}: the item is ${size} bytes, too large for one message within agent_bus.max_message_bytes = ${maxMessageBytes} (less ${SESSION_ENVELOPE_ROOM} bytes of envelope); shorten it or raise the limit`,
    );
  }
}
