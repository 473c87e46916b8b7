import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyDocuments } from "../../../src/core/checks/verify-sessions.js";
import { documentItem, linkDocumentValue } from "../../../src/core/graph/document-links.js";
import { entityMatcher } from "../../../src/core/graph/entities.js";
import { loadMaster } from "../../../src/core/versions/documents.js";
import type { SessionItem } from "../../../src/core/versions/items.js";
import { planSessionStep } from "../../../src/core/versions/step.js";
import type { Catalog } from "../../../src/schema/engram.js";
import type { Registry } from "../../../src/schema/registry.js";
import {
  documentsInput,
  endedSession,
  initialStep,
  SESSION_AT,
  STEP_SETTINGS,
} from "../../support/version-steps.js";

const A = "s_aaaaaaaaaaaaaaaa";

const REGISTRY: Registry = {
  people: [{ id: "ada", name: "Ada Lovelace", aliases: ["ada"], emails: ["ada@example.com"] }],
  projects: [{ id: "engine", name: "Engine", aliases: [], paths: ["src/engine/**"] }],
  components: [],
};

const ITEMS: Partial<SessionItem>[] = [
  { kind: "state", key: "build", value: { broken: "src/engine/plan.ts since #12", by: "@nobody" } },
  { kind: "core", key: "team", value: { lead: "Ada Lovelace" }, confidence: 0.95 },
  { kind: "state", key: "mood", value: 3 },
];

function step() {
  return planSessionStep(initialStep(), endedSession(A, 0, ITEMS), {
    ...STEP_SETTINGS,
    registry: REGISTRY,
  });
}

function written(s: ReturnType<typeof step>, path: string): Record<string, unknown> {
  const w = s.files.writes.find((f) => f.path === path);
  return JSON.parse(w?.text as string) as Record<string, unknown>;
}

describe("entities of state and core documents", () => {
  it("are written with each document, byte for byte the same for the same input", () => {
    const one = step();
    expect(step().files).toEqual(one.files);
    const build = written(one, "memory/state/build.json");
    expect(build.entities).toEqual(["file:src/engine/plan.ts", "issue:12", "project:engine"]);
    // After the value it describes, before the version fields.
    expect(Object.keys(build)).toEqual([
      "key",
      "value",
      "entities",
      "version",
      "session_id",
      "history",
    ]);
    expect(written(one, "memory/core/team.json").entities).toEqual(["person:ada"]);
    expect(written(one, "memory/state/mood.json").entities).toEqual([]);
    // Unknown handles are logged, never invented into entities.
    expect(one.report.unlinked_mentions).toEqual(["@nobody"]);
  });

  it("stay out of the master state read back, and verify checks their shape", () => {
    const one = step();
    const files = new Map(one.files.writes.map((w) => [w.path, w.text]));
    const catalog = JSON.parse(files.get("memory/catalog.json") as string) as Catalog;
    const back = loadMaster(catalog.catalog_version, catalog.documents ?? [], files);
    expect(back.master).toEqual(one.state.loaded.master);

    const input = documentsInput(files);
    const docs = input.files;
    expect(verifyDocuments(input)).toEqual([]);

    // A document whose hash is listed right but whose entities are not sorted, or not ids.
    const path = "memory/state/build.json";
    const bad = (entities: unknown) => {
      const doc = { ...written(one, path), entities };
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      const listed = (catalog.documents ?? []).map((d) =>
        d.path === path ? { ...d, hash: `sha256:${sha(text)}`, bytes: Buffer.byteLength(text) } : d,
      );
      return verifyDocuments({
        ...input,
        catalogText: JSON.stringify({ ...catalog, documents: listed }),
        files: new Map([...docs, [path, text]]),
      }).map((f) => [f.path, f.code, f.message]);
    };
    expect(bad(["issue:12", "file:a.ts"])).toEqual([
      [path, "document-invalid", expect.stringMatching(/^entities\.1: expected sorted, unique/)],
    ]);
    expect(bad(["url:https://x.test"])).toEqual([
      [path, "document-invalid", expect.stringMatching(/^entities\.0: expected kind:key/)],
    ]);
    expect(bad("person:ada")).toEqual([
      [path, "document-invalid", "entities: expected an array of entity ids"],
    ]);
    // Documents written before the field existed stay valid.
    expect(bad(undefined)).toEqual([]);
  });

  it("are what the graph links a document to; older documents are linked from their text", () => {
    const matcher = entityMatcher(REGISTRY);
    const doc = {
      path: "memory/core/team.json",
      kind: "core" as const,
      key: "team",
      value: { lead: "Ada Lovelace", owns: ["src/engine/plan.ts"] },
      written_at: SESSION_AT,
    };
    const derived = documentItem(doc, matcher);
    expect(derived.entities).toEqual(linkDocumentValue(matcher, doc.key, doc.value).entities);
    expect(derived.entities).toEqual(["file:src/engine/plan.ts", "person:ada", "project:engine"]);
    expect(derived.text).toBe('core team: {"lead":"Ada Lovelace","owns":["src/engine/plan.ts"]}');
    expect(derived.engrams).toEqual([doc.path]);
    const carried = documentItem({ ...doc, entities: ["person:ada"] }, matcher);
    expect(carried.entities).toEqual(["person:ada"]);
    expect(carried.id).toBe(derived.id);
    expect(derived.id).toMatch(/^l_[0-9a-f]{16}$/);
  });
});

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
