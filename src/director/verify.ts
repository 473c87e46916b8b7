import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { RepoContext } from "../context/repo-context.js";
import { compareFindings, type Finding } from "../core/checks/findings.js";
import { verifyMemory } from "../core/checks/verify.js";
import { verifyVersionLog } from "../core/checks/version-log.js";
import { CATALOG_PATH, FOCUS_PATH } from "../core/model/paths.js";
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
  const findings = verifyMemory({
    catalogText,
    files,
    memoryMd: await readTextIfExists(join(ctx.repoDir, FOCUS_PATH)),
    memory: ctx.config.memory,
  });
  const log = await readTextIfExists(join(ctx.repoDir, VERSION_LOG_PATH));
  return [...findings, ...verifyVersionLog(log, catalogText)].sort(compareFindings);
}
