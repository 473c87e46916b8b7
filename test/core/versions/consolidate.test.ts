import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Learning, learningId, normalizeClaim } from "../../../src/core/graph/learnings.js";
import { canonicalJson } from "../../../src/core/model/canonical.js";
import {
  consolidateSession,
  consolidateSessions,
  DEFAULT_RULES,
  mergeCoreValue,
  type SessionInput,
} from "../../../src/core/versions/consolidate.js";
import {
  EPISODE_OUTCOMES,
  type SessionItem,
  surpriseOf,
} from "../../../src/core/versions/items.js";
import {
  emptyMaster,
  knowledgeFromLearnings,
  type MasterState,
} from "../../../src/core/versions/master.js";

const AT = "2026-01-01T00:00:00.000Z";

function items(list: Omit<SessionItem, "seq" | "written_at" | "redactions">[]): SessionItem[] {
  return list.map((item, i) => ({ ...item, seq: i + 1, written_at: AT, redactions: 0 }));
}

function episodes(n: number): SessionItem[] {
  return items(
    Array.from({ length: n }, (_, i) => ({
      kind: "episode" as const,
      text: `episode ${i}`,
      outcome: "success" as const,
      confidence: 0.5,
    })),
  );
}

// The thresholds and their neighbours often, so both sides of every rule are exercised.
const confidence = fc.oneof(
  fc.constantFrom(0, 0.5, 0.7, 0.71, 0.89, 0.9, 1),
  fc.double({ min: 0, max: 1, noNaN: true }),
);
const key = fc.constantFrom("build", "release", "team", "values");
const text = fc.constantFrom(
  "Use pnpm",
  "use  PNPM",
  "CI is slow",
  "ci is slow ",
  "Ship on Fridays",
);
const item = fc.oneof(
  fc.record({
    kind: fc.constant("episode" as const),
    text,
    outcome: fc.constantFrom(...EPISODE_OUTCOMES),
    confidence,
  }),
  fc.record({
    kind: fc.constantFrom("fact", "lesson", "convention", "decision" as const),
    text,
    confidence,
  }),
  fc.record({ kind: fc.constant("state" as const), key, value: fc.jsonValue() }),
  fc.record({
    kind: fc.constant("core" as const),
    key,
    value: fc.dictionary(fc.constantFrom("a", "b", "c"), fc.integer()),
    confidence,
  }),
);
const session = (id: string) =>
  fc.record({
    session_id: fc.constant(id),
    parent_version: fc.nat(3),
    items: fc.array(item, { minLength: 4, maxLength: 25 }).map((list) => items(list as never)),
  });

/** A master at version 3 built from two arbitrary sessions. */
const master = fc.tuple(session("s_0000000000000001"), session("s_0000000000000002")).map(
  ([a, b]) =>
    consolidateSessions(emptyMaster(1), [
      { ...a, parent_version: 1 },
      { ...b, parent_version: 1 },
    ]).master,
);

