import { existsSync, readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { compareFindings, type Finding } from "../core/checks/findings.js";
import { verifyMemory } from "../core/checks/verify.js";
import { verifyFocusFile } from "../core/checks/verify-focus-file.js";
import { verifyDocuments } from "../core/checks/verify-sessions.js";
import { verifyVersionLog } from "../core/checks/version-log.js";
import { CATALOG_PATH, FOCUS_PATH } from "../core/model/paths.js";
import { DOCUMENT_DIRS } from "../core/versions/documents.js";
import { VERSION_LOG_PATH } from "../core/versions/log.js";
import { listTierFiles, readTextIfExists } from "../repo/memory-tree.js";
import { forEachLimited } from "../state/atomic.js";

/** Reads the memory tree of the work tree and checks every hash, path, id and budget. */
export async function verifyRepository(ctx: RepoContext): Promise<Finding[]> {
  const paths = await listTierFiles(ctx.repoDir);
  const files: { path: string; text: string }[] = new Array(paths.length);
  await forEachLimited(
    paths.map((path, i) => ({ path, i })),
    32,
    async ({ path, i }) => {
      files[i] = { path, text: await readFile(join(ctx.repoDir, path), "utf8") };
    },
  );
  const catalogText = await readTextIfExists(join(ctx.repoDir, CATALOG_PATH));
  const memoryMd = await readTextIfExists(join(ctx.repoDir, FOCUS_PATH));
  const findings = verifyMemory({ catalogText, files, memoryMd, memory: ctx.config.memory });
  const log = await readTextIfExists(join(ctx.repoDir, VERSION_LOG_PATH));
  const documents = await readDocumentFiles(ctx.repoDir);
  const texts = new Map(files.map((f) => [f.path, f.text]));
  const logged = [
    ...findings,
    ...verifyVersionLog(log, catalogText),
    // MEMORY.md as the Director would generate it from these very files.
    ...verifyFocusFile({
      catalogText,
      memoryMd,
      text: (path) => texts.get(path),
      documents,
      memory: ctx.config.memory,
    }),
  ];
  if (documents.size === 0 && !catalogText?.includes('"documents"')) {
    return logged.sort(compareFindings);
  }
  const more = verifyDocuments({ catalogText, files: documents, budgets: ctx.config.sessions });
  return [...logged, ...more].sort(compareFindings);
}

/** Every file under the session documents' folders (memory/state, core, sessions, knowledge). */
async function readDocumentFiles(repoDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const dir of DOCUMENT_DIRS) {
    const full = join(repoDir, dir);
    if (!existsSync(full)) continue;
    for (const name of readdirSync(full, { recursive: true, encoding: "utf8" }).sort()) {
      const path = join(full, name);
      if (!statSync(path).isFile()) continue;
      out.set(`${dir}/${name.split(sep).join("/")}`, await readFile(path, "utf8"));
    }
  }
  return out;
}
