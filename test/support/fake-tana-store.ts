/**
 * The node store behind the Tana stand-in: one workspace whose nodes the Input API creates
 * and the Local API reads, updates and trashes. Node shapes follow the Input API's
 * (tanainc/tana-input-api-samples `types.ts`); Local API answers follow supertag-cli's
 * `types/local-api.ts` (itself read from the app's `/openapi.json`).
 */
export const ID_RE = /^[A-Za-z0-9_-]{7,16}$/;
export const SYSTEM_TAGS = new Set(["SYS_T01", "SYS_T02"]);
export const TARGETS = new Set(["INBOX", "SCHEMA", "LIBRARY"]);

export interface FakeNode {
  id: string;
  name: string;
  description: string;
  /** "tag" (SYS_T01), "field" (SYS_T02), "value" (a field's value), or a plain "node". */
  kind: "node" | "tag" | "field" | "value";
  tagIds: string[];
  parent: string;
  children: string[];
  /** attributeId -> values (names, dates, or `ref:<id>` for references). */
  fields: Map<string, string[]>;
  inTrash: boolean;
  created: number;
  /** When it was made, on the stand-in's clock (ms): search shows it `searchLagMs` later. */
  createdAt: number;
  /** Tags this tag extends (a `#colleague` that extends `#person`): for tag nodes only. */
  extendsTags: string[];
}

/** A `/nodes/search` query as its deepObject parameters decode (`query[and][0][hasType]`). */
export type SearchQuery = { [key: string]: string | SearchQuery | SearchQuery[] };

export class InputError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface ApiNode {
  type?: string;
  dataType?: string;
  name?: unknown;
  description?: unknown;
  id?: unknown;
  attributeId?: unknown;
  value?: unknown;
  supertags?: { id?: unknown }[];
  children?: ApiNode[];
}

/** Created nodes in the answer's shape: `{nodeId, name, description?, children?}`. */
export interface CreatedAnswer {
  nodeId: string;
  name: string;
  description?: string;
  children?: CreatedAnswer[];
}

export class FakeTanaStore {
  readonly nodes = new Map<string, FakeNode>();
  readonly workspace = { id: "wsMain001", name: "Main", homeNodeId: "wsHome001" };
  private next = 1;
  private clock = 0;
  /** The stand-in's clock (ms); tests of the bins set it to the Director's. */
  now: () => number = () => Date.now();
  /** Search (the app's index) shows a new node only this long after it was made. */
  searchLagMs = 0;

  private newId(): string {
    return `tn${String(this.next++).padStart(8, "0")}`;
  }

  private add(
    node: Omit<
      FakeNode,
      "id" | "children" | "fields" | "inTrash" | "created" | "createdAt" | "extendsTags"
    >,
  ): FakeNode {
    const full: FakeNode = {
      ...node,
      id: this.newId(),
      children: [],
      fields: new Map(),
      inTrash: false,
      created: this.clock++,
      createdAt: this.now(),
      extendsTags: [],
    };
    this.nodes.set(full.id, full);
    this.nodes.get(node.parent)?.children.push(full.id);
    return full;
  }

  tagByName(name: string): FakeNode | undefined {
    return [...this.nodes.values()].find((n) => n.kind === "tag" && n.name === name && !n.inTrash);
  }

  /** A supertag, made when missing; `extendsTag` names the tag it extends (made too). */
  addTag(name: string, extendsTag?: string): FakeNode {
    const tag =
      this.tagByName(name) ??
      this.add({ name, description: "", kind: "tag", tagIds: [], parent: "SCHEMA" });
    if (extendsTag !== undefined) tag.extendsTags.push(this.addTag(extendsTag).id);
    return tag;
  }

  /** An existing entity the learnings may link to (a person or a project). */
  addEntity(name: string, tagName: string): string {
    const tag = this.addTag(tagName);
    return this.add({ name, description: "", kind: "node", tagIds: [tag.id], parent: "LIBRARY" })
      .id;
  }

  /** Any plain node (a meeting, a task) that the user's workspace holds. */
  addNode(name: string, tagIds: string[] = []): string {
    return this.add({ name, description: "", kind: "node", tagIds, parent: "LIBRARY" }).id;
  }

  /** Nodes carrying this tag, trash included. */
  tagged(tagId: string): FakeNode[] {
    return [...this.nodes.values()].filter((n) => n.tagIds.includes(tagId));
  }

  /** The Input API: validates everything first, then creates (all or nothing). */
  addToNode(body: { targetNodeId?: unknown; nodes?: unknown }): CreatedAnswer[] {
    const target = body.targetNodeId ?? "LIBRARY";
    if (typeof target !== "string") throw new InputError(400, "targetNodeId must be a string");
    if (!TARGETS.has(target)) {
      const node = this.nodes.get(target);
      if (node === undefined || node.inTrash)
        throw new InputError(404, `Target node ${target} not found`);
    }
    if (!Array.isArray(body.nodes) || body.nodes.length === 0) {
      throw new InputError(400, "nodes must be a non-empty array");
    }
    for (const node of body.nodes as ApiNode[]) this.check(node, false);
    return (body.nodes as ApiNode[]).map((n) => this.create(n, target));
  }

