import { describe, expect, it } from "vitest";
import { verifyVersionLog } from "../../../src/core/checks/version-log.js";
import { sealCatalog, serializeCatalog } from "../../../src/core/model/engram.js";
import { replay } from "../../../src/core/proposal/replay.js";
import { diffVersions } from "../../../src/core/versions/diff.js";
import { parseVersionLog, VERSION_LOG_PATH } from "../../../src/core/versions/log.js";
import { countsOf, logWith, recordFor } from "../../../src/core/versions/record.js";
import { planRollback } from "../../../src/core/versions/rollback.js";
import { catalogEntry } from "../../support/catalog-entries.js";

const T = "2026-01-01T00:00:00.000Z";
const entry = catalogEntry;
const catalog = (version: number, ids: number[]) => sealCatalog(version, T, ids.map(entry));

describe("version records", () => {
  it("counts engrams from the catalog, documents from paths, and carries sessions' counts", () => {
    const c = countsOf(catalog(3, [1, 2]), ["memory/state/build.json", "memory/core/team.json"], {
      engrams: 9,
      episodes: 100,
      facts: 4,
      state: 0,
      core: 0,
    });
    expect(c).toEqual({ engrams: 2, episodes: 100, facts: 4, state: 1, core: 1 });
  });

  it("appends a line, and a step finished again after a crash leaves the same log", () => {
    const r1 = recordFor(
      catalog(1, [1]),
      { kind: "cycle" },
      countsOf(catalog(1, [1]), [], undefined),
    );
    const r2 = recordFor(catalog(2, [1, 2]), { kind: "restore" }, r1.counts);
    const once = logWith(logWith(undefined, r1), r2);
    expect(logWith(once, r2)).toBe(once);
    expect(parseVersionLog(once).map((r) => r.made_by.kind)).toEqual(["cycle", "restore"]);
  });

  it("verify checks the last line against the catalog, naming the line", () => {
    const c2 = catalog(2, [1, 2]);
    const log = logWith(
      undefined,
      recordFor(catalog(1, [1]), { kind: "cycle" }, countsOf(c2, [], undefined)),
    );
    const findings = verifyVersionLog(log, serializeCatalog(c2));
    expect(findings).toEqual([
      expect.objectContaining({ path: `${VERSION_LOG_PATH}:1`, code: "version-log-mismatch" }),
    ]);
    const good = logWith(log, recordFor(c2, { kind: "cycle" }, countsOf(c2, [], undefined)));
    expect(verifyVersionLog(good, serializeCatalog(c2))).toEqual([]);
    expect(verifyVersionLog(`${good}{oops\n`, serializeCatalog(c2))[0]).toMatchObject({
      path: `${VERSION_LOG_PATH}:3`,
      code: "version-log-invalid",
    });
    expect(verifyVersionLog(undefined, serializeCatalog(c2))).toEqual([]);
  });
});

describe("diff and rollback of versions", () => {
  const files = (c: ReturnType<typeof catalog>, extra: Record<string, string> = {}) =>
    new Map<string, string>([
      ["memory/catalog.json", serializeCatalog(c)],
      ...c.entries.map((e): [string, string] => [
        e.path,
        JSON.stringify({ facts: [`fact ${e.engram_id}`] }),
      ]),
      ...Object.entries(extra),
    ]);

  it("diff reads any JSON document as {key, value} and lists facts of engrams", () => {
    const a = files(catalog(1, [1]), { "memory/state/build.json": '{"key":"build","value":1}' });
    const b = files(catalog(2, [1, 2]), {
      "memory/state/build.json": '{"key":"build","value":2}',
      "memory/core/plain.json": '["no key"]',
    });
    const d = diffVersions(a, b);
    expect(d.engrams.added.map((e) => e.engram_id)).toEqual([entry(2).engram_id]);
    expect(d.facts.added).toEqual([`fact ${entry(2).engram_id}`]);
    expect(d.state).toEqual([{ key: "build", change: "changed", old: 1, new: 2 }]);
    expect(d.core).toEqual([{ key: "plain", change: "added", new: ["no key"] }]);
    expect(diffVersions(b, b)).toMatchObject({ engrams: { added: [], removed: [] }, state: [] });
  });

  it("rollback lists exactly the target's engrams one version above the current one", () => {
    const target = catalog(1, [1]);
    const current = catalog(3, [2, 3]);
    const plan = planRollback(
      { catalog: current, files: files(current, { "memory/state/x.json": "{}" }) },
      { catalog: target, files: files(target) },
      T,
    );
    expect(plan.catalog.catalog_version).toBe(4);
    expect(plan.catalog.entries).toEqual(target.entries);
    expect(plan.deletes).toEqual([entry(2).path, entry(3).path, "memory/state/x.json"]);
    expect(plan.writes.map((w) => w.path)).toEqual([entry(1).path, "memory/catalog.json"]);
  });
});

describe("a proposal replayed on a newer main", () => {
  it("keeps main's log and adds one line for the rebuilt version", () => {
    const base = catalog(1, [1]);
    const proposal = catalog(2, [1, 2]);
    const onto = catalog(2, [1, 3]);
    const log = (...cs: ReturnType<typeof catalog>[]) =>
      cs.reduce<string | undefined>(
        (text, c) => logWith(text, recordFor(c, { kind: "cycle" }, countsOf(c, [], undefined))),
        undefined,
      ) as string;
    const withLog = (c: ReturnType<typeof catalog>, text: string) => {
      const f = new Map<string, string>([
        ["memory/catalog.json", serializeCatalog(c)],
        [VERSION_LOG_PATH, text],
      ]);
      for (const e of c.entries) f.set(e.path, "{}");
      return { catalog: c, files: f };
    };
    const out = replay(
      base,
      withLog(proposal, log(base, proposal)),
      withLog(onto, log(base, onto)),
      new Set(),
    );
    const records = parseVersionLog(out.files.files.get(VERSION_LOG_PATH) as string);
    expect(records.map((r) => [r.version, r.catalog_hash])).toEqual([
      [1, base.hash],
      [2, onto.hash],
      [3, out.files.catalog.hash],
    ]);
  });
});
