/** The registry the graph tests link to: Ada, and the engine project over `src/engine/**`. */
export const ADA_ENGINE_REGISTRY = [
  "[[people]]",
  'id = "ada"',
  'name = "Ada Lovelace"',
  'aliases = ["ada"]',
  'emails = ["ada@example.com"]',
  "",
  "[[projects]]",
  'id = "engine"',
  'name = "Engine"',
  'paths = ["src/engine/**"]',
  "",
].join("\n");
