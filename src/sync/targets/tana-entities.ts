import type { TanaLinks } from "../../core/sync/tana-nodes.js";
import type { Registry } from "../../schema/registry.js";
import type { TanaLocalClient } from "./tana-local-client.js";

export interface EntityResolverOptions {
  registry: Registry;
  /** `[sync.tana] entities`: an entity id, registry id, name or alias -> Tana node id. */
  map: Readonly<Record<string, string>>;
  tags: { person: string; project: string };
}

/** What linking one item found: the links, and what it could not link. */
export interface ResolvedLinks {
  links: TanaLinks;
  /** Entities with no Tana node (skipped, never created). */
  unknown: string[];
  /** The Local API failed during the search: the item goes without links. */
  failed: string | null;
}

/**
 * People and projects of a learning to existing Tana nodes: the configured map first (the
 * user's word), then the Local API's search (a node named like the entity, or one of its
 * aliases, carrying the person or project supertag, not in the trash). Nothing is ever
 * created for an entity Tana does not know. Answers are cached for the run.
 */
export class EntityResolver {
  private readonly cache = new Map<string, string | null>();
  private readonly names = new Map<string, string[]>();

  constructor(
    private readonly options: EntityResolverOptions,
    private readonly local: TanaLocalClient | null,
  ) {
    for (const p of options.registry.people) {
      this.names.set(`person:${p.id}`, [p.name, p.id, ...p.aliases]);
    }
    for (const a of options.registry.projects) {
      this.names.set(`project:${a.id}`, [a.name, a.id, ...a.aliases]);
    }
  }

  async resolve(people: readonly string[], projects: readonly string[]): Promise<ResolvedLinks> {
    const out: ResolvedLinks = { links: { people: [], projects: [] }, unknown: [], failed: null };
    const groups: [readonly string[], string[]][] = [
      [people, out.links.people],
      [projects, out.links.projects],
    ];
    for (const [entities, into] of groups) {
      for (const entity of entities) {
        let id: string | null;
        try {
          id = await this.lookup(entity);
        } catch (error) {
          // A network error during resolution: the learning syncs, without links.
          return {
            links: { people: [], projects: [] },
            unknown: [],
            failed: (error as Error).message,
          };
        }
        if (id === null) out.unknown.push(entity);
        else if (!into.includes(id)) into.push(id);
      }
    }
    return out;
  }

  private async lookup(entity: string): Promise<string | null> {
    const cached = this.cache.get(entity);
    if (cached !== undefined) return cached;
    const names = this.names.get(entity) ?? [entity.slice(entity.indexOf(":") + 1)];
    let id: string | null = null;
    for (const key of [entity, ...names]) {
      const mapped = this.options.map[key];
      if (mapped !== undefined) {
        id = mapped;
        break;
      }
    }
    if (id === null && this.local !== null) id = await this.search(entity, names);
    this.cache.set(entity, id);
    return id;
  }

  private async search(entity: string, names: readonly string[]): Promise<string | null> {
    const local = this.local as TanaLocalClient;
    const tag = entity.startsWith("person:") ? this.options.tags.person : this.options.tags.project;
    const wanted = new Set(names.map((n) => n.toLowerCase()));
    for (const name of names) {
      const found = await local.search({ textContains: name }, { limit: 20, offset: 0 });
      const hit = found.find(
        (n) =>
          !n.inTrash &&
          wanted.has(n.name.trim().toLowerCase()) &&
          n.tags.some((t) => t.name === tag),
      );
      if (hit !== undefined) return hit.id;
    }
    return null;
  }
}
