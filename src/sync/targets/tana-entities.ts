import type { SyncValue } from "../../core/sync/item.js";
import type { OutgoingItem } from "../../core/sync/outgoing.js";
import type { TanaLinks } from "../../core/sync/tana-nodes.js";
import type { Registry } from "../../schema/registry.js";
import type { LocalNode, LocalTag, TanaLocalClient } from "./tana-local-client.js";
import { SyncTargetError } from "./target.js";

export interface EntityResolverOptions {
  registry: Registry;
  /** `[sync.tana] entities`: an entity id, registry id, name or alias -> Tana node id. */
  map: Readonly<Record<string, string>>;
  tags: { person: string; project: string };
}

/** Why an entity was not linked: never created, only said. */
export interface SkippedLink {
  entity: string;
  status: "not_found" | "ambiguous" | "failed";
  reason: string;
}

/** What linking one item found: the links, and what it could not link and why. */
export interface ResolvedLinks {
  links: TanaLinks;
  skipped: SkippedLink[];
}

type Resolution = { id: string } | SkippedLink;

/** Pages of one search read at most: a name that common is not an entity's. */
const MAX_PAGES = 5;
const PAGE = 100;
/** Failed lookups in a run after which linking is skipped for the rest of it. */
const GIVE_UP_AFTER = 3;

