import type { FileChange, SetupPlan } from "./plan.js";

/** A line diff of two small texts (a settings file): `-` old lines, `+` new ones. */
export function lineDiff(before: string, after: string): string[] {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const b = after === "" ? [] : after.replace(/\n$/, "").split("\n");
  // Longest common subsequence, from the end; the files are a few hundred lines at most.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as number[])[j] as number, row[j + 1] as number);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (
      j < b.length &&
      (i === a.length ||
        ((lcs[i] as number[])[j + 1] as number) >= ((lcs[i + 1] as number[])[j] as number))
    ) {
      out.push(`+ ${b[j++]}`);
    } else {
      out.push(`- ${a[i++]}`);
    }
  }
  return out;
}

function fileText(file: FileChange, dryRun: boolean): string {
  const verb = {
    create: dryRun ? "would create" : "created",
    update: dryRun ? "would update" : "updated",
    delete: dryRun ? "would delete" : "deleted",
    unchanged: "unchanged",
  }[file.action];
  const head = `${verb}: ${file.path}${file.changes.length > 0 ? ` (${file.changes.join("; ")})` : ""}\n`;
  if (!dryRun || file.action === "unchanged") return head;
  const diff = lineDiff(file.before ?? "", file.after ?? "");
  return `${head}${diff.map((l) => `    ${l}\n`).join("")}`;
}

/** The plan in words; with `dryRun`, each change as a line diff and nothing written. */
export function setupText(plan: SetupPlan, dryRun: boolean): string {
  const what = plan.remove ? "remove engram from" : "set up engram for";
  const title = `${dryRun ? "dry run: " : ""}${what} ${plan.host} (${plan.scope} scope)\n`;
  const files = plan.files.map((f) => fileText(f, dryRun)).join("");
  const notes = plan.notes.map((n) => `note: ${n}\n`).join("");
  const nothing = plan.files.every((f) => f.action === "unchanged") ? "nothing to change\n" : "";
  return `${title}${files}${nothing}${notes}`;
}

/** The plan as `--json` prints it (the files' text is left out: the files are the record). */
export function setupJson(plan: SetupPlan, dryRun: boolean) {
  return {
    host: plan.host,
    scope: plan.scope,
    remove: plan.remove,
    dry_run: dryRun,
    changed: plan.files.some((f) => f.action !== "unchanged"),
    files: plan.files.map((f) => ({ path: f.path, action: f.action, changes: f.changes })),
    notes: plan.notes,
  };
}
