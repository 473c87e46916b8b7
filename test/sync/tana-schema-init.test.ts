/**
 * `director sync init --target tana` makes its fields and supertags in several Input API
 * calls when the call limits say so. An init stopped between two calls (a failure, a kill)
 * must not leave the first calls' nodes as orphans that the next init makes again: each
 * call's nodes are recorded in the queue's mapping once answered, and the next init goes on
 * from them. Through the Input API alone (it cannot be searched).
 */
import { describe, expect, it } from "vitest";
import { TANA_FIELDS } from "../../src/core/sync/tana-nodes.js";
import { QueueStore } from "../../src/sync/queue-store.js";
import { recordIn } from "../../src/sync/tana-open.js";
import {
  schemaFromMapping,
  schemaProgressFromMapping,
} from "../../src/sync/targets/tana-schema.js";
import { FakeTana, QUICK_TANA_RATE } from "../support/fake-tana.js";
import {
  initTana,
  openTanaTarget,
  TANA_TAGS,
  tempSyncDir,
  useFakeTana,
} from "../support/tana-fixtures.js";

const fake = useFakeTana();

const LIMITS = { max_chars_per_call: 1000, local_api_url: undefined };

/** A target as a new process opens it: the mapping as the store holds it, progress recorded. */
function open(store: QueueStore) {
  return openTanaTarget(fake.tana, store, LIMITS, {
    mapping: store.load().mapping,
    recordSchemaProgress: recordIn(store),
  });
}

const live = (kind: "field" | "tag") =>
  [...fake.tana.store.nodes.values()].filter((n) => n.kind === kind && !n.inTrash);

describe("Tana: sync init stopped between its calls", () => {
  it("a clean init takes several calls (the premise of the cases below)", async () => {
    const store = new QueueStore(fake.dir, "tana");
    await initTana(store, open(store));
    expect(fake.tana.writes).toBeGreaterThan(3);
    expect(live("field")).toHaveLength(Object.keys(TANA_FIELDS).length);
  });

  // The call that fails (refused before the write: nothing of it is made).
  for (const failing of [1, 2, 3]) {
    it(`goes on from what it made when call ${failing + 1} fails: nothing made twice`, async () => {
      const clean = new FakeTana({
        token: "input-token",
        localToken: "local-token",
        perSecond: QUICK_TANA_RATE,
      });
      await clean.start();
      const cleanDir = tempSyncDir();
      const cleanStore = new QueueStore(cleanDir.dir, "tana");
      await initTana(
        cleanStore,
        openTanaTarget(clean, cleanStore, LIMITS, { mapping: cleanStore.load().mapping }),
      );
      const calls = clean.writes;
      await clean.stop();
      cleanDir.remove();

      const store = new QueueStore(fake.dir, "tana");
      fake.tana.inputScript = (r) =>
        r.writes === failing ? { kind: "status", status: 503 } : undefined;
      await expect(initTana(store, open(store))).rejects.toThrow();
      expect(fake.tana.writes).toBe(failing);
      fake.tana.inputScript = undefined;

      await initTana(store, open(store));
      // Every call carried out once, across both inits.
      expect(fake.tana.writes).toBe(calls);
      expect(live("field")).toHaveLength(Object.keys(TANA_FIELDS).length);
      for (const name of Object.values(TANA_TAGS)) {
        expect(live("tag").filter((t) => t.name === name)).toHaveLength(1);
      }
      // The recorded ids are those of the nodes Tana holds.
      const ids = schemaFromMapping(store.load().mapping, TANA_TAGS);
      expect(ids?.tags.learning).toBe(fake.tana.store.tagByName(TANA_TAGS.learning)?.id);
      const fieldIds = new Set(live("field").map((f) => f.id));
      for (const id of Object.values(ids?.fields.learning ?? {}))
        expect(fieldIds.has(id)).toBe(true);
    });
  }

  it("after a finished init its progress is marked used, so no later init reads it", async () => {
    const store = new QueueStore(fake.dir, "tana");
    await initTana(store, open(store));
    const mapping = store.load().mapping;
    const made = Object.entries(mapping).filter(([k]) => k.startsWith("tana-schema:made:"));
    expect(made.length).toBeGreaterThan(0);
    for (const [, entry] of made) expect(entry.content_hash).toBe("used");
    expect(schemaProgressFromMapping(mapping, TANA_TAGS)).toEqual({ fields: {}, tags: {} });
  });
});
