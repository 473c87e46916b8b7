import { describe, expect, it } from "vitest";
import { verifyVersionLog } from "../../../src/core/checks/version-log.js";
import { sealCatalog, serializeCatalog } from "../../../src/core/model/engram.js";
import { replay } from "../../../src/core/proposal/replay.js";
import { documentEntry, documentText } from "../../../src/core/versions/documents.js";
import { parseVersionLog, VERSION_LOG_PATH } from "../../../src/core/versions/log.js";
import { countsOf, logWith, recordFor } from "../../../src/core/versions/record.js";
import type { Catalog, DocumentEntry } from "../../../src/schema/engram.js";
import { catalogEntry } from "../../support/catalog-entries.js";

const T = "2026-01-01T00:00:00.000Z";
const entry = catalogEntry;

const KIND: Record<string, DocumentEntry["kind"]> = {
  sessions: "session",
  state: "state",
  core: "core",
  knowledge: "knowledge",
};

/** A memory tree: its engrams, documents (path to JSON value) and a version log up to it. */
function tree(version: number, engrams: number[], docs: Record<string, unknown>, log?: string) {
  const texts = new Map(Object.entries(docs).map(([p, v]) => [p, documentText(v)]));
  const entries = [...texts].map(([p, t]) =>
    documentEntry(p, KIND[p.split("/")[1] as string] as DocumentEntry["kind"], t),
  );
  const catalog = sealCatalog(version, T, engrams.map(entry), entries);
  const files = new Map<string, string>(texts);
  for (const e of catalog.entries) files.set(e.path, "{}");
  files.set("memory/catalog.json", serializeCatalog(catalog));
  const text = logWith(
    log,
    recordFor(catalog, { kind: "cycle" }, countsOf(catalog, files.keys(), undefined)),
  );
  files.set(VERSION_LOG_PATH, text);
  return { catalog, files, log: text };
}

const session = (id: string, episodes: number) => ({
  session_id: id,
  episodes: Array.from({ length: episodes }, (_, i) => ({ id: `${id}_${i}` })),
});
const knowledge = (...records: { id: string; text: string; evidence: number }[]) => ({
  kind: "fact",
  records: records.map((r) => ({ ...r, confidence: 0.8, version: 1 })),
});
const k = (id: string, evidence = 1) => ({ id, text: `fact ${id}`, evidence });

describe("a proposal with consolidated sessions replayed on a newer main", () => {
  const base = tree(1, [1], {
    "memory/sessions/s0.json": session("s0", 100),
    "memory/state/build.json": { key: "build", value: 1 },
    "memory/core/team.json": { key: "team", value: "a" },
    "memory/knowledge/fact.json": knowledge(k("k1")),
  });
  // The engram branch: session P consolidated there (never merged).
  const proposal = tree(
    2,
    [1],
    {
      "memory/sessions/s0.json": session("s0", 100),
      "memory/sessions/sP.json": session("sP", 3),
      "memory/state/build.json": { key: "build", value: 2 },
      "memory/core/team.json": { key: "team", value: "p" },
      "memory/knowledge/fact.json": knowledge(k("k1", 2), k("k2")),
    },
    base.log,
  );
  // Main moved: a cycle added an engram and session O was consolidated there.
  const onto = tree(
    2,
    [1, 3],
    {
      "memory/sessions/s0.json": session("s0", 100),
      "memory/sessions/sO.json": session("sO", 2),
      "memory/state/build.json": { key: "build", value: 1 },
      "memory/core/team.json": { key: "team", value: "o" },
      "memory/knowledge/fact.json": knowledge(k("k1", 2), k("k3")),
    },
    base.log,
  );

  it("keeps the documents of both sides, by each kind's rule, and continues main's log", () => {
    const out = replay(base.catalog, proposal, onto, new Set()).files;
    const catalog: Catalog = out.catalog;
    expect((catalog.documents ?? []).map((d) => d.path)).toEqual([
      "memory/core/team.json",
      "memory/knowledge/fact.json",
      "memory/sessions/s0.json",
      "memory/sessions/sO.json",
      "memory/sessions/sP.json",
      "memory/state/build.json",
    ]);
    for (const d of catalog.documents ?? []) {
      expect(documentEntry(d.path, d.kind, out.files.get(d.path) as string)).toEqual(d);
    }
    const read = (path: string) => JSON.parse(out.files.get(path) as string);
    // State: the proposal lands after main (latest wins); core: main's change stands.
    expect(read("memory/state/build.json").value).toBe(2);
    expect(read("memory/core/team.json").value).toBe("o");
    // Knowledge joined by id: k1's evidence raised on both sides counts once.
    expect(
      read("memory/knowledge/fact.json").records.map((r: { id: string; evidence: number }) => [
        r.id,
        r.evidence,
      ]),
    ).toEqual([
      ["k1", 2],
      ["k3", 1],
      ["k2", 1],
    ]);
    expect(out.files.has(entry(3).path)).toBe(true);
    const log = parseVersionLog(out.files.get(VERSION_LOG_PATH) as string);
    expect(log.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(log.at(-1)).toMatchObject({
      catalog_hash: catalog.hash,
      counts: { engrams: 2, episodes: 105, facts: 3, state: 1, core: 1 },
    });
    expect(
      verifyVersionLog(out.files.get(VERSION_LOG_PATH), out.files.get("memory/catalog.json")),
    ).toEqual([]);
  });

  it("rebuilds a proposal that only consolidated sessions (no engram of its own)", () => {
    const moved = tree(2, [1, 3], { "memory/sessions/s0.json": session("s0", 100) }, base.log);
    const out = replay(base.catalog, proposal, moved, new Set()).files;
    expect(out.files.has("memory/sessions/sP.json")).toBe(true);
    expect(out.catalog.entries.map((e) => e.engram_id)).toEqual(
      [entry(1), entry(3)].map((e) => e.engram_id),
    );
  });

  it("joins the evidence sessions gave engrams' learnings by id, counting no facts", () => {
    const evidence = (...records: [string, number][]) => ({
      kind: "evidence",
      records: records.map(([id, n]) => ({ id, evidence: n, version: 1 })),
    });
    const path = "memory/knowledge/evidence.json";
    const b = tree(1, [1], { [path]: evidence(["l_a", 1]) });
    const p = tree(2, [1], { [path]: evidence(["l_a", 2], ["l_b", 1]) }, b.log);
    const o = tree(2, [1, 3], { [path]: evidence(["l_a", 2]) }, b.log);
    const out = replay(b.catalog, p, o, new Set()).files;
    expect(JSON.parse(out.files.get(path) as string)).toEqual(evidence(["l_a", 2], ["l_b", 1]));
    const log = parseVersionLog(out.files.get(VERSION_LOG_PATH) as string);
    expect(log.at(-1)?.counts.facts).toBe(0);
  });
});
