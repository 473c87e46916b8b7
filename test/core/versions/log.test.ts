import { describe, expect, it } from "vitest";
import {
  appendVersion,
  parseVersionLog,
  renderVersionLog,
  type VersionRecord,
  versionTag,
} from "../../../src/core/versions/log.js";

const counts = { engrams: 3, episodes: 100, facts: 2, state: 1, core: 0 };
const v = (version: number, made_by: VersionRecord["made_by"]): VersionRecord => ({
  version,
  catalog_hash: `sha256:${String(version).padStart(64, "0")}`,
  created_at: "2026-01-01T00:00:00.000Z",
  made_by,
  counts,
});

describe("the version log", () => {
  it("round-trips byte for byte, one canonical line per version", () => {
    const log = appendVersion(
      appendVersion([], v(41, { kind: "cycle" })),
      v(42, { kind: "session", session_id: "s_1" }),
    );
    const text = renderVersionLog(log);
    expect(text.split("\n")).toHaveLength(3);
    expect(parseVersionLog(text)).toEqual(log);
    expect(renderVersionLog(parseVersionLog(text))).toBe(text);
  });

  it("refuses a version that does not increase, naming the line and field", () => {
    const text =
      renderVersionLog([v(3, { kind: "cycle" })]) + renderVersionLog([v(3, { kind: "restore" })]);
    expect(() => parseVersionLog(text)).toThrow(
      /versions\.ndjson:2: version: expected more than 3/,
    );
    expect(() => appendVersion([v(4, { kind: "cycle" })], v(2, { kind: "cycle" }))).toThrow(
      /cannot follow 4/,
    );
  });

  it("accepts the gap a proposal rebuilt on a newer main leaves", () => {
    const log = appendVersion([v(1, { kind: "cycle" })], v(3, { kind: "cycle" }));
    expect(parseVersionLog(renderVersionLog(log)).map((r) => r.version)).toEqual([1, 3]);
  });

  it("names the field of a malformed line", () => {
    expect(() => parseVersionLog('{"version":1}\n', "m/v.ndjson")).toThrow(
      /m\/v\.ndjson:1: catalog_hash/,
    );
    const bad = renderVersionLog([v(1, { kind: "rollback", target: 0 })]).replace(
      '"target":0',
      '"target":-1',
    );
    expect(() => parseVersionLog(bad)).toThrow(/made_by\.target/);
    expect(() => parseVersionLog("nope\n")).toThrow(/:1: \(line\): not JSON/);
  });

  it("names a version's snapshot tag", () => {
    expect(versionTag(42)).toBe("refs/tags/engram/v42");
  });
});
