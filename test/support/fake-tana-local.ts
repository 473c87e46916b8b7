import type { FakeNode, FakeTanaStore, SearchQuery } from "./fake-tana-store.js";

/** One answer of the stand-in: a status and a JSON body. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The deepObject query of `/nodes/search` (`query[and][0][hasType]=x`) as a nested object. */
export function decodeQuery(params: URLSearchParams): SearchQuery {
  const root: SearchQuery = {};
  for (const [key, value] of params) {
    if (!key.startsWith("query[")) continue;
    const parts = [...key.slice("query".length).matchAll(/\[([^\]]*)\]/g)].map((m) => m[1] ?? "");
    let at: SearchQuery = root;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) at[part] = value;
      else {
        at[part] ??= {};
        at = at[part] as SearchQuery;
      }
    }
  }
  return root;
}

/**
 * The desktop app's Local API over the stand-in's store (health, workspaces, tags, fields,
 * search, read, update, field content, trash), answers as supertag-cli's
 * `types/local-api.ts` reads them from the app's `/openapi.json`.
 */
export function localApi(
  store: FakeTanaStore,
  method: string,
  url: URL,
  text: string,
  authorized: boolean,
): Answer {
  const path = url.pathname;
  if (path === "/health") {
    return {
      status: 200,
      body: { status: "ok", timestamp: new Date(0).toISOString(), nodeSpaceReady: true },
    };
  }
  if (!authorized) return { status: 401, body: { error: "Unauthorized" } };
  const json = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  const notFound = { status: 404, body: { error: `Not found: ${path}` } };
  if (method === "GET" && path === "/workspaces") return { status: 200, body: [store.workspace] };
  let m = /^\/workspaces\/([^/]+)\/tags$/.exec(path);
  if (method === "GET" && m) {
    if (m[1] !== store.workspace.id) return notFound;
    const tags = [...store.nodes.values()].filter((n) => n.kind === "tag" && !n.inTrash);
    return { status: 200, body: tags.map((t) => ({ id: t.id, name: t.name })) };
  }
  m = /^\/tags\/([^/]+)\/fields$/.exec(path);
  if (method === "POST" && m) {
    const tag = store.nodes.get(m[1] as string);
    if (tag?.kind !== "tag") return notFound;
    const created = store.addToNode({
      targetNodeId: "SCHEMA",
      nodes: [{ name: json.name, supertags: [{ id: "SYS_T02" }] }],
    })[0];
    return {
      status: 200,
      body: {
        tagId: tag.id,
        tagName: tag.name,
        fieldId: created?.nodeId,
        fieldName: json.name,
        dataType: json.dataType,
        message: "Field added",
      },
    };
  }
  if (method === "GET" && path === "/nodes/search") {
    const limit = Number(url.searchParams.get("limit") ?? "50");
    const offset = Number(url.searchParams.get("offset") ?? "0");
    if (limit > 100) return { status: 400, body: { error: "limit at most 100" } };
    const found = store.search(decodeQuery(url.searchParams)).slice(offset, offset + limit);
    return { status: 200, body: found.map((n) => store.searchShape(n)) };
  }
  m = /^\/nodes\/([^/]+)\/children$/.exec(path);
  if (method === "GET" && m) {
    // Read from the node graph, not the search index: no lag. A trashed node has left.
    const parent = store.nodes.get(decodeURIComponent(m[1] as string));
    if (parent === undefined) return notFound;
    const limit = Number(url.searchParams.get("limit") ?? "50");
    const offset = Number(url.searchParams.get("offset") ?? "0");
    if (limit > 100) return { status: 400, body: { error: "limit at most 100" } };
    const all = parent.children
      .map((id) => store.nodes.get(id))
      .filter((n) => n !== undefined && !n.inTrash) as FakeNode[];
    return {
      status: 200,
      body: {
        children: all.slice(offset, offset + limit).map((n) => store.childShape(n)),
        total: all.length,
        hasMore: offset + limit < all.length,
      },
    };
  }
  m = /^\/nodes\/([^/]+)(?:\/(update|trash|fields\/([^/]+)\/content))?$/.exec(path);
  const node = m ? store.nodes.get(decodeURIComponent(m[1] as string)) : undefined;
  if (m === null || node === undefined) return notFound;
  if (method === "GET" && m[2] === undefined) {
    return {
      status: 200,
      body: {
        markdown: `- ${node.name}`,
        name: node.name,
        description: node.description || null,
      },
    };
  }
  if (method !== "POST") return notFound;
  if (m[2] === "update") {
    if (typeof json.name === "string") node.name = json.name;
    if (typeof json.description === "string") node.description = json.description;
    return {
      status: 200,
      body: {
        nodeId: node.id,
        name: node.name,
        description: node.description,
        message: "Node updated",
      },
    };
  }
  if (m[2] === "trash") {
    node.inTrash = true;
    return {
      status: 200,
      body: {
        nodeId: node.id,
        nodeName: node.name,
        trashNodeId: "wsTrash01",
        message: "Moved to trash",
      },
    };
  }
  const attribute = decodeURIComponent(m[3] as string);
  if (store.nodes.get(attribute)?.kind !== "field") return notFound;
  const content = String(json.content ?? "");
  const refs = [...content.matchAll(/\[\[\^([A-Za-z0-9_-]+)\]\]/g)].map((r) => `ref:${r[1]}`);
  node.fields.set(attribute, refs.length > 0 ? refs : [content]);
  return {
    status: 200,
    body: { nodeId: node.id, attributeId: attribute, content, message: "Field updated" },
  };
}
