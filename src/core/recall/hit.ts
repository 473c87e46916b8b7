import type { RecallNoteKind, RecallScope } from "./notes.js";

/** One ranked result of `recall`: a note, whole when it fits the budget. */
export interface RecallHit {
  id: string;
  kind: RecallNoteKind;
  /** The note's text; cut (and `truncated`) only where the token budget required it. */
  text: string;
  rationale?: string;
  truncated?: true;
  scope: RecallScope;
  engram_id?: string;
  path?: string;
  commit?: string;
  /** An episode's outcome and stated confidence; a decision's stated confidence. */
  outcome?: string;
  confidence?: number;
  at: string;
  senders: string[];
  topics: string[];
  score: number;
  /** The query terms (stems) the note matched, in query order. */
  matched: string[];
  /** The tokens `text` and `rationale` hold (cl100k's count; estimated upward for a cut). */
  tokens: number;
  /** Only with `includeSuperseded`: the LT engrams that carried this note forward. */
  superseded_by?: string[];
}
