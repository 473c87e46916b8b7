import { describe, expect, it } from "vitest";
import { verifyDocuments } from "../../../src/core/checks/verify-sessions.js";
import { learningId } from "../../../src/core/graph/learnings.js";
import { normalizeLine } from "../../../src/core/ingest/normalize.js";
import { createRedactor } from "../../../src/core/ingest/redact.js";
import { emptyCatalog, serializeCatalog } from "../../../src/core/model/engram.js";
import { renderPrBody } from "../../../src/core/rendering/pr-body.js";
import { EVIDENCE_PATH, loadMaster } from "../../../src/core/versions/documents.js";
import type { SessionItem } from "../../../src/core/versions/items.js";
import { parseVersionLog, VERSION_LOG_PATH } from "../../../src/core/versions/log.js";
import { knowledgeFromLearnings } from "../../../src/core/versions/master.js";
import { planSessionStep, type StepState } from "../../../src/core/versions/step.js";
import type { Catalog } from "../../../src/schema/engram.js";
import { ENVELOPE_SCHEMAS } from "../../../src/schema/envelope.js";
import {
  documentsInput,
  endedSession,
  initialStep,
  SESSION_AT,
  STEP_SETTINGS,
} from "../../support/version-steps.js";

const A = "s_aaaaaaaaaaaaaaaa";
const B = "s_bbbbbbbbbbbbbbbb";
const C = "s_cccccccccccccccc";

function episodes(n: number, tag: string): Partial<SessionItem>[] {
  return Array.from({ length: n }, (_, i) => ({
    kind: "episode" as const,
    text: `${tag} ${i}`,
    outcome: "success" as const,
    confidence: 0.5,
  }));
}

/** The files of a state, as the Director would read them back from disk. */
function reload(files: Map<string, string>): StepState {
  const catalog = JSON.parse(files.get("memory/catalog.json") as string) as Catalog;
  return {
    catalog,
    loaded: loadMaster(catalog.catalog_version, catalog.documents ?? [], files),
    log: parseVersionLog(files.get(VERSION_LOG_PATH) as string),
  };
}

function apply(files: Map<string, string>, step: ReturnType<typeof planSessionStep>) {
  for (const w of step.files.writes) files.set(w.path, w.text);
  for (const d of step.files.deletes) files.delete(d);
}

