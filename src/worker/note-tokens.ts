import type { RecallNote } from "../core/recall/notes.js";
import { countTokens } from "../graph/tokens.js";

/**
 * The notes with their tokens counted by the real tokenizer, once, as they are indexed: a
 * recall's budget is then exact for every whole note, without loading the tokenizer.
 */
export function counted(notes: readonly RecallNote[]): RecallNote[] {
  return notes.map((note) =>
    note.tokens !== undefined
      ? note
      : {
          ...note,
          tokens: {
            text: countTokens(note.text),
            rationale: note.rationale === undefined ? 0 : countTokens(note.rationale),
          },
        },
  );
}
