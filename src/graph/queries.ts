import type { RepoContext } from "../context/repo-context.js";
import { answerTexts, type ContextItem, contextFromIndex } from "../core/graph/context.js";
import {
  buildContextIndex,
  ContextIndexReader,
  indexInSorted,
} from "../core/graph/context-index.js";
import { buildTokenMemo, memoCounter, type TokenMemo } from "../core/graph/context-tokens.js";
import { type Freshness, freshnessOfAll } from "../core/graph/freshness.js";
import type { LearningType } from "../core/graph/learnings.js";
import type { Env } from "../github/client.js";
import {
  type CachedIndex,
  contextIndexKey,
  readContextIndex,
  readTokenWords,
  writeContextIndex,
  writeTokenWords,
} from "./context-cache.js";
import { learningScope, type MemoryScope, type MemoryVersion, versionOf } from "./scope.js";
import { countTokens, singleTokenWords, splitTokens, TOKENIZER } from "./tokens.js";

export interface TopicContext {
  status: "found" | "no_match" | "memory_empty";
  message: string;
  scope: MemoryScope;
  topic: string;
  max_tokens: number;
  tokens: number;
  tokenizer: string;
  items: ContextItem[];
  omitted: number;
  markdown: string;
}

// A long-lived process (the MCP server) keeps the last index it read: a call then costs
// two stats of the catalog and registry, not a read of the index.
let lastIndex: CachedIndex | undefined;

/** The context index of memory as it is now, from the state folder or built and stored there. */
async function contextIndexOf(ctx: RepoContext): Promise<CachedIndex> {
  const { key, remember } = contextIndexKey(ctx);
  let cached = lastIndex?.key === key ? lastIndex : readContextIndex(ctx, key);
  if (cached === undefined) {
    // The graph (engrams, registry, git) is loaded only to build the index, not to read it.
    const { loadGraph } = await import("./graph.js");
    const graph = await loadGraph(ctx);
    const memory = versionOf(graph.catalog);
    const index = buildContextIndex(graph.learnings);
    const texts = answerTexts(new ContextIndexReader(index), scopeLineOf(ctx, memory));
    cached = { key, memory, index, tokens: buildTokenMemo(texts, splitTokens, countTokens) };
    if (readTokenWords(ctx) === undefined) writeTokenWords(ctx, singleTokenWords());
    // Stored only when memory did not change while it was read: the key must name its content.
    if (contextIndexKey(ctx).key === key) writeContextIndex(ctx, cached);
  }
  remember();
  lastIndex = cached;
  return cached;
}

// The tokenizer's counts, remembered with the index, then its one-token words; the tokenizer
// itself only for a text holding a piece neither knows (a rare topic word found nowhere in
// memory). One counter per memo, so a long-lived process builds its lookup table once.
const counters = new WeakMap<TokenMemo, (text: string) => number>();
function counterOf(ctx: RepoContext, tokens: TokenMemo): (text: string) => number {
  let counter = counters.get(tokens);
  if (counter === undefined) {
    let words: readonly string[] | undefined;
    const single = (piece: string) => {
      words ??= readTokenWords(ctx) ?? [];
      return indexInSorted(words, piece) >= 0;
    };
    counter = memoCounter(tokens, splitTokens, countTokens, single);
    counters.set(tokens, counter);
  }
  return counter;
}

function scopeLineOf(ctx: RepoContext, memory: MemoryVersion): string {
  return `engram memory of ${ctx.repoDir}, version ${memory.memory_version}, tiers lt+st, local only`;
}

export async function topicContext(
  ctx: RepoContext,
  topic: string,
  options: { maxTokens: number; type?: LearningType | undefined },
): Promise<TopicContext> {
  const { memory, index, tokens } = await contextIndexOf(ctx);
  const scope = learningScope(ctx, memory, index.count);
  const r = contextFromIndex(new ContextIndexReader(index), {
    topic,
    maxTokens: options.maxTokens,
    type: options.type,
    countTokens: counterOf(ctx, tokens),
    scopeLine: scopeLineOf(ctx, memory),
  });
  const status =
    scope.learnings_in_scope === 0 ? "memory_empty" : r.items.length === 0 ? "no_match" : "found";
  const message =
    status === "memory_empty"
      ? `memory version ${scope.memory_version} of ${ctx.repoDir} holds no learnings: memory is empty, not the topic`
      : status === "no_match"
        ? `none of ${scope.learnings_in_scope} learnings relates to "${topic}"${r.omitted > 0 ? ` within ${options.maxTokens} tokens` : ""}`
        : `${r.items.length} learning(s), ${r.tokens} tokens`;
  return {
    status,
    message,
    scope,
    topic,
    max_tokens: options.maxTokens,
    tokens: r.tokens,
    tokenizer: TOKENIZER,
    items: r.items,
    omitted: r.omitted,
    markdown: r.markdown,
  };
}

export interface FreshnessReport {
  scope: MemoryScope;
  threshold_days: number;
  now: string;
  fresh: number;
  stale: number;
  temporal_stale: number;
  learnings: Freshness[];
}

export async function learningFreshness(
  ctx: RepoContext,
  options: {
    thresholdDays: number;
    now: number;
    /** Where GitHub's settings come from (GITHUB_TOKEN...); without it, git alone. */
    env?: Env | undefined;
  },
): Promise<FreshnessReport> {
  const [{ loadGraph }, { githubActivity }] = await Promise.all([
    import("./graph.js"),
    import("./github-activity.js"),
  ]);
  const github = await githubActivity(ctx, options.env ?? {});
  const graph = await loadGraph(ctx, { pulls: github.updated });
  const verdict = { thresholdDays: options.thresholdDays, now: options.now };
  const learnings = freshnessOfAll(
    graph.learnings,
    graph.confirmedOf,
    graph.activityOf,
    verdict,
  ).sort(
    (a, b) =>
      Number(a.fresh) - Number(b.fresh) ||
      a.contextual_at.localeCompare(b.contextual_at) ||
      a.id.localeCompare(b.id),
  );
  return {
    scope: learningScope(ctx, versionOf(graph.catalog), graph.learnings.length, {
      git: true,
      github: github.source,
    }),
    threshold_days: options.thresholdDays,
    now: new Date(options.now * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    fresh: learnings.filter((l) => l.fresh).length,
    stale: learnings.filter((l) => !l.fresh).length,
    temporal_stale: learnings.filter((l) => !l.temporal_fresh).length,
    learnings,
  };
}
