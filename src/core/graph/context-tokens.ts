/**
 * Token counts remembered with the context index, so that answering a topic does not load
 * the tokenizer's tables (a megabyte of code to compile per process).
 *
 * A BPE tokenizer of the cl100k family first splits a text into pieces with a fixed
 * pattern (its pre-tokenizer) and encodes each piece on its own: the count of a text is
 * exactly the sum of the counts of its pieces. The memo holds the count of every piece an
 * answer over the index can contain (the learnings' lines, the entities of "related through",
 * the header's words), each counted by the real tokenizer when the index was built. A text
 * is counted by splitting it with the tokenizer's own pattern and adding the remembered
 * counts; a piece the memo does not know (a topic word found nowhere in memory) sends the
 * whole text to the tokenizer. Either way the figure is the tokenizer's.
 */
export interface TokenMemo {
  /** Pieces, sorted by code units. */
  chunks: string[];
  /** The tokenizer's count of each piece. */
  counts: number[];
}

/**
 * The tokenizer's pre-tokenizer (gpt-tokenizer's `CL100K_TOKEN_SPLIT_REGEX`, which a test
 * holds equal to this): the pieces it encodes one by one. Written out so that splitting does
 * not load the library's module of every encoding's patterns; recall's estimate and the
 * context index's memo both split with it.
 */
export const SPLIT_PATTERN = String.raw`'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`;

/** The tokenizer's pre-tokenizer: a text's pieces, in order. */
export type SplitTokens = (text: string) => Iterable<string>;

/** Every special token of the cl100k family starts so; the tokenizer refuses them in text. */
const SPECIAL = "<|";

/**
 * The memo of `texts`' pieces, each counted with `count` (the real tokenizer). A piece the
 * pattern would split differently on its own is left out (its texts are counted whole), so
 * a remembered count is always what the tokenizer gives that piece in any text.
 */
export function buildTokenMemo(
  texts: Iterable<string>,
  split: SplitTokens,
  count: (text: string) => number,
): TokenMemo {
  const seen = new Set<string>();
  for (const text of texts) for (const piece of split(text)) seen.add(piece);
  const chunks: string[] = [];
  const counts: number[] = [];
  for (const piece of [...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (piece.includes(SPECIAL)) continue;
    const alone = [...split(piece)];
    if (alone.length !== 1 || alone[0] !== piece) continue;
    chunks.push(piece);
    counts.push(count(piece));
  }
  return { chunks, counts };
}

/**
 * A counter that adds the memo's counts and asks `live` (the tokenizer, loaded only then)
 * for a text holding a piece the memo lacks or a special token's opening. `single`, when
 * given, tells a piece the memo lacks that the tokenizer encodes as one token (a word of its
 * vocabulary, which it counts as 1 without encoding).
 */
export function memoCounter(
  memo: TokenMemo,
  split: SplitTokens,
  live: (text: string) => number,
  single: (piece: string) => boolean = () => false,
): (text: string) => number {
  let known: Map<string, number> | undefined;
  return (text) => {
    if (text.includes(SPECIAL)) return live(text);
    if (known === undefined) {
      known = new Map();
      for (let k = 0; k < memo.chunks.length; k++)
        known.set(memo.chunks[k] as string, memo.counts[k] as number);
    }
    let total = 0;
    for (const piece of split(text)) {
      const n = known.get(piece) ?? (single(piece) ? 1 : undefined);
      if (n === undefined) return live(text);
      total += n;
    }
    return total;
  };
}
