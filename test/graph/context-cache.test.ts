import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RepoContext } from "../../src/context/repo-context.js";
import { answerTexts, contextFromIndex } from "../../src/core/graph/context.js";
import {
  buildContextIndex,
  type ContextIndex,
  ContextIndexReader,
} from "../../src/core/graph/context-index.js";
import { buildTokenMemo } from "../../src/core/graph/context-tokens.js";
import type { LinkedLearning } from "../../src/core/graph/entities.js";
import { learningId } from "../../src/core/graph/learnings.js";
import {
  contextIndexKey,
  readContextIndex,
  writeContextIndex,
} from "../../src/graph/context-cache.js";
import { countTokens as realCount, splitTokens } from "../../src/graph/tokens.js";
import { statePaths } from "../../src/state/paths.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function repo(): RepoContext {
  const repoDir = mkdtempSync(join(tmpdir(), "engram-ctx-index-"));
  made.push(repoDir);
  mkdirSync(join(repoDir, "memory"), { recursive: true });
  writeFileSync(join(repoDir, "memory", "catalog.json"), '{"catalog_version":1}');
  return {
    repoDir,
    config: {} as RepoContext["config"],
    configPath: join(repoDir, "config", "dev.toml"),
    paths: statePaths(repoDir, ".engram"),
  };
}

const learnings: LinkedLearning[] = Array.from({ length: 300 }, (_, i) => {
  const text = `${["planner", "cache", "retry", "queue"][i % 4]} fact ${i} touching ünïcode ${i % 7}`;
  return {
    id: learningId(text),
    type: i % 3 === 0 ? "decision" : "insight",
    text,
    rationale: i % 5 === 0 ? `because of ${i}` : null,
    engrams: [`e_${i}`],
    scope: "lt",
    evidence: 1 + (i % 3),
    written_at: "2026-01-01T00:00:00Z",
    topics: [`topic${i % 9}`],
    links: [],
    senders: [],
    entities: [`file:src/f${i % 11}.ts`, `person:p${i % 5}`].sort(),
    unlinked: [],
  };
});

const memory = { memory_version: 1, catalog_hash: "sha256:00" };
const countTokens = (t: string) => t.length;
const tokensOf = (index: ContextIndex) =>
  buildTokenMemo(answerTexts(new ContextIndexReader(index), "s"), splitTokens, realCount);

describe("context index on disk", () => {
  it("reads back what it wrote and answers as the index in memory", () => {
    const ctx = repo();
    const { key, remember } = contextIndexKey(ctx);
    const index = buildContextIndex(learnings);
    const tokens = tokensOf(index);
    writeContextIndex(ctx, { key, memory, index, tokens });
    remember();
    const stored = readContextIndex(ctx, key);
    expect(stored?.memory).toEqual(memory);
    expect(stored?.tokens).toEqual(tokens);
    for (const topic of ["planner", "cache retry", "src/f3.ts", "topic4 ünïcode", "nothing"]) {
      for (const type of [undefined, "decision" as const]) {
        const options = { topic, type, maxTokens: 3000, countTokens, scopeLine: "s" };
        const fromDisk = contextFromIndex(new ContextIndexReader(stored?.index as never), options);
        expect(fromDisk).toEqual(contextFromIndex(new ContextIndexReader(index), options));
      }
    }
  });

  it("is keyed by the catalog's and the registry's bytes, and rebuilt when either changes", () => {
    const ctx = repo();
    const first = contextIndexKey(ctx);
    const index = buildContextIndex(learnings);
    writeContextIndex(ctx, { key: first.key, memory, index, tokens: tokensOf(index) });
    first.remember();
    expect(contextIndexKey(ctx).key).toBe(first.key);
    // The same bytes written again (a new file, a new stamp): the same key.
    const catalog = join(ctx.repoDir, "memory", "catalog.json");
    writeFileSync(catalog, readFileSync(catalog));
    expect(contextIndexKey(ctx).key).toBe(first.key);
    writeFileSync(catalog, '{"catalog_version":2}');
    const second = contextIndexKey(ctx).key;
    expect(second).not.toBe(first.key);
    expect(readContextIndex(ctx, second)).toBeUndefined();
    mkdirSync(join(ctx.repoDir, "config"), { recursive: true });
    writeFileSync(join(ctx.repoDir, "config", "registry.toml"), "");
    expect(contextIndexKey(ctx).key).not.toBe(second);
  });

  it("writes the same bytes for the same memory, and ignores a damaged file", () => {
    const a = repo();
    const b = repo();
    const key = contextIndexKey(a).key;
    expect(contextIndexKey(b).key).toBe(key);
    const index = buildContextIndex(learnings);
    const reversed = buildContextIndex([...learnings].reverse());
    writeContextIndex(a, { key, memory, index, tokens: tokensOf(index) });
    writeContextIndex(b, { key, memory, index: reversed, tokens: tokensOf(reversed) });
    const file = (ctx: RepoContext) => join(ctx.paths.root, "graph", "context.idx");
    expect(readFileSync(file(a)).equals(readFileSync(file(b)))).toBe(true);
    truncateSync(file(a), 100);
    expect(readContextIndex(a, key)).toBeUndefined();
  });

  it("checks the ranking's arrays it stores: a damaged table rebuilds, a damaged posting matches nothing", () => {
    const ctx = repo();
    const { key } = contextIndexKey(ctx);
    const index = buildContextIndex(learnings);
    writeContextIndex(ctx, { key, memory, index, tokens: tokensOf(index) });
    const path = join(ctx.paths.root, "graph", "context.idx");
    const clean = readFileSync(path);
    const header = JSON.parse(clean.subarray(4, 4 + clean.readUInt32LE(0)).toString("utf8")) as {
      sections: Record<string, [number, number, number]>;
    };
    const damaged = (name: string, write: (b: Buffer, at: number) => void) => {
      const b = Buffer.from(clean);
      write(b, (header.sections[name] as [number, number, number])[0]);
      writeFileSync(path, b);
    };
    // Two notes standing for one learning: the table is refused and the file rebuilt.
    damaged("recall.positions", (b, at) => b.writeInt32LE(b.readInt32LE(at + 4), at));
    expect(readContextIndex(ctx, key)).toBeUndefined();
    damaged("recall.textOffsets", (b, at) => b.writeUInt32LE(7, at));
    expect(readContextIndex(ctx, key)).toBeUndefined();
    // A weight that is not a number, a posting past the notes: read lazily, matched as nothing.
    damaged("recall.textWeights", (b, at) => {
      for (let k = 0; k < 64; k++) b.writeDoubleLE(Number.NaN, at + 8 * k);
      const docs = (header.sections["recall.textDocs"] as [number, number, number])[0];
      for (let k = 64; k < 128; k++) b.writeInt32LE(1_000_000, docs + 4 * k);
    });
    const stored = readContextIndex(ctx, key);
    expect(stored).toBeDefined();
    for (const topic of ["planner", "cache retry", "topic4"]) {
      const r = contextFromIndex(new ContextIndexReader(stored?.index as never), {
        topic,
        maxTokens: 3000,
        countTokens,
        scopeLine: "s",
      });
      expect(r.items.every((i) => Number.isFinite(i.score))).toBe(true);
    }
  });
});
