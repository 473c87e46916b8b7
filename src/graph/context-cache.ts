import { closeSync, mkdirSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import type { ContextIndex, Postings } from "../core/graph/context-index.js";
import { type LearningRecallArrays, learningRecallSource } from "../core/graph/context-rank.js";
import type { TokenMemo } from "../core/graph/context-tokens.js";
import { CATALOG_PATH, REGISTRY_PATH } from "../core/model/paths.js";
import { StateError } from "../errors.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { MemoryVersion } from "./scope.js";
import { SPLIT_PATTERN } from "./tokens.js";

/**
 * The context index of `src/core/graph/context-index.ts` on disk, in the state folder beside
 * the graph's other caches: a JSON header (key, scope, entity names, section table) followed
 * by the index's arrays as raw 32-bit words, so that loading it is one read and a few array
 * views, not a parse of every learning; and the ranking's index of the learnings (recall's,
 * as JSON), checked as it is read. The key is the digest of the catalog's and the
 * registry's bytes: the index is derived, and the same memory gives the same file.
 */

// 3: state and core documents are items of the index beside the learnings, and the header
// carries the tokenizer's counts of every piece an answer can hold.
// 6: only the current side of supersession is indexed.
// 7: matches are ranked by recall's ranking: its index of the learnings replaces the terms.
const FORMAT = "engram-context-index/7";

interface Header extends MemoryVersion {
  format: string;
  key: string;
  endian: string;
  count: number;
  entities: string[];
  /** The ranking's terms (sorted) and exact topics, whose lists the sections hold. */
  recallTerms: string[];
  recallPhrases: string[];
  tokens: TokenMemo;
  /** The pattern the memo's pieces were split with: another tokenizer, another memo. */
  split: string;
  /** name -> [byte offset, element count, byte length]. */
  sections: Record<string, [number, number, number]>;
}

export interface CachedIndex {
  key: string;
  memory: MemoryVersion;
  index: ContextIndex;
  /** The tokenizer's counts of the pieces answers are made of. */
  tokens: TokenMemo;
}

function indexPath(ctx: RepoContext): string {
  return join(ctx.paths.root, "graph", "context.idx");
}

function stampPath(ctx: RepoContext): string {
  return join(ctx.paths.root, "graph", "context.stamp");
}

function fileStamp(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.size}:${s.mtimeNs}:${s.ino}`;
  } catch {
    return "missing";
  }
}

/**
 * sha256, loaded only when a key must be computed: an unchanged catalog is known by its
 * stamp, and a warm answer should not pay for loading the crypto module.
 */
function sha256(): import("node:crypto").Hash {
  const { createHash } = createRequire(import.meta.url)(
    "node:crypto",
  ) as typeof import("node:crypto");
  return createHash("sha256");
}

function digestOf(path: string): string {
  try {
    return sha256().update(readFileSync(path)).digest("hex");
  } catch {
    return "missing";
  }
}

/**
 * The key of the index for the memory as it is now. The digest of the catalog (4 MB at
 * 10,000 engrams) is remembered beside the file's size, modification time and inode, so an
 * unchanged catalog costs two `stat` calls instead of a read and a hash.
 */
export function contextIndexKey(ctx: RepoContext): { key: string; remember: () => void } {
  const catalog = join(ctx.repoDir, CATALOG_PATH);
  const registry = join(ctx.repoDir, REGISTRY_PATH);
  const stamp = `${fileStamp(catalog)} ${fileStamp(registry)}`;
  try {
    const known = JSON.parse(readFileSync(stampPath(ctx), "utf8")) as {
      stamp: string;
      key: string;
    };
    if (known.stamp === stamp && typeof known.key === "string")
      return { key: known.key, remember: () => {} };
  } catch {
    // No stamp yet, or a damaged one: hash the files below.
  }
  const key = sha256()
    .update(`${FORMAT}\n${digestOf(catalog)}\n${digestOf(registry)}\n`)
    .digest("hex");
  return {
    key,
    remember: () => {
      mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
      writeFileAtomicSync(stampPath(ctx), JSON.stringify({ stamp, key }));
    },
  };
}

/** Sections read with the header; the others stay on disk until a query asks for a range. */
const EAGER = [
  "types",
  "evidence",
  "learningEntities.offsets",
  "learningEntities.refs",
  "entityLearnings.offsets",
  "entityLearnings.refs",
  "recall.positions",
  "recall.scopes",
  "recall.recency",
  "recall.df",
  "recall.textOffsets",
  "recall.topicOffsets",
  "recall.phraseOffsets",
  "records.offsets",
] as const;
const LAZY = [
  "recall.textDocs",
  "recall.textWeights",
  "recall.topicDocs",
  "recall.phraseDocs",
  "records.bytes",
] as const;

function readAt(path: string, position: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  const fd = openSync(path, "r");
  try {
    let done = 0;
    while (done < length) {
      const n = readSync(fd, out, done, length - done, position + done);
      if (n === 0) throw new StateError(`${path}: shorter than its header says`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** Aligned for 32-bit views: a buffer from Node's pool may start anywhere. */
function aligned(b: Buffer): Buffer {
  return b.byteOffset % 4 === 0 ? b : Buffer.from(b);
}

/**
 * The index stored under `key`, or undefined when there is none, another, or a damaged one.
 * The long sections (term postings, learning records) are read by range when a query needs
 * them; the file is replaced only atomically and the same key always names the same bytes,
 * so a range read later still matches the header read now.
 */
export function readContextIndex(ctx: RepoContext, key: string): CachedIndex | undefined {
  const path = indexPath(ctx);
  try {
    const headerLength = readAt(path, 0, 4).readUInt32LE(0);
    const header = JSON.parse(readAt(path, 4, headerLength).toString("utf8")) as Header;
    if (
      header.format !== FORMAT ||
      header.key !== key ||
      header.endian !== process.getBuiltinModule("node:os").endianness()
    )
      return undefined;
    const { chunks, counts } = header.tokens;
    if (header.split !== SPLIT_PATTERN || !Array.isArray(chunks) || !Array.isArray(counts))
      return undefined;
    if (chunks.length !== counts.length) return undefined;
    // A file cut short (a damaged disk, a copy in progress) is no index: rebuild it.
    const end = Math.max(...Object.values(header.sections).map(([o, , b]) => o + b));
    if (statSync(path).size < end) return undefined;
    const count = header.count;
    const at = (name: string) => header.sections[name] as [number, number, number];
    const start = at(EAGER[0])[0];
    const last = at("records.offsets");
    const eager = aligned(readAt(path, start, last[0] + last[2] - start));
    const words = (name: string) => {
      const [offset, length] = at(name);
      return new Uint32Array(eager.buffer, eager.byteOffset + offset - start, length);
    };
    const slice = (name: string, size: number) => {
      const [offset, length] = at(name);
      // A copy: 64-bit views need an alignment the file does not keep.
      return new Uint8Array(eager.buffer, eager.byteOffset + offset - start, length * size).slice()
        .buffer;
    };
    const lazy = <T>(name: string, size: number, make: (b: ArrayBuffer) => T) => {
      const [offset] = at(name);
      return (from: number, to: number) => {
        const b = readAt(path, offset + from * size, Math.max(0, to - from) * size);
        return make(new Uint8Array(b).buffer);
      };
    };
    const recall: LearningRecallArrays = {
      terms: header.recallTerms,
      phrases: header.recallPhrases,
      positions: new Int32Array(slice("recall.positions", 4)),
      scopes: words("recall.scopes"),
      recency: new Float64Array(slice("recall.recency", 8)),
      df: words("recall.df"),
      textOffsets: words("recall.textOffsets"),
      topicOffsets: words("recall.topicOffsets"),
      phraseOffsets: words("recall.phraseOffsets"),
      textDocs: lazy("recall.textDocs", 4, (b) => new Int32Array(b)),
      textWeights: lazy("recall.textWeights", 8, (b) => new Float64Array(b)),
      topicDocs: lazy("recall.topicDocs", 4, (b) => new Int32Array(b)),
      phraseDocs: lazy("recall.phraseDocs", 4, (b) => new Int32Array(b)),
    };
    // The ranking's arrays are input like the rest of the file: checked, or the file is rebuilt.
    if (!Array.isArray(recall.terms) || !Array.isArray(recall.phrases)) return undefined;
    if (!recall.terms.every((t) => typeof t === "string")) return undefined;
    if (!recall.phrases.every((t) => typeof t === "string")) return undefined;
    if (learningRecallSource(recall, count, () => ({ id: "", text: "" })) === undefined)
      return undefined;
    const lazyBytes = (name: string) => {
      const [offset] = at(name);
      return (from: number, to: number) => new Uint8Array(readAt(path, offset + from, to - from));
    };
    return {
      key,
      memory: { memory_version: header.memory_version, catalog_hash: header.catalog_hash },
      tokens: header.tokens,
      index: {
        count,
        types: new Uint8Array(eager.buffer, eager.byteOffset + at("types")[0] - start, count),
        evidence: words("evidence"),
        entities: header.entities,
        learningEntities: eagerPostings(words, "learningEntities"),
        entityLearnings: eagerPostings(words, "entityLearnings"),
        recall,
        records: { offsets: words("records.offsets"), read: lazyBytes("records.bytes") },
      },
    };
  } catch {
    return undefined;
  }
}

function eagerPostings(words: (name: string) => Uint32Array, name: string): Postings {
  return { offsets: words(`${name}.offsets`), refs: words(`${name}.refs`) };
}

export function writeContextIndex(ctx: RepoContext, cached: CachedIndex): void {
  const { index } = cached;
  const r = index.recall;
  const arrays: Record<
    (typeof EAGER)[number] | (typeof LAZY)[number],
    Uint8Array | Uint32Array | Int32Array | Float64Array
  > = {
    types: index.types,
    evidence: index.evidence,
    "learningEntities.offsets": index.learningEntities.offsets,
    "learningEntities.refs": index.learningEntities.refs,
    "entityLearnings.offsets": index.entityLearnings.offsets,
    "entityLearnings.refs": index.entityLearnings.refs,
    "recall.positions": r.positions,
    "recall.scopes": r.scopes,
    "recall.recency": r.recency,
    "recall.df": r.df,
    "recall.textOffsets": r.textOffsets,
    "recall.topicOffsets": r.topicOffsets,
    "recall.phraseOffsets": r.phraseOffsets,
    "records.offsets": index.records.offsets,
    "recall.textDocs": r.textDocs(0, last(r.textOffsets)),
    "recall.textWeights": r.textWeights(0, last(r.textOffsets)),
    "recall.topicDocs": r.topicDocs(0, last(r.topicOffsets)),
    "recall.phraseDocs": r.phraseDocs(0, last(r.phraseOffsets)),
    "records.bytes": index.records.read(
      0,
      index.records.offsets[index.records.offsets.length - 1] as number,
    ),
  };
  const parts = [...EAGER, ...LAZY].map((name) => [name, arrays[name]] as const);
  // Offsets depend on the header's length, which holds them: lay out relative to the body.
  const relative: Record<string, [number, number, number]> = {};
  let body = 0;
  for (const [name, array] of parts) {
    relative[name] = [body, array.length, array.byteLength];
    body += align(array.byteLength);
  }
  const header = (base: number): Header => ({
    format: FORMAT,
    key: cached.key,
    endian: process.getBuiltinModule("node:os").endianness(),
    ...cached.memory,
    count: index.count,
    entities: index.entities,
    recallTerms: r.terms,
    recallPhrases: r.phrases,
    tokens: cached.tokens,
    split: SPLIT_PATTERN,
    sections: Object.fromEntries(
      Object.entries(relative).map(([n, [o, l, b]]) => [n, [base + o, l, b]]),
    ),
  });
  // The body starts after the header; a longer offset can lengthen the header, so settle it.
  let base = 0;
  let text = "";
  for (;;) {
    text = JSON.stringify(header(base));
    const next = align(4 + Buffer.byteLength(text));
    if (next === base) break;
    base = next;
  }
  const out = Buffer.alloc(base + body);
  out.writeUInt32LE(Buffer.byteLength(text), 0);
  out.write(text, 4, "utf8");
  for (const [name, array] of parts) {
    const [offset] = relative[name] as [number, number, number];
    out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), base + offset);
  }
  mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
  writeFileAtomicSync(indexPath(ctx), out);
}

function last(offsets: Uint32Array): number {
  return offsets[offsets.length - 1] as number;
}

function align(n: number): number {
  return (n + 3) & ~3;
}

/**
 * The tokenizer's one-token words (`singleTokenWords`), kept beside the index: read only when
 * a topic holds a piece the index's memo lacks. Its first line names the pattern the words
 * were checked with; another pattern, another table.
 */
function wordsPath(ctx: RepoContext): string {
  return join(ctx.paths.root, "graph", "words.txt");
}

const WORDS_FORMAT = `engram-token-words/1 ${SPLIT_PATTERN}`;

export function readTokenWords(ctx: RepoContext): string[] | undefined {
  try {
    const lines = readFileSync(wordsPath(ctx), "utf8").split("\n");
    return lines[0] === WORDS_FORMAT ? lines.slice(1) : undefined;
  } catch {
    return undefined;
  }
}

export function writeTokenWords(ctx: RepoContext, words: readonly string[]): void {
  mkdirSync(join(ctx.paths.root, "graph"), { recursive: true });
  writeFileAtomicSync(wordsPath(ctx), [WORDS_FORMAT, ...words].join("\n"));
}
