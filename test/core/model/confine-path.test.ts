import { describe, expect, it } from "vitest";
import { CREATED_BY } from "../../../src/core/compaction/compact.js";
import { MIN_ENGRAM_CREATED_BY } from "../../../src/core/compaction/min-engram.js";
import { catalogPathProblem, confinePath, stateDirProblem } from "../../../src/core/model/paths.js";
import { VERSION_LOG_PATH } from "../../../src/core/versions/log.js";

const ENGRAM = "memory/st/20260101-000000Z/engram_e_0123456789abcdef0123456789abcdef.json";

describe("confinePath: the one check of every path content or state names", () => {
  it.each([
    ["../x", '".." segment'],
    ["memory/../../x", '".." segment'],
    ["/etc/passwd", "absolute"],
    ["C:/x", "absolute"],
    ["memory/./x", '"." segment'],
    ["memory//x", "empty segment"],
    ["memory/x/", "empty segment"],
    ["memory\\..\\x", "backslash"],
    ["memory/x\u0000.json", "control character"],
    ["", "is empty"],
  ])("refuses %j (%s) for every kind", (path, why) => {
    for (const kind of ["engram", "document", "memory", "staging"] as const) {
      expect(confinePath(path, kind)).toContain(why);
    }
  });

  it("keeps each kind in its folder", () => {
    expect(confinePath(ENGRAM, "engram")).toBeUndefined();
    expect(confinePath("memory/catalog.json", "engram")).toBeDefined();
    expect(confinePath("memory/knowledge/facts.json", "document", "knowledge")).toBeUndefined();
    expect(confinePath("memory/knowledge/facts.json", "document", "state")).toBeDefined();
    expect(confinePath("memory/state/.hidden.json", "document")).toBeDefined();
    expect(confinePath("memory/state/a/b.json", "document")).toBeDefined();
    for (const p of ["MEMORY.md", "memory/catalog.json", VERSION_LOG_PATH, ENGRAM]) {
      expect(confinePath(p, "memory")).toBeUndefined();
    }
    expect(confinePath("src/index.ts", "memory")).toBeDefined();
    expect(confinePath(".git/hooks/pre-commit", "memory")).toBeDefined();
    expect(confinePath("staging-abc-12", "staging")).toBeUndefined();
    expect(confinePath("staging-x/..", "staging")).toBeDefined();
    expect(confinePath(42, "memory")).toBe("expected a string");
  });

  it("finds the first catalog path out of place, naming the field", () => {
    const entry = {
      engram_id: "e_0123456789abcdef0123456789abcdef",
      scope: "st" as const,
      version: "20260101-000000Z",
      path: ENGRAM,
    };
    expect(catalogPathProblem({ entries: [entry] })).toBeUndefined();
    expect(catalogPathProblem({ entries: [entry, { ...entry, path: "../x" }] })).toMatchObject({
      field: "entries[1].path",
    });
    expect(
      catalogPathProblem({
        entries: [],
        documents: [{ kind: "knowledge", path: "memory/knowledge/../../x.json" }],
      }),
    ).toMatchObject({ field: "documents[0].path" });
  });

  it("accepts only a plain relative state folder inside the repository", () => {
    for (const ok of [".engram", ".engram/", "var/engram-state"])
      expect(stateDirProblem(ok)).toBeUndefined();
    for (const bad of [
      "",
      ".",
      "/",
      "./",
      "/tmp/x",
      "../x",
      "a/../b",
      ".git",
      ".git/x",
      "memory/x",
      "MEMORY.md",
    ]) {
      expect(stateDirProblem(bad), bad).toBeDefined();
    }
  });

  it("spells the compactor's created_by as the floor does", () => {
    expect(MIN_ENGRAM_CREATED_BY).toBe(CREATED_BY);
  });
});
