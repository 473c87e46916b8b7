import { describe, expect, it } from "vitest";
import { SESSION_ITEM_KINDS } from "../../src/core/versions/items.js";
import { itemFromInput, type SessionWriteInput } from "../../src/sessions/session.js";
import {
  FLAGS_BY_KIND,
  WRITE_FLAGS,
  type WriteFlag,
  writeUsageLines,
} from "../../src/sessions/write-flags.js";

/** A valid value for every flag. */
const VALID: Record<WriteFlag, string | number> = {
  text: "x",
  rationale: "why",
  confidence: 0.9,
  outcome: "success",
  key: "k",
  value: "1",
  privacy: "public",
};

const input = (kind: string, flags: readonly WriteFlag[]): SessionWriteInput =>
  ({ kind, ...Object.fromEntries(flags.map((f) => [f, VALID[f]])) }) as SessionWriteInput;

describe("the write flags table drives the checks of a write", () => {
  it.each(SESSION_ITEM_KINDS)(
    "%s: takes its flags, requires its required ones, refuses the rest",
    (kind) => {
      const { required, optional } = FLAGS_BY_KIND[kind];
      expect(itemFromInput(input(kind, [...required, ...optional])).kind).toBe(kind);
      for (const missing of required) {
        const without = required.filter((f) => f !== missing);
        expect(() => itemFromInput(input(kind, without))).toThrow(
          `--${missing} is required with --kind ${kind}`,
        );
      }
      const others = (Object.keys(WRITE_FLAGS) as WriteFlag[]).filter(
        (f) => !required.includes(f) && !optional.includes(f),
      );
      for (const extra of others) {
        expect(() => itemFromInput(input(kind, [...required, extra]))).toThrow(
          `--${extra} does not go with --kind ${kind}`,
        );
      }
    },
  );

  it("gives one usage line per set of kinds with the same flags", () => {
    expect(writeUsageLines("write")).toEqual([
      "write --kind episode --text T --outcome O --confidence X [--privacy P]",
      "write --kind fact|lesson|convention|decision --text T --confidence X [--rationale R] [--privacy P]",
      "write --kind state --key K --value JSON",
      "write --kind core --key K --value JSON --confidence X",
    ]);
  });
});
