/**
 * What the settings a commit changed (settings.ts) make of its classification, whatever its
 * words: the two rules of the corpus README's tenth round, drawn from the tuned histories'
 * diffs. A CI job guarded to the project's own repository or off forks is a policy, and a
 * choice the words state below the line is raised to it where the commit's CI or deployment
 * files changed a setting. Pure.
 */
import { DECISION_LINE, WORDING } from "./confidence.js";
import type { CommitChanges } from "./evidence.js";

/** The part of a commit's classification these rules read and write. */
interface Classified {
  noise?: string;
  lesson?: string;
  convention?: string;
  type: string;
  description: string;
  decision?: { title: string; rationale?: string; confidence?: number };
}

const GUARDED = "a CI job now runs only in the project's own repository, not on forks";
const GUARDED_TITLE = "Run CI jobs only in the project's own repository, not on forks";

/** The classification with the settings' rules applied; the same object where none applies. */
export function weighSettings<T extends Classified>(cls: T, changes: CommitChanges | undefined): T {
  const settings = changes?.settings;
  // A revert is read as a lesson, and a dependency update's workflow edits are its bumps.
  if (settings === undefined || settings.length === 0) return cls;
  if (cls.type === "revert" || cls.noise === "dependency") return cls;
  const confidence = cls.decision?.confidence ?? 1;
  if (cls.decision !== undefined && confidence >= DECISION_LINE) return cls;
  if (settings.includes("runs-guarded")) {
    const { noise, lesson, convention, ...rest } = cls;
    // A merge without a title, or a subject that says nothing, is named by what it did.
    const named = cls.noise === "merge" || cls.noise === "trivial";
    const title = cls.decision?.title ?? (named ? GUARDED_TITLE : cls.description);
    return {
      ...rest,
      decision: {
        title,
        rationale: cls.decision?.rationale ?? GUARDED,
        confidence: WORDING.implied,
      },
    } as T;
  }
  if (cls.decision !== undefined) {
    return { ...cls, decision: { ...cls.decision, confidence: DECISION_LINE } };
  }
  return cls;
}
