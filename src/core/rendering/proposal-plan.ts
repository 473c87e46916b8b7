import type { ProposalPlan } from "../proposal/plan.js";

const SIGN = { add: "+", modify: "~", delete: "-" } as const;

/** `director run --pr --dry-run` in words: what the run would do, one line per step. */
export function proposalPlanLines(plan: ProposalPlan): string[] {
  const where = plan.remote === null ? "the local branch (no remote)" : `${plan.remote}`;
  const head = plan.head_sha === null ? "no branch yet" : plan.head_sha.slice(0, 12);
  const lines = [`plan (dry run; nothing committed or pushed): ${plan.branch} (${head})`];
  if (plan.commit === null) {
    lines.push(
      plan.action === "unchanged"
        ? `  leave ${plan.branch} as it is: it already proposes this memory`
        : `  propose nothing: the memory matches ${plan.base}`,
    );
  } else {
    const how = {
      create: `create ${plan.branch} on ${plan.base} ${plan.main_sha.slice(0, 12)}`,
      update: `add a commit on ${plan.branch}`,
      regenerate: `rebuild ${plan.branch} on ${plan.base} ${plan.main_sha.slice(0, 12)}`,
    }[plan.commit.kind];
    lines.push(`  ${how}: "${plan.commit.message.split("\n")[0]}"`);
    lines.push(`  push to ${where} via ${plan.via === "api" ? "the Git Data API" : plan.via}`);
  }
  if (plan.changes.length > 0) {
    lines.push(`  ${plan.changes.length} file(s) differ from ${plan.base}:`);
    for (const c of plan.changes) lines.push(`    ${SIGN[c.change]} ${c.path}`);
  }
  if (plan.carried > 0) lines.push(`  carry ${plan.carried} engram(s) of the previous proposal`);
  if (plan.rejected > 0) lines.push(`  skip ${plan.rejected} engram(s) rejected by closed PRs`);
  if (plan.pull_request === "upsert") lines.push("  open or update the pull request");
  if (plan.pull_request === "would-open") lines.push("  no GitHub configured: no pull request");
  return lines;
}
