import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { renderDefaultConfig } from "../config/render.js";
import type { RepoContext } from "../context/repo-context.js";
import { isWithin } from "../context/within.js";
import { emptyCatalog, serializeCatalog } from "../core/model/engram.js";
import { CATALOG_PATH, FOCUS_PATH, TIER_GITKEEPS } from "../core/model/paths.js";
import { renderFocus } from "../core/rendering/focus.js";
import { STATE_DIR_MODE, writeFileAtomicSync } from "../state/atomic.js";
import { loadSealKey } from "../state/seal-key.js";

export interface InitResult {
  created: string[];
  kept: string[];
}

/**
 * Lays out a repository for engram: config with defaults, the memory/ skeleton, an empty
 * catalog and focus view, the state folder (git-ignored) with its seal key. Never
 * overwrites a file that exists, so it is safe to run again.
 */
export function initRepository(ctx: RepoContext): InitResult {
  const created: string[] = [];
  const kept: string[] = [];
  const ensureFile = (path: string, text: () => string) => {
    const full = join(ctx.repoDir, path);
    if (existsSync(full)) {
      kept.push(path);
      return;
    }
    mkdirSync(join(full, ".."), { recursive: true });
    // Files of the repository: readable as any checkout's (the state folder's are private).
    writeFileAtomicSync(full, text(), 0o644);
    created.push(path);
  };
  const configRel = relative(ctx.repoDir, ctx.configPath) || "config/dev.toml";
  ensureFile(configRel, renderDefaultConfig);
  for (const path of TIER_GITKEEPS) ensureFile(path, () => "");
  const catalog = emptyCatalog();
  ensureFile(CATALOG_PATH, () => serializeCatalog(catalog));
  const memory = ctx.config.memory;
  ensureFile(
    FOCUS_PATH,
    () =>
      renderFocus({
        catalog,
        engrams: new Map(),
        maxBytes: memory.memory_md_max_bytes,
        maxItems: memory.memory_md_max_items,
      }).text,
  );

  const stateRel = relative(ctx.repoDir, ctx.paths.root);
  const gitignore = join(ctx.repoDir, ".gitignore");
  const current = existsSync(gitignore) ? readFileSync(gitignore, "utf8") : "";
  const entry = `/${stateRel.split("\\").join("/")}/`;
  if (
    isWithin(ctx.repoDir, ctx.paths.root) &&
    !current.split("\n").some((l) => l.trim() === entry || l.trim() === `${stateRel}/`)
  ) {
    const prefix = current.length > 0 && !current.endsWith("\n") ? "\n" : "";
    writeFileAtomicSync(
      gitignore,
      `${current}${prefix}# engram: Director buffer, spool and keys (never committed)\n${entry}\n`,
      0o644,
    );
    created.push(`.gitignore: ${entry}`);
  } else {
    kept.push(".gitignore");
  }
  mkdirSync(ctx.paths.spool, { recursive: true, mode: STATE_DIR_MODE });
  // The buffer's folder says "a Director drains this spool" before its first cycle, so that a
  // worker here is not told its notes are stranded (src/worker/stranded.ts).
  mkdirSync(dirname(ctx.paths.journal), { recursive: true, mode: STATE_DIR_MODE });
  const hadKey = existsSync(ctx.paths.sealKey) || !!process.env.ENGRAM_SEAL_KEY;
  loadSealKey(ctx.paths.sealKey, true);
  if (!hadKey) created.push(`${stateRel}/seal.key`);
  return { created, kept };
}
