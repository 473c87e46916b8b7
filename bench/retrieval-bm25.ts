/**
 * The baseline of the retrieval benchmark: BM25 as MiniSearch ranks with its defaults (its
 * tokenizer, no prefix or fuzzy match, OR of the terms), one document per note or per commit.
 * It returns whole documents, so its tokens are those of the five documents it ranks first.
 */
import MiniSearch from "minisearch";
import { countTokens } from "../src/graph/tokens.js";
import { TOP_K } from "./retrieval-score.js";

export interface BaselineDoc {
  id: string;
  text: string;
}

export interface BaselineAnswer {
  /** Ids of the top 5 documents, best first. */
  ids: string[];
  tokens: number;
}

export interface Baseline {
  name: string;
  ask(question: string): BaselineAnswer;
}

export function bm25Baseline(docs: readonly BaselineDoc[]): Baseline {
  const index = new MiniSearch<BaselineDoc>({ fields: ["text"] });
  index.addAll(docs);
  const texts = new Map(docs.map((d) => [d.id, d.text]));
  const tokens = new Map<string, number>();
  const tokensOf = (id: string) => {
    let n = tokens.get(id);
    if (n === undefined) {
      n = countTokens(texts.get(id) ?? "");
      tokens.set(id, n);
    }
    return n;
  };
  return {
    name: "bm25",
    ask(question) {
      const ids = index
        .search(question)
        .slice(0, TOP_K)
        .map((r) => String(r.id));
      return { ids, tokens: ids.reduce((n, id) => n + tokensOf(id), 0) };
    },
  };
}
