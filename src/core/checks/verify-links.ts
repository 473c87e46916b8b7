import { type Finding, oneLine } from "./findings.js";

/**
 * Symbolic links under memory/ or at MEMORY.md: each one a finding. Links are never followed
 * (a link in a pull request could point a Director's write, or a reader, anywhere: `.git/hooks`,
 * the state folder's seal key), so the file behind one is neither read nor checked. Pure: the
 * caller lists the links (lstat, or git tree mode 120000 on a branch).
 */
export function linkFindings(links: readonly string[], where = "in the work tree"): Finding[] {
  return [...new Set(links)].sort().map((path) => ({
    path,
    code: "symlink",
    message: oneLine(
      `is a symbolic link ${where}: memory files and folders must be real files and folders, never links; replace it with the real file or remove it`,
    ),
  }));
}
