import { describe, expect, it } from "vitest";
import { learningId } from "../../../src/core/graph/learnings.js";
import {
  engramHashOf,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../../../src/core/model/engram.js";
import { CATALOG_PATH } from "../../../src/core/model/paths.js";
import type { MemoryFiles } from "../../../src/core/proposal/replay.js";
import { type ItemDecisions, withholdItems } from "../../../src/core/proposal/withhold.js";
import type { Engram } from "../../../src/schema/engram.js";
import { catalogOf, engram } from "../focus-fixtures.js";

const SECRET = "zq9Vt4LmR7xKp2WcB8nYh3JdF6gSa1Ue";
const MEMORY = {
  memory_md_max_bytes: 16_384,
  memory_md_max_items: 60,
  memory_md_update_cadence: "on_merge" as const,
};
const NONE: ItemDecisions = { rejected: new Set(), released: new Set() };

function filesOf(engrams: Engram[]): MemoryFiles {
  const catalog = catalogOf(engrams, 4);
  const files = new Map<string, string>([[CATALOG_PATH, serializeCatalog(catalog)]]);
  for (const [i, e] of engrams.entries()) {
    files.set(
      catalog.entries.find((x) => x.engram_id === e.engram_id)?.path ?? `${i}`,
      serializeEngram(e),
    );
  }
  return { catalog, files };
}

function engramsIn(files: MemoryFiles): Engram[] {
  return files.catalog.entries.map((e) => JSON.parse(files.files.get(e.path) as string) as Engram);
}

describe("withholdItems", () => {
  const merged = engram({ version: "20250101-000000Z", facts: ["merged fact"] });
  const leaky = engram({
    version: "20250102-000000Z",
    facts: ["the build uses tsc", `the deploy token is ${SECRET}`],
  });
  const only = engram({ version: "20250103-000000Z", facts: ["pin the driver forever"] });
  const lt = sealEngram({
    ...(({ engram_id: _i, hash: _h, ...b }) => b)(
      engram({ scope: "lt", version: "20250104-000000Z", facts: ["the build uses tsc"] }),
    ),
    supersedes: [leaky.engram_id],
  });
  const staged = filesOf([merged, leaky, only, lt]);
  const mainIds = new Set([merged.engram_id]);

  it("holds a secret-like item: its engram sealed again without it, supersedes followed, no byte left", () => {
    const { files, withheld } = withholdItems({
      files: staged,
      mainIds,
      decisions: NONE,
      memory: MEMORY,
    });
    expect(withheld).toEqual([
      {
        id: learningId(`the deploy token is ${SECRET}`),
        reason: "held",
        kind: "fact",
        text: "the deploy token is zq9V…",
        engram_id: leaky.engram_id,
      },
    ]);
    expect([...files.files.values()].join("\n")).not.toContain(SECRET);
    const after = engramsIn(files);
    for (const e of after)
      expect(engramHashOf(e as unknown as Record<string, unknown>)).toBe(e.hash);
    const rewritten = after.find((e) => e.facts.includes("the build uses tsc") && e.scope === "st");
    expect(rewritten?.facts).toEqual(["the build uses tsc"]);
    expect(rewritten?.engram_id).not.toBe(leaky.engram_id);
    expect(after.find((e) => e.scope === "lt")?.supersedes).toEqual([rewritten?.engram_id]);
    expect(after.map((e) => e.engram_id)).toContain(merged.engram_id);
  });

  it("lets a released item through, drops an engram left empty by a rejection, and a rewrite a closed pull request rejected", () => {
    const secretId = learningId(`the deploy token is ${SECRET}`);
    const released = withholdItems({
      files: staged,
      mainIds,
      decisions: {
        rejected: new Set([learningId("pin the driver forever")]),
        released: new Set([secretId]),
      },
      memory: MEMORY,
    });
    expect(released.withheld.map((w) => w.reason)).toEqual(["rejected"]);
    const ids = released.files.catalog.entries.map((e) => e.engram_id);
    // Kept, and sealed again with the release recorded: the guard reads it on the branch.
    const kept = released.files.catalog.entries
      .map((e) => JSON.parse(released.files.files.get(e.path) ?? "{}") as Engram)
      .find((e) => e.released !== undefined);
    expect(kept?.released).toEqual([secretId]);
    expect(kept?.facts).toEqual(leaky.facts);
    expect(ids).not.toContain(leaky.engram_id);
    expect(ids).not.toContain(only.engram_id);
    expect(
      released.files.files.has(
        staged.catalog.entries.find((e) => e.engram_id === only.engram_id)?.path ?? "",
      ),
    ).toBe(false);

    // The branch showed the rewritten engram and its pull request was closed: it stays out.
    const shown = withholdItems({ files: staged, mainIds, decisions: NONE, memory: MEMORY });
    const rewrittenId = shown.files.catalog.entries.find(
      (e) => e.scope === "st" && e.engram_id !== merged.engram_id && e.engram_id !== only.engram_id,
    )?.engram_id as string;
    const closed = withholdItems({
      files: staged,
      mainIds,
      decisions: NONE,
      rejectedEngrams: new Set([rewrittenId]),
      memory: MEMORY,
    });
    expect(closed.files.catalog.entries.map((e) => e.engram_id)).not.toContain(rewrittenId);
  });

  it("changes nothing when nothing is withheld, and never touches merged engrams", () => {
    const clean = filesOf([merged, only]);
    expect(withholdItems({ files: clean, mainIds, decisions: NONE, memory: MEMORY }).files).toBe(
      clean,
    );
    const rejectMerged = withholdItems({
      files: clean,
      mainIds,
      decisions: { rejected: new Set([learningId("merged fact")]), released: new Set() },
      memory: MEMORY,
    });
    expect(rejectMerged.files).toBe(clean);
  });

  it("takes a tentative fact out with its fact: one item, held once, rejected by the id the body shows", () => {
    const asked = `Question: is the staging token ${SECRET} still live?`;
    const plain = "Question: do we keep invoice PDFs for 7 or 10 years?";
    const base = engram({
      version: "20250105-000000Z",
      facts: ["the admin tool is behind the VPN", asked, plain],
    });
    const unsure = sealEngram({
      ...(({ engram_id: _i, hash: _h, ...b }) => b)(base),
      tentative: [asked, plain],
    });
    const held = withholdItems({
      files: filesOf([unsure]),
      mainIds: new Set(),
      decisions: NONE,
      memory: MEMORY,
    });
    expect(held.withheld.map((w) => w.kind)).toEqual(["question"]);
    expect([...held.files.files.values()].join("\n")).not.toContain(SECRET);
    const rejected = withholdItems({
      files: filesOf([unsure]),
      mainIds: new Set(),
      decisions: {
        rejected: new Set([learningId(plain.slice("Question: ".length))]),
        released: new Set(),
      },
      memory: MEMORY,
    });
    const [after] = engramsIn(rejected.files).filter((e) =>
      e.facts.includes("the admin tool is behind the VPN"),
    );
    // The held question and the rejected one are gone from both lists.
    expect(after?.facts).toEqual(["the admin tool is behind the VPN"]);
    expect(after?.tentative).toBeUndefined();
  });
});
