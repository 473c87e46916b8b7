import { type Command, repoOptions } from "./args.js";

// The work is imported on demand: see director-commands.ts.

/** `director confirm [ID...]`: the decisions a history import proposed, listed or confirmed. */
export const CONFIRM_COMMAND: Command = {
  name: "confirm",
  summary:
    "List the decisions `ingest --from-git` proposed (too uncertain to remember at once: below memory.history_min_confidence), or confirm them by id; the next `director run` makes each confirmed one a decision in memory.",
  usage: "director confirm [ID...] [--repo DIR] [--config FILE] [--json]",
  options: {},
  positionals: [0, 100],
  async run(args) {
    const [{ openContext }, { confirmProposals }, { listProposals }] = await Promise.all([
      import("../context/repo-context.js"),
      import("../director/confirm.js"),
      import("../graph/import-proposals.js"),
    ]);
    const ctx = await openContext(repoOptions(args));
    if (args.positionals.length === 0) {
      const proposals = await listProposals(ctx);
      const lines = proposals.map(
        (p) =>
          `${p.id}  ${p.confidence.toFixed(2)}  ${p.title}${p.rationale ? ` (${p.rationale})` : ""}`,
      );
      const text =
        proposals.length === 0
          ? "no proposed decision is open\n"
          : `${lines.join("\n")}\n${proposals.length} proposed decision(s); confirm with \`director confirm ID...\`\n`;
      return { json: { proposals }, text };
    }
    const r = await confirmProposals(ctx, args.positionals);
    const said = r.confirmed.map((c) => `confirmed ${c.id}  ${c.title}`);
    return {
      json: r,
      text: `${said.join("\n")}\naccepted ${r.accepted}, duplicates ${r.duplicates}: the next \`director run\` writes them to memory\n`,
    };
  },
};
