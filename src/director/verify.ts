import { lstatSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { compareFindings, type Finding } from "../core/checks/findings.js";
import { verifyMemory } from "../core/checks/verify.js";
import { verifyFocusFile } from "../core/checks/verify-focus-file.js";
import { linkFindings } from "../core/checks/verify-links.js";
import { verifyDocuments } from "../core/checks/verify-sessions.js";
import { verifyVersionLog } from "../core/checks/version-log.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { DOCUMENT_DIRS } from "../core/versions/documents.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { PathConfiner } from "../repo/confine.js";
import { listMemoryLinks, listTierFiles, readTextIfExists } from "../repo/memory-tree.js";
import { forEachLimited } from "../state/atomic.js";

/** Reads the memory tree of the work tree and checks every hash, path, id and budget. */
export async function verifyRepository(ctx: RepoContext): Promise<Finding[]> {
  // Links are reported, never followed: what is behind one is not read.
  const links = await listMemoryLinks(ctx.repoDir);
  const linked = (path: string) =>
    links.includes(MEMORY_DIR) || links.some((l) => path === l || path.startsWith(`${l}/`));
  const read = async (path: string) =>
    linked(path) ? undefined : await readTextIfExists(join(ctx.repoDir, path));
  const paths = await listTierFiles(ctx.repoDir);
  const files: { path: string; text: string }[] = new Array(paths.length);
  await forEachLimited(
    paths.map((path, i) => ({ path, i })),
    32,
    async ({ path, i }) => {
      files[i] = { path, text: await readFile(join(ctx.repoDir, path), "utf8") };
    },
  );
  const catalogText = await read(CATALOG_PATH);
  const memoryMd = await read(FOCUS_PATH);
  const findings = verifyMemory({ catalogText, files, memoryMd, memory: ctx.config.memory });
  const log = await read(VERSION_LOG_PATH);
  const documents = links.includes(MEMORY_DIR) ? new Map() : await readDocumentFiles(ctx.repoDir);
  const texts = new Map(files.map((f) => [f.path, f.text]));
  const logged = [
    ...findings,
    ...verifyVersionLog(log, catalogText),
    ...linkFindings(links),
    // MEMORY.md as the Director would generate it from these very files (not through a link).
    ...(linked(FOCUS_PATH)
      ? []
      : verifyFocusFile({
          catalogText,
          memoryMd,
          text: (path) => texts.get(path),
          documents,
          memory: ctx.config.memory,
        })),
  ];
  if (documents.size === 0 && !catalogText?.includes('"documents"')) {
    return logged.sort(compareFindings);
  }
  const more = verifyDocuments({ catalogText, files: documents, budgets: ctx.config.sessions });
  return [...logged, ...more].sort(compareFindings);
}

/** Every real file under the session documents' folders (memory/state, core, sessions, knowledge). */
async function readDocumentFiles(repoDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const dir of DOCUMENT_DIRS) {
    const full = join(repoDir, dir);
    if (!lstatSync(full, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const name of readdirSync(full, { recursive: true, encoding: "utf8" }).sort()) {
      const path = join(full, name);
      // lstat: a link (or anything under a linked folder) is reported, not read.
      const rel = `${dir}/${name.split(sep).join("/")}`;
      if (!lstatSync(path).isFile() || hasLinkedParent(repoDir, rel)) continue;
      out.set(rel, await readFile(path, "utf8"));
    }
  }
  return out;
}

function hasLinkedParent(repoDir: string, rel: string): boolean {
  try {
    new PathConfiner(repoDir).refuseLinks(rel, rel);
    return false;
  } catch {
    return true;
  }
}
