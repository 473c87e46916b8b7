import { describe, expect, it } from "vitest";
import { diffVersions } from "../../../src/core/versions/diff.js";

const files = (entries: Record<string, unknown>) =>
  new Map(Object.entries(entries).map(([path, value]) => [path, JSON.stringify(value)]));

describe("diffVersions on session documents", () => {
  it("reports knowledge records as facts and counts the sessions' episodes", () => {
    const from = files({
      "memory/sessions/s_a.json": { session_id: "s_a", episodes: [{ id: "e1" }, { id: "e2" }] },
      "memory/knowledge/fact.json": { kind: "fact", records: [{ id: "k1", text: "old fact" }] },
    });
    const to = files({
      "memory/sessions/s_a.json": { session_id: "s_a", episodes: [{ id: "e1" }, { id: "e2" }] },
      "memory/sessions/s_b.json": { session_id: "s_b", episodes: [{ id: "e3" }] },
      "memory/knowledge/fact.json": { kind: "fact", records: [{ id: "k2", text: "new fact" }] },
      "memory/knowledge/lesson.json": {
        kind: "lesson",
        records: [
          { id: "k3", text: "a lesson" },
          { id: "k4", sealed: [] },
        ],
      },
    });
    const d = diffVersions(from, to);
    expect(d.facts).toEqual({ added: ["a lesson", "new fact"], removed: ["old fact"] });
    expect(d.episodes).toEqual({ from: 2, to: 3 });
    // Knowledge is told as facts, not again as files; a session's episode file is a file.
    expect(d.files).toEqual({ added: ["memory/sessions/s_b.json"], removed: [], changed: [] });
  });
});
