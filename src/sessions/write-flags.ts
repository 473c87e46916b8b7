import type { SessionItemKind } from "../core/versions/items.js";

/*
 * Which flags `worker session write` takes for each kind of item, in one table: the command's
 * option specs, its usage lines and the checks of a write all read it, so they cannot drift.
 * No imports but types: the CLI loads it at start-up.
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
