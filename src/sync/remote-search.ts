import type { RepoContext } from "../context/repo-context.js";
import { trustOf } from "../context/trust.js";
import { tokenize } from "../core/recall/recall.js";
import { type RemoteHit, scoreByWords } from "../core/sync/remote-recall.js";
import { graphitiUrl, notionAccess } from "../core/trust/destinations.js";

/** How long one store may take to answer a recall: an agent is waiting. */
const RECALL_TIMEOUT_SECONDS = 10;

/** A store hybrid recall can search. */
export interface RecallSearcher {
  readonly name: string;
  search(query: string, limit: number): Promise<RemoteHit[]>;
  close(): Promise<void>;
}

/**
 * The searcher of one target, its client loaded only now: a recall that asks no store never
 * loads `@notionhq/client` or the MCP client.
 */
export async function openSearcher(
  ctx: RepoContext,
  target: "notion" | "graphiti",
): Promise<RecallSearcher> {
  const sync = ctx.config.sync;
  if (target === "notion") {
    const [{ NotionTarget }, { readRecordedIds }] = await Promise.all([
      import("./targets/notion-target.js"),
      import("./state-paths.js"),
    ]);
    const access = notionAccess(sync.notion, trustOf(ctx));
    const config = {
      ...sync.notion,
      base_url: access.url,
      token_env: access.tokenVar,
      timeout_seconds: Math.min(sync.notion.timeout_seconds, RECALL_TIMEOUT_SECONDS),
    };
    const notion = new NotionTarget({
      config,
      token: access.token,
      recorded: readRecordedIds(ctx),
      // A rate-limited store is reported, not waited for: the agent asking is waiting too.
      retries: 0,
    });
    return {
      name: "notion",
      async search(query, limit) {
        const words = [...new Set(tokenize(query))];
        const found = await notion.search(words, limit);
        return found
          .map(
            (f): RemoteHit => ({
              source: "notion",
              remote_id: f.page_id,
              kind: f.type,
              title: f.title,
              snippet: Array.from(f.title).slice(0, 200).join(""),
              score: scoreByWords(query, `${f.title} ${f.tags.join(" ")}`),
              sync_key: f.sync_key,
              local_id: f.local_id,
              url: f.url,
            }),
          )
          .filter((h) => h.score > 0);
      },
      close: async () => undefined,
    };
  }
  const { GraphitiTarget } = await import("./targets/graphiti-target.js");
  const graphiti = new GraphitiTarget({
    config: {
      ...sync.graphiti,
      url: graphitiUrl(sync.graphiti, trustOf(ctx)),
      retries: 0,
      timeout_seconds: Math.min(sync.graphiti.timeout_seconds, RECALL_TIMEOUT_SECONDS),
    },
  });
  const groups = [...new Set(Object.values(sync.graphiti.groups))];
  return {
    name: "graphiti",
    async search(query, limit) {
      const nodes = (await graphiti.searchNodes(query, groups, limit)) as {
        nodes?: { uuid?: string; name?: string; summary?: string }[];
      } | null;
      const facts = (await graphiti.searchFacts(query, groups, limit)) as {
        facts?: { uuid?: string; fact?: string; name?: string }[];
      } | null;
      // Graphiti ranks by meaning, not by words: its order is kept as the score.
      const ranked = (kind: string, list: { uuid?: string; title: string; text: string }[]) =>
        list.map(
          (x, i): RemoteHit => ({
            source: "graphiti",
            remote_id: x.uuid ?? "",
            kind,
            title: x.title,
            snippet: Array.from(x.text).slice(0, 200).join(""),
            score: Math.round((1 / (1 + i)) * 1000) / 1000,
            sync_key: null,
            local_id: null,
            url: null,
          }),
        );
      return [
        ...ranked(
          "node",
          (nodes?.nodes ?? []).map((n) => ({
            uuid: n.uuid,
            title: n.name ?? "",
            text: n.summary ?? n.name ?? "",
          })),
        ),
        ...ranked(
          "fact",
          (facts?.facts ?? []).map((f) => ({
            uuid: f.uuid,
            title: f.name ?? f.fact ?? "",
            text: f.fact ?? "",
          })),
        ),
      ].filter((h) => h.remote_id !== "");
    },
    close: () => graphiti.close(),
  };
}