describe("planSessionStep", () => {
  it("is deterministic, and what it writes reads back into the same master state", () => {
    const s = endedSession(A, 0, [
      ...episodes(2, "a"),
      { kind: "fact", text: "CI caches deps", confidence: 0.9 },
      { kind: "state", key: "build", value: { ok: true } },
      { kind: "core", key: "team", value: { lang: "ts" }, confidence: 0.95 },
    ]);
    const one = planSessionStep(initialStep(), s, STEP_SETTINGS);
    const two = planSessionStep(initialStep(), s, STEP_SETTINGS);
    expect(two.files).toEqual(one.files);
    expect(one.record).toMatchObject({
      version: 1,
      made_by: { kind: "session", session_id: A },
      counts: { engrams: 0, episodes: 2, facts: 1, state: 1, core: 1 },
    });
    const files = new Map<string, string>();
    apply(files, one);
    const back = reload(files);
    expect(back.loaded.master).toEqual(one.state.loaded.master);
    expect(back.catalog.hash).toBe(one.record.catalog_hash);
    // Listed documents verify; a changed byte does not.
    const input = documentsInput(files);
    const docs = input.files;
    expect(verifyDocuments(input)).toEqual([]);
    docs.set(
      "memory/state/build.json",
      (docs.get("memory/state/build.json") as string).replace("true", "false"),
    );
    docs.set("memory/state/stray.json", "{}\n");
    expect(verifyDocuments(input).map((f) => [f.path, f.code])).toEqual([
      ["memory/state/build.json", "document-hash"],
      ["memory/state/stray.json", "unlisted-file"],
    ]);
  });

  it("raises the evidence of a learning engrams hold in the evidence file, no copy", () => {
    const learnings = knowledgeFromLearnings(
      [
        {
          id: learningId("Deploys go out on Tuesdays"),
          type: "insight",
          text: "Deploys go out on Tuesdays",
          rationale: null,
          evidence: 1,
        },
      ],
      0,
    );
    const settings = { ...STEP_SETTINGS, learnings };
    const fact = { kind: "fact" as const, text: "deploys go out on tuesdays", confidence: 0.9 };
    const one = planSessionStep(initialStep(), endedSession(A, 0, [fact]), settings);
    const files = new Map<string, string>();
    apply(files, one);
    expect(one.report.merged).toBe(1);
    expect(one.record.counts.facts).toBe(0);
    expect([...files.keys()].filter((p) => p.startsWith("memory/knowledge/"))).toEqual([
      EVIDENCE_PATH,
    ]);
    const two = planSessionStep(reload(files), endedSession(B, 1, [fact]), settings);
    apply(files, two);
    expect(JSON.parse(files.get(EVIDENCE_PATH) as string)).toEqual({
      kind: "evidence",
      records: [{ id: learningId("Deploys go out on Tuesdays"), evidence: 2, version: 2 }],
    });
    expect(two.report.merged_items[0]?.evidence).toBe(3);
    expect(reload(files).loaded.master).toEqual(two.state.loaded.master);
    const docs = new Map([...files].filter(([p]) => /^memory\/(sessions|knowledge)\//.test(p)));
    const budgets = { documents_max_bytes: 1 << 20, episodes_max: 1000 };
    expect(
      verifyDocuments({ catalogText: files.get("memory/catalog.json"), files: docs, budgets }),
    ).toEqual([]);
  });

  it("evicts the oldest sessions' episode files first, and refuses what cannot fit", () => {
    const files = new Map<string, string>();
    let state = initialStep();
    for (const [id, tag] of [
      [A, "a"],
      [B, "b"],
      [C, "c"],
    ] as const) {
      const step = planSessionStep(
        state,
        endedSession(id, state.catalog.catalog_version, episodes(4, tag)),
        {
          ...STEP_SETTINGS,
          episodesMax: 9,
        },
      );
      apply(files, step);
      state = reload(files);
      if (id === C) {
        expect(step.report.evicted_sessions).toEqual([A]);
        expect(step.files.deletes).toEqual([`memory/sessions/${A}.json`]);
        expect(step.record.counts.episodes).toBe(8);
      }
    }
    expect(files.has(`memory/sessions/${A}.json`)).toBe(false);
    expect(() =>
      planSessionStep(state, endedSession("s_dddddddddddddddd", 3, episodes(12, "d")), {
        ...STEP_SETTINGS,
        episodesMax: 9,
      }),
    ).toThrow(/episodes_max = 9/);
  });
});

describe("session_end.v1 on ingest", () => {
  it("redacts every item's text and value, and seals sensitive text", () => {
    const token = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
    const line = JSON.stringify({
      schema_version: "agentbus-envelope/v1",
      message_type: "session_end.v1",
      sent_at: SESSION_AT,
      sender: { role: "worker", id: "w1" },
      seq: 0,
      event_id: `session_end-${A}-1`,
      payload: {
        session_id: A,
        parent_version: 0,
        parent_catalog_hash: "sha256:x",
        ended_at: SESSION_AT,
        part: 1,
        parts: 1,
        item_count: 2,
        items: [
          {
            seq: 1,
            kind: "fact",
            written_at: SESSION_AT,
            text: `token ${token}`,
            confidence: 0.9,
            redactions: 0,
          },
          {
            seq: 2,
            kind: "state",
            written_at: SESSION_AT,
            key: "deploy",
            value: { auth: `Bearer ${token}` },
            redactions: 0,
          },
        ],
      },
    });
    const result = normalizeLine(line, {
      receivedAt: SESSION_AT,
      maxMessageBytes: 65_536,
      schemas: ENVELOPE_SCHEMAS,
      redactor: createRedactor(),
      sealKey: undefined,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event.kind).toBe("session_end");
    expect(JSON.stringify(result.event)).not.toContain(token);
    expect(result.event.redactions).toBeGreaterThanOrEqual(2);
    expect(result.event.session?.items).toHaveLength(2);
  });
});

describe("the pull-request body", () => {
  it("lists the core changes held for review", () => {
    const catalog = emptyCatalog();
    const body = renderPrBody(
      {
        base: {
          branch: "main",
          sha: "0".repeat(40),
          catalog_version: 1,
          catalog_hash: catalog.hash,
        },
        head: { branch: "engram/memory", catalog_version: 2, catalog_hash: catalog.hash },
        compacted_events: 0,
        source_window: null,
        written: [],
        promoted: [],
        evicted: [],
        tiers_before: { st: { files: 0, bytes: 0 }, lt: { files: 0, bytes: 0 } },
        tiers_after: { st: { files: 0, bytes: 0 }, lt: { files: 0, bytes: 0 } },
        budgets: { st_max_files: 1, st_max_total_bytes: 1, lt_max_files: 1, lt_max_total_bytes: 1 },
        focus: { bytes_before: 0, bytes_after: 0, max_bytes: 1 },
      } as unknown as Parameters<typeof renderPrBody>[0],
      {
        held: [
          {
            session_id: B,
            key: "team",
            parent_version: 0,
            changed_in_version: 1,
            proposed: { size: 2 },
          },
        ],
      },
    );
    expect(body).toContain("### Held for review (1)");
    expect(body).toContain("`team`");
    expect(body).toContain("v0 → v1");
    expect(serializeCatalog(catalog)).not.toContain("documents");
  });
});
