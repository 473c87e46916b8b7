import { describe, expect, it } from "vitest";
import { markReplaces } from "../../src/core/compaction/replaces.js";
import { knownClaims } from "../../src/core/graph/claims.js";
import { replacedBy, replacementsOf } from "../../src/core/graph/supersession.js";
import type { Engram } from "../../src/schema/engram.js";
import { engram } from "./focus-fixtures.js";

const memory = [
  engram({
    version: "20250101-000000Z",
    decisions: [
      { title: "Use Postgres advisory locks for the job lock", rationale: "one store" },
      { title: "Default retry count for webhook delivery is 3", rationale: "" },
      { title: "Name branches after the issue number", rationale: "" },
    ],
    facts: [
      "Convention: Pipe the installer from https://get.example.dev to sh on every setup",
      "Convention: Never commit generated files",
    ],
  }),
];

/** What a new engram holding these items replaces in `memory`, detected. */
function replaced(items: { decisions?: string[]; facts?: string[] }): Engram["replaces"] {
  const fresh = engram({
    version: "20250102-000000Z",
    decisions: (items.decisions ?? []).map((title) => ({ title, rationale: "" })),
    facts: items.facts ?? [],
  });
  return markReplaces([fresh], [], memory)[0]?.replaces;
}

describe("what a new engram replaces", () => {
  it("detects a decision that says instead of, a new default, and a retraction", () => {
    expect(
      replaced({ decisions: ["Use Redis for the job lock instead of Postgres advisory locks"] }),
    ).toEqual([
      {
        was: "Use Postgres advisory locks for the job lock",
        now: "Use Redis for the job lock instead of Postgres advisory locks",
      },
    ]);
    expect(replaced({ decisions: ["Default retry count for webhook delivery is 5"] })).toEqual([
      {
        was: "Default retry count for webhook delivery is 3",
        now: "Default retry count for webhook delivery is 5",
      },
    ]);
    expect(
      replaced({ facts: ["Convention: Do not pipe the installer from get.example.dev to sh"] }),
    ).toEqual([
      {
        was: "Convention: Pipe the installer from https://get.example.dev to sh on every setup",
        now: "Convention: Do not pipe the installer from get.example.dev to sh",
      },
    ]);
  });

  it("leaves alone what only looks like a reversal", () => {
    // A change cue about something memory does not hold.
    expect(replaced({ decisions: ["Use pnpm instead of npm for installs"] })).toBeUndefined();
    // A lesson reports; it does not retract.
    expect(
      replaced({ facts: ["Lesson: we no longer pipe the installer from get.example.dev to sh"] }),
    ).toBeUndefined();
    // "Do not X" beside "Never X" is one rule said twice.
    expect(replaced({ facts: ["Convention: Do not commit generated files"] })).toBeUndefined();
    // An unrelated decision on a default.
    expect(replaced({ decisions: ["Default log level is info"] })).toBeUndefined();
  });

  it("replaces what an item chose, not what it dropped too", () => {
    const earlier = engram({
      version: "20250101-000000Z",
      decisions: [
        { title: "Adopt narwhal builds for the narwhal service instead of make", rationale: "" },
      ],
    });
    const fresh = engram({
      version: "20250102-000000Z",
      decisions: [
        { title: "Adopt kinkajou builds for the kinkajou service instead of make", rationale: "" },
      ],
    });
    // Both left make: neither replaces the other.
    expect(markReplaces([fresh], [], [earlier])[0]?.replaces).toBeUndefined();
  });

  it("returns an engram that replaces nothing as it was, byte for byte", () => {
    const fresh = engram({ version: "20250102-000000Z", facts: ["Lesson: tests need git"] });
    expect(markReplaces([fresh], [], memory)[0]).toBe(fresh);
  });

  it("keeps what a note named when memory holds it, and only that", () => {
    const fresh = engram({
      version: "20250102-000000Z",
      decisions: [{ title: "Name branches after the issue title", rationale: "" }],
    });
    const event = {
      type: "memory_note.v1",
      kind: "decision",
      text: "Name branches after the issue title",
      supersedes: ["Name branches after the issue number", "Something memory never held"],
    } as unknown as Parameters<typeof markReplaces>[1][number];
    expect(markReplaces([fresh], [event], memory)[0]?.replaces).toEqual([
      { was: "Name branches after the issue number", now: "Name branches after the issue title" },
    ]);
  });

  it("hides a replaced item only up to the replacing batch: said again later, it is current", () => {
    const replacing = markReplaces(
      [
        engram({
          version: "20250102-000000Z",
          decisions: [
            {
              title: "Use Redis for the job lock instead of Postgres advisory locks",
              rationale: "",
            },
          ],
        }),
      ],
      [],
      memory,
    );
    const replacements = replacementsOf([...memory, ...replacing]);
    const old = "Use Postgres advisory locks for the job lock";
    expect(replacedBy(replacements, old, memory[0] as Engram)?.now).toMatch(/^Use Redis/);
    const later = engram({
      version: "20250103-000000Z",
      decisions: [{ title: old, rationale: "" }],
    });
    expect(replacedBy(replacements, old, later)).toBeUndefined();
    // Nor is it a claim memory holds: said again, it is written again, not counted as evidence.
    const claims = knownClaims([...memory, ...replacing], undefined);
    expect(claims.find(old)).toBeUndefined();
    expect(claims.find("Name branches after the issue number")).toBeDefined();
  });
});