const norm = (s: string) => s.replace(/^#/, "").replace(/\s+/g, " ").trim().toLowerCase();

/**
 * People and projects of a learning to existing Tana nodes: the configured map first (the
 * user's word), then the Local API's search for a node of the `#person` / `#project` type
 * (or a tag extending it) named exactly like the entity or, failing that, one of its
 * aliases. The type goes into the query: a search by name alone returns the meetings and
 * learnings that mention the person too, in an order of the app's own, and the person may
 * never come up. Two such nodes are ambiguous: none is linked. Nothing is ever created.
 * Resolutions are cached for the run; after repeated failures (or an unreachable app) the
 * rest of the run links nothing, and says why.
 */
export class EntityResolver {
  private readonly cache = new Map<string, Resolution>();
  private readonly names = new Map<string, string[]>();
  private typeIds: Promise<Record<"person" | "project", string[]>> | null = null;
  private failures = 0;
  private down: string | null = null;

  constructor(
    private readonly options: EntityResolverOptions,
    private readonly local: TanaLocalClient | null,
    /** The workspace's supertags (Local API), asked once a run. */
    private readonly listTags: () => Promise<LocalTag[]>,
  ) {
    for (const p of options.registry.people) {
      this.names.set(`person:${p.id}`, [p.name, ...p.aliases, p.id]);
    }
    for (const a of options.registry.projects) {
      this.names.set(`project:${a.id}`, [a.name, ...a.aliases, a.id]);
    }
  }

  async resolve(people: readonly string[], projects: readonly string[]): Promise<ResolvedLinks> {
    const out: ResolvedLinks = { links: { people: [], projects: [] }, skipped: [] };
    const groups: [readonly string[], string[]][] = [
      [people, out.links.people],
      [projects, out.links.projects],
    ];
    for (const [entities, into] of groups) {
      for (const entity of entities) {
        const r = await this.lookup(entity);
        if ("id" in r) {
          if (!into.includes(r.id)) into.push(r.id);
        } else out.skipped.push(r);
      }
    }
    return out;
  }

  private namesOf(entity: string): string[] {
    const all = this.names.get(entity) ?? [entity.slice(entity.indexOf(":") + 1)];
    const seen = new Set<string>();
    return all.filter((n) => norm(n) !== "" && !seen.has(norm(n)) && seen.add(norm(n)));
  }

  private async lookup(entity: string): Promise<Resolution> {
    const cached = this.cache.get(entity);
    if (cached !== undefined) return cached;
    const names = this.namesOf(entity);
    for (const key of [entity, ...names]) {
      const mapped = this.options.map[key];
      if (mapped !== undefined) return this.remember(entity, { id: mapped });
    }
    if (this.local === null) {
      return this.remember(entity, {
        entity,
        status: "not_found",
        reason: "no [sync.tana] entities entry, and no Local API (local_api_url) to search",
      });
    }
    if (this.down !== null) return { entity, status: "failed", reason: this.down };
    try {
      return this.remember(entity, await this.search(entity, names));
    } catch (error) {
      const reason = `Tana Local API lookup failed: ${(error as Error).message}`;
      this.failures++;
      const unreachable = error instanceof SyncTargetError && /unreachable/.test(error.message);
      if (unreachable || this.failures >= GIVE_UP_AFTER) {
        this.down = `${reason}; no further lookups this run`;
      }
      // Not cached: a later item may find the app answering again (until it gives up).
      return { entity, status: "failed", reason };
    }
  }

  private remember(entity: string, r: Resolution): Resolution {
    this.cache.set(entity, r);
    return r;
  }

  private async search(entity: string, names: readonly string[]): Promise<Resolution> {
    const kind = entity.startsWith("person:") ? "person" : "project";
    const tag = this.options.tags[kind];
    const types = (await this.types())[kind];
    if (types.length === 0) {
      return {
        entity,
        status: "not_found",
        reason: `the Tana workspace has no #${tag} supertag`,
      };
    }
    for (const name of names) {
      const hits = new Set<string>();
      for (const type of types) {
        for (const node of await this.pages({ and: [{ hasType: type }, { textContains: name }] })) {
          if (!node.inTrash && norm(node.name) === norm(name)) hits.add(node.id);
        }
      }
      if (hits.size === 1) return { id: [...hits][0] as string };
      if (hits.size > 1) {
        return {
          entity,
          status: "ambiguous",
          reason: `${hits.size} #${tag} nodes are named "${name}" (${[...hits].sort().join(", ")}); map one in [sync.tana] entities`,
        };
      }
    }
    return {
      entity,
      status: "not_found",
      reason: `no #${tag} node named ${names.map((n) => `"${n}"`).join(" or ")} in Tana`,
    };
  }

  private async pages(query: Parameters<TanaLocalClient["search"]>[0]): Promise<LocalNode[]> {
    const out: LocalNode[] = [];
    for (let page = 0; page < MAX_PAGES; page++) {
      const found = await (this.local as TanaLocalClient).search(query, {
        limit: PAGE,
        offset: page * PAGE,
      });
      out.push(...found);
      if (found.length < PAGE) break;
    }
    return out;
  }

  /** The ids of the person and project supertags (by name, any case, `#` or not). */
  private types(): Promise<Record<"person" | "project", string[]>> {
    if (this.typeIds === null) {
      const pending = this.listTags().then((tags) => {
        const of = (name: string) =>
          tags.filter((t) => norm(t.name) === norm(name)).map((t) => t.id);
        return { person: of(this.options.tags.person), project: of(this.options.tags.project) };
      });
      // A failed listing is asked again by the next lookup.
      pending.catch(() => {
        this.typeIds = null;
      });
      this.typeIds = pending;
    }
    return this.typeIds;
  }
}

/**
 * A learning's links as the Tana target renders them, counted; every entity left unlinked is
 * kept with its item and why (the run's notices and the sync log say it).
 */
export class EntityLinker extends EntityResolver {
  readonly counts = { linked: 0, unknown: 0, ambiguous: 0, failed: 0 };
  readonly skips: (SkippedLink & { key: string })[] = [];

  async linksOf(item: OutgoingItem): Promise<TanaLinks> {
    const list = (v: SyncValue | undefined) => (Array.isArray(v) ? (v as string[]) : []);
    const people = list(item.fields.related_people);
    const projects = list(item.fields.related_projects);
    if (people.length === 0 && projects.length === 0) return { people: [], projects: [] };
    const resolved = await this.resolve(people, projects);
    for (const skip of resolved.skipped) {
      this.counts[skip.status === "not_found" ? "unknown" : skip.status]++;
      this.skips.push({ key: item.key, ...skip });
    }
    this.counts.linked += resolved.links.people.length + resolved.links.projects.length;
    return resolved.links;
  }

  /** One line per entity and reason, with how many items it left unlinked. */
  notes(): string[] {
    const by = new Map<string, number>();
    for (const s of this.skips) {
      const line = `${s.entity} (${s.status.replace("_", " ")}: ${s.reason})`;
      by.set(line, (by.get(line) ?? 0) + 1);
    }
    return [...by].map(([line, n]) => `tana: not linked in ${n} item(s): ${line}`);
  }
}