describe("consolidateSession (properties)", () => {
  it("is pure: same input, byte-identical output, input untouched", () => {
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), (m, s) => {
        const before = canonicalJson(m);
        const one = consolidateSession(m, s);
        const two = consolidateSession(m, s);
        expect(canonicalJson(one)).toBe(canonicalJson(two));
        expect(canonicalJson(m)).toBe(before);
        expect(one.master.version).toBe(m.version + 1);
        expect(one.report.from_version).toBe(m.version);
        expect(one.report.to_version).toBe(m.version + 1);
      }),
    );
  });

  it("append_all: every episode kept once, old ones unchanged, surprise from the outcome", () => {
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), (m, s) => {
        const { master: next, report } = consolidateSession(m, s);
        const added = s.items.filter((i) => i.kind === "episode");
        expect(next.episodes.slice(0, m.episodes.length)).toEqual(m.episodes);
        expect(next.episodes.length).toBe(m.episodes.length + added.length);
        expect(report.applied.episode).toBe(added.length);
        expect(new Set(next.episodes.map((e) => e.id)).size).toBe(next.episodes.length);
        for (const e of next.episodes.slice(m.episodes.length)) {
          expect(e.surprise).toBe(surpriseOf(e.confidence, e.outcome));
          expect(e.version).toBe(next.version);
        }
        // Replaying the same session adds nothing.
        const again = consolidateSession(next, s);
        expect(again.master.episodes).toEqual(next.episodes);
      }),
    );
  });

  it("validate_and_merge: only confident knowledge, one record per normalized text", () => {
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), (m, s) => {
        const { master: next, report } = consolidateSession(m, s);
        const texts = next.knowledge.map((k) => normalizeClaim(k.text ?? ""));
        expect(new Set(texts).size).toBe(texts.length);
        for (const k of next.knowledge) expect(k.confidence).toBeGreaterThan(0.7);
        const accepted = new Set(
          s.items
            .filter((i) => ["fact", "lesson", "convention", "decision"].includes(i.kind))
            .filter((i) => (i.confidence ?? 0) > DEFAULT_RULES.knowledge_min_confidence)
            .map((i) => normalizeClaim(i.text ?? "")),
        );
        const evidence = (st: MasterState) => st.knowledge.reduce((sum, k) => sum + k.evidence, 0);
        expect(evidence(next) - evidence(m)).toBe(accepted.size);
        const newOnes = ["fact", "lesson", "convention", "decision"].reduce(
          (sum, k) => sum + report.applied[k as "fact"],
          0,
        );
        expect(newOnes + report.merged).toBe(accepted.size);
      }),
    );
  });

  it("latest_wins: the last write of a key wins, history is bounded, conflicts reported", () => {
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), fc.nat(2), (m, s, max) => {
        const rules = { ...DEFAULT_RULES, state_history_max: max };
        const { master: next, report } = consolidateSession(m, s, rules);
        const last = new Map<string, unknown>();
        for (const i of s.items) if (i.kind === "state") last.set(i.key as string, i.value);
        for (const [k, v] of last) {
          const old = m.state[k];
          if (old) {
            const history = next.state[k]?.history ?? [];
            if (max === 0) expect(history).toEqual([]);
            else expect(history[0]?.value).toEqual(old.value);
          }
          expect(next.state[k]?.value).toEqual(v);
          expect(next.state[k]?.history.length).toBeLessThanOrEqual(max);
        }
        const expected = [...last.keys()]
          .filter((k) => (m.state[k]?.version ?? 0) > s.parent_version)
          .sort();
        expect(report.conflicts.filter((c) => c.kind === "state").map((c) => c.key)).toEqual(
          expected,
        );
        for (const k of Object.keys(m.state)) expect(next.state[k]).toBeDefined();
      }),
    );
  });

  it("careful_merge: never deletes, only confident changes, every change logged", () => {
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), (m, s) => {
        const { master: next, report } = consolidateSession(m, s);
        for (const [k, doc] of Object.entries(m.core)) {
          const now = next.core[k];
          expect(now).toBeDefined();
          for (const field of Object.keys(doc.value as object)) {
            expect(Object.keys(now?.value as object)).toContain(field);
          }
        }
        expect(next.core_log.slice(0, m.core_log.length)).toEqual(m.core_log);
        expect(next.core_log.length - m.core_log.length).toBe(report.applied.core);
        for (const change of report.core_changes) {
          expect(change.session_id).toBe(s.session_id);
          expect(change.version).toBe(next.version);
          const writes = s.items.filter((i) => i.kind === "core" && i.key === change.key);
          expect(writes.some((w) => (w.confidence ?? 0) >= 0.9)).toBe(true);
          // A key another version changed since the parent is never applied.
          expect(m.core[change.key]?.version ?? 0).toBeLessThanOrEqual(s.parent_version);
        }
        for (const c of report.conflicts.filter((x) => x.kind === "core")) {
          expect(c.resolution).toBe("held_for_review");
          expect(next.core[c.key]).toEqual(m.core[c.key]);
        }
      }),
    );
  });
});

