/**
 * A decision the history import was not sure of, as memory keeps it until someone confirms
 * it: a tentative fact (a `question` note) whose text names the commit, the classifier's
 * confidence, the title and the reason, so that `director confirm` can make it a decision.
 */

/** A proposed decision read from history. */
export interface ProposedDecision {
  /** The commit (full sha when the note links it, else the 12 digits its text names). */
  sha: string;
  confidence: number;
  title: string;
  rationale?: string;
}

const HEAD = "Proposed decision";
const SEPARATOR = " — because: ";
const PATTERN =
  /^(?:Question: )?Proposed decision \(commit ([0-9a-f]{7,40}), confidence (\d(?:\.\d+)?)\): (.+)$/s;

/** The note text of a proposed decision (the metadata first, so that a cut only shortens the reason). */
export function proposalText(p: ProposedDecision): string {
  const head = `${HEAD} (commit ${p.sha.slice(0, 12)}, confidence ${round2(p.confidence)}): ${p.title}`;
  return p.rationale ? `${head}${SEPARATOR}${p.rationale}` : head;
}

/** The proposed decision a fact states, or undefined when it states none. */
export function parseProposal(fact: string): ProposedDecision | undefined {
  const m = PATTERN.exec(fact);
  if (!m) return undefined;
  const body = m[3] as string;
  const cut = body.indexOf(SEPARATOR);
  const title = (cut === -1 ? body : body.slice(0, cut)).trim();
  const rationale = cut === -1 ? undefined : body.slice(cut + SEPARATOR.length).trim();
  return {
    sha: m[1] as string,
    confidence: Number(m[2]),
    title,
    ...(rationale ? { rationale } : {}),
  };
}

/** The id `director confirm` takes: the commit's first 12 digits. */
export function proposalId(p: Pick<ProposedDecision, "sha">): string {
  return p.sha.slice(0, 12);
}

function round2(n: number): string {
  return String(Math.round(Math.min(1, Math.max(0, n)) * 100) / 100);
}
