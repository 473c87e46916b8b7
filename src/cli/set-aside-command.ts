import { type Command, repoOptions } from "./args.js";

// The work is imported on demand: see director-commands.ts.

/** `director set-aside PATH|ENGRAM_ID`: one damaged memory file out of memory, as a new version. */
export const SET_ASIDE_COMMAND: Command = {
  name: "set-aside",
  summary:
    "Take one damaged or invalid memory file (an engram or document director verify names) out of memory as a new version; its bytes are kept in the state folder and git history.",
  usage: "director set-aside PATH|ENGRAM_ID [--repo DIR] [--config FILE] [--json]",
  options: {},
  positionals: [1, 1],
  async run(args) {
    const [{ openContext }, { setAside }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../director/set-aside.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    const r = await setAside(ctx, args.positionals[0] as string);
    const lines = [
      `set aside ${r.path}${r.listed === null ? " (not listed in the catalog)" : ""}`,
      r.kept_at === null
        ? "the file was already missing: only its catalog entry was removed"
        : `its bytes are kept in the state folder at ${r.kept_at}`,
      `catalog version ${r.catalog_version} ${r.catalog_hash}`,
    ];
    return { json: r, text: `${lines.join("\n")}\n` };
  },
};