describe("consolidateSessions (the seed's flows)", () => {
  it("v1 with 100 episodes, A adds 3 -> v2 with 103, B from v2 adds 2 -> v3 with 105", () => {
    const v1 = consolidateSession(emptyMaster(0), {
      session_id: "s_0000000000000000",
      parent_version: 0,
      items: episodes(100),
    }).master;
    expect(v1.version).toBe(1);
    const a = { session_id: "s_000000000000000a", parent_version: 1, items: episodes(3) };
    const b = { session_id: "s_000000000000000b", parent_version: 2, items: episodes(2) };
    const { master: v3, reports } = consolidateSessions(v1, [a, b]);
    expect(
      reports.map((r) => [r.session_id, r.from_version, r.to_version, r.applied.episode]),
    ).toEqual([
      ["s_000000000000000a", 1, 2, 3],
      ["s_000000000000000b", 2, 3, 2],
    ]);
    expect(v3.episodes).toHaveLength(105);
    expect(reports.flatMap((r) => r.conflicts)).toEqual([]);
  });

  it("two sessions from one parent: state overwritten and reported, core held, fact merged", () => {
    const base: MasterState = consolidateSession(emptyMaster(0), {
      session_id: "s_0000000000000000",
      parent_version: 0,
      items: items([{ kind: "core", key: "values", value: { tone: "plain" }, confidence: 1 }]),
    }).master;
    const write = (id: string, n: number): SessionInput => ({
      session_id: id,
      parent_version: 1,
      items: items([
        { kind: "state", key: "build", value: { run: n } },
        { kind: "core", key: "values", value: { speed: n }, confidence: 0.95 },
        { kind: "fact", text: n === 1 ? "CI is slow" : "ci  IS slow", confidence: 0.8 },
        { kind: "fact", text: "unsure", confidence: 0.7 },
      ]),
    });
    const { master, reports } = consolidateSessions(base, [
      write("s_0000000000000001", 1),
      write("s_0000000000000002", 2),
    ]);
    expect(master.version).toBe(3);
    expect(master.state.build?.value).toEqual({ run: 2 });
    expect(master.state.build?.history).toEqual([
      { value: { run: 1 }, version: 2, session_id: "s_0000000000000001" },
    ]);
    expect(master.core.values?.value).toEqual({ speed: 1, tone: "plain" });
    expect(reports[1]?.conflicts).toEqual(
      [
        {
          kind: "core",
          key: "values",
          parent_version: 1,
          changed_in_version: 2,
          resolution: "held_for_review",
          proposed: { speed: 2 },
        },
        {
          kind: "state",
          key: "build",
          parent_version: 1,
          changed_in_version: 2,
          resolution: "overwritten",
        },
      ].sort((x, y) => (x.kind === "state" ? -1 : 1) - (y.kind === "state" ? -1 : 1)),
    );
    expect(master.knowledge).toHaveLength(1);
    expect(master.knowledge[0]?.evidence).toBe(2);
    expect(reports[0]?.rejected.low_confidence).toBe(1);
    expect(reports[1]?.merged).toBe(1);
    expect(master.core_log.map((c) => [c.session_id, c.version, c.old, c.new])).toEqual([
      ["s_0000000000000000", 1, null, { tone: "plain" }],
      ["s_0000000000000001", 2, { tone: "plain" }, { speed: 1, tone: "plain" }],
    ]);
  });

  it("refuses a core change that would delete, and one below the threshold", () => {
    const { report } = consolidateSession(emptyMaster(4), {
      session_id: "s_0000000000000009",
      parent_version: 4,
      items: items([
        { kind: "core", key: "team", value: null, confidence: 1 },
        { kind: "core", key: "team", value: { a: null }, confidence: 1 },
        { kind: "core", key: "team", value: { a: 1 }, confidence: 0.89 },
      ]),
    });
    expect(report.rejected).toMatchObject({ delete_refused: 2, low_confidence: 1 });
    expect(report.applied.core).toBe(0);
    expect(mergeCoreValue({ a: 1, b: { c: 2 } }, { b: { d: 3 } })).toEqual({
      a: 1,
      b: { c: 2, d: 3 },
    });
  });
});

function learningOf(text: string, evidence: number, type: Learning["type"] = "pattern"): Learning {
  return {
    id: learningId(text),
    type,
    text,
    rationale: null,
    engrams: ["e_1", "e_2"],
    scope: "lt",
    evidence,
    written_at: AT,
    topics: [],
    links: [],
    senders: [],
  };
}