  private check(node: ApiNode, inField: boolean): void {
    if (node.type === "field") {
      if (typeof node.attributeId !== "string" || !ID_RE.test(node.attributeId)) {
        throw new InputError(400, `invalid attributeId ${String(node.attributeId)}`);
      }
      if (this.nodes.get(node.attributeId)?.kind !== "field") {
        throw new InputError(400, `attributeId ${node.attributeId} is not a field`);
      }
      for (const child of node.children ?? []) this.check(child, true);
      return;
    }
    if (node.dataType === "reference") {
      if (typeof node.id !== "string" || !ID_RE.test(node.id) || !this.nodes.has(node.id)) {
        throw new InputError(400, `reference to unknown node ${String(node.id)}`);
      }
      return;
    }
    if (node.dataType === "boolean") {
      if (!inField || typeof node.value !== "boolean")
        throw new InputError(400, "boolean only in a field");
      return;
    }
    if (typeof node.name !== "string") throw new InputError(400, "node without a name");
    if (node.description !== undefined && typeof node.description !== "string") {
      throw new InputError(400, "description must be a string");
    }
    for (const tag of node.supertags ?? []) {
      const id = tag.id;
      if (typeof id !== "string" || !ID_RE.test(id))
        throw new InputError(400, `invalid supertag id ${String(id)}`);
      if (!SYSTEM_TAGS.has(id) && this.nodes.get(id)?.kind !== "tag") {
        throw new InputError(400, `supertag ${id} does not exist`);
      }
    }
    for (const child of node.children ?? []) this.check(child, false);
  }

  private create(node: ApiNode, parent: string): CreatedAnswer {
    const tags = (node.supertags ?? []).map((t) => t.id as string);
    const kind = tags.includes("SYS_T01") ? "tag" : tags.includes("SYS_T02") ? "field" : "node";
    const made = this.add({
      name: String(node.name ?? ""),
      description: typeof node.description === "string" ? node.description : "",
      kind,
      tagIds: tags.filter((t) => !SYSTEM_TAGS.has(t)),
      parent,
    });
    const children: CreatedAnswer[] = [];
    for (const child of node.children ?? []) {
      if (child.type === "field") {
        const values = (child.children ?? []).map((v) =>
          v.dataType === "reference"
            ? `ref:${String(v.id)}`
            : v.dataType === "boolean"
              ? String(v.value)
              : String(v.name),
        );
        made.fields.set(child.attributeId as string, values);
      } else if (child.dataType !== "reference") {
        children.push(this.create(child, made.id));
      }
    }
    return {
      nodeId: made.id,
      name: made.name,
      ...(made.description !== "" ? { description: made.description } : {}),
      ...(children.length > 0 ? { children } : {}),
    };
  }

  /** A node as `/nodes/search` lists it. */
  searchShape(n: FakeNode) {
    const tags = n.tagIds.map((id) => ({ id, name: this.nodes.get(id)?.name ?? "" }));
    return {
      id: n.id,
      name: n.name,
      breadcrumb: [],
      tags,
      tagIds: n.tagIds,
      workspaceId: this.workspace.id,
      docType: n.kind === "tag" ? "tagDef" : "node",
      ...(n.description !== "" ? { description: n.description } : {}),
      created: new Date(Date.UTC(2026, 0, 1) + n.created * 1000).toISOString(),
      inTrash: n.inTrash,
    };
  }

  /** A node as `/nodes/{id}/children` lists it. */
  childShape(n: FakeNode) {
    const { breadcrumb: _b, workspaceId: _w, ...rest } = this.searchShape(n);
    return { ...rest, childCount: n.children.length };
  }

  /**
   * `/nodes/search` as the app answers it: `textContains` matches node names only (not
   * descriptions), `hasType` includes tags that extend the type, `and` / `or` combine, nodes
   * made less than `searchLagMs` ago are not in the index yet, and the order is the app's own
   * (newest first here): nothing promises that an entity comes before the nodes naming it.
   */
  search(query: SearchQuery): FakeNode[] {
    const indexed = this.now() - this.searchLagMs;
    return [...this.nodes.values()]
      .filter((n) => n.kind === "node" && n.createdAt <= indexed && this.matches(n, query))
      .sort((a, b) => b.created - a.created);
  }

  private matches(n: FakeNode, query: SearchQuery): boolean {
    for (const [op, value] of Object.entries(query)) {
      const list = (v: typeof value) =>
        (Array.isArray(v) ? v : typeof v === "object" ? Object.values(v) : []) as SearchQuery[];
      if (op === "and" && !list(value).every((q) => this.matches(n, q))) return false;
      if (op === "or" && !list(value).some((q) => this.matches(n, q))) return false;
      if (op === "hasType" && !n.tagIds.some((t) => this.isA(t, String(value)))) return false;
      if (op === "textContains" && !n.name.toLowerCase().includes(String(value).toLowerCase())) {
        return false;
      }
    }
    return true;
  }

  /** Whether tag `id` is `type` or extends it. */
  private isA(id: string, type: string, depth = 0): boolean {
    if (id === type) return true;
    const tag = this.nodes.get(id);
    return depth < 8 && (tag?.extendsTags ?? []).some((t) => this.isA(t, type, depth + 1));
  }

  /** A workspace reset: every node engram wrote disappears, the tags too. */
  reset(keep: (n: FakeNode) => boolean): void {
    for (const [id, n] of this.nodes) if (!keep(n)) this.nodes.delete(id);
  }
}
