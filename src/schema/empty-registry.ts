import type { Registry } from "./registry.js";

/**
 * The registry of a repository without `config/registry.toml`. Its own module, without zod:
 * a cycle or consolidation that links nothing must not load the schema library.
 */
export const EMPTY_REGISTRY: Registry = { people: [], projects: [], components: [] };