describe("knowledgeFromLearnings", () => {
  it("makes an engram's claim the one a session's duplicate raises, without a copy", () => {
    const learnings = knowledgeFromLearnings([learningOf("Run tests in forks", 2)], 7);
    expect(learnings[0]).toMatchObject({ kind: "lesson", confidence: 1, evidence: 2 });
    const id = learningId("Run tests in forks");
    const session = (n: number, text: string): SessionInput => ({
      session_id: `s_000000000000000${n}`,
      parent_version: 7,
      items: items([{ kind: "fact", text, confidence: 0.9 }]),
    });
    const one = consolidateSession(
      emptyMaster(7),
      session(3, "run  TESTS in forks"),
      undefined,
      learnings,
    );
    expect(one.report.merged).toBe(1);
    expect(one.report.merged_items).toEqual([{ seq: 1, kind: "fact", into: id, evidence: 3 }]);
    expect(one.report.applied.fact).toBe(0);
    expect(one.master.knowledge).toEqual([]);
    expect(one.master.evidence).toEqual([{ id, evidence: 1, version: 8 }]);
    // A type prefix is left out, as the compaction's dedup matches: the same claim again.
    const two = consolidateSession(
      one.master,
      session(4, "Pattern: run tests in forks"),
      undefined,
      learnings,
    );
    expect(two.report.merged_items).toEqual([{ seq: 1, kind: "fact", into: id, evidence: 4 }]);
    expect(two.master.evidence).toEqual([{ id, evidence: 2, version: 9 }]);
    expect(two.master.knowledge).toEqual([]);
  });

  it("prefers a session's own record, and adds what engrams do not hold", () => {
    const learnings = knowledgeFromLearnings([learningOf("Use pnpm", 1, "insight")], 1);
    const m = consolidateSession(
      emptyMaster(1),
      {
        session_id: "s_0000000000000005",
        parent_version: 1,
        items: items([
          { kind: "fact", text: "use PNPM", confidence: 0.9 },
          { kind: "fact", text: "CI is slow", confidence: 0.9 },
          { kind: "fact", text: "use pnpm", confidence: 0.95 },
        ]),
      },
      undefined,
      learnings,
    );
    expect(m.report.applied.fact).toBe(1);
    expect(m.report.merged).toBe(1);
    expect(m.report.rejected.duplicate).toBe(1);
    expect(m.master.knowledge.map((k) => k.text)).toEqual(["CI is slow"]);
    expect(m.master.evidence.map((e) => e.evidence)).toEqual([1]);
  });
});

describe("validate_and_merge against the learnings engrams hold (property)", () => {
  it("never copies a learning; every accepted item is one evidence more somewhere", () => {
    const held = fc.subarray(["Use pnpm", "CI is slow", "Ship on Fridays"]);
    fc.assert(
      fc.property(master, session("s_00000000000000aa"), held, (m, s, texts) => {
        const learnings = knowledgeFromLearnings(
          texts.map((t) => learningOf(t, 1, "insight")),
          m.version,
        );
        const { master: next, report } = consolidateSession(m, s, DEFAULT_RULES, learnings);
        const heldKeys = new Set(texts.map((t) => normalizeClaim(t)));
        const before = new Set(m.knowledge.map((k) => normalizeClaim(k.text ?? "")));
        for (const k of next.knowledge.slice(m.knowledge.length)) {
          expect(heldKeys.has(normalizeClaim(k.text ?? ""))).toBe(false);
        }
        const total = (st: MasterState) =>
          st.knowledge.reduce((n, k) => n + k.evidence, 0) +
          st.evidence.reduce((n, e) => n + e.evidence, 0);
        const accepted = new Set(
          s.items
            .filter((i) => ["fact", "lesson", "convention", "decision"].includes(i.kind))
            .filter((i) => (i.confidence ?? 0) > DEFAULT_RULES.knowledge_min_confidence)
            .map((i) => normalizeClaim(i.text ?? "")),
        );
        expect(total(next) - total(m)).toBe(accepted.size);
        const raised = [...accepted].filter((t) => heldKeys.has(t) && !before.has(t));
        expect(next.evidence.reduce((n, e) => n + e.evidence, 0)).toBe(raised.length);
        expect(report.merged_items).toHaveLength(report.merged);
      }),
    );
  });
});
