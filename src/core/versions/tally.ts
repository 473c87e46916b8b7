import { EVIDENCE_PATH, KNOWLEDGE_DIR, SESSIONS_DIR } from "./documents.js";

/*
 * What the sessions' documents of a memory tree hold, read from their files: the episodes of
 * the session files and the knowledge records. For the counts of a version rebuilt from files
 * and for `director diff`.
 */

type Files = ReadonlyMap<string, string>;

const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`);

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The records of the knowledge files (`memory/knowledge/<kind>.json`), as they are stored;
 * not the evidence file, whose records count learnings engrams hold, not facts of their own.
 */
export function knowledgeRecords(files: Files): { id?: unknown; text?: unknown; kind?: unknown }[] {
  const out: { id?: unknown; text?: unknown; kind?: unknown }[] = [];
  for (const [path, text] of files) {
    if (!inFolder(path, KNOWLEDGE_DIR) || path === EVIDENCE_PATH) continue;
    const doc = json(text) as { kind?: unknown; records?: unknown } | undefined;
    if (!Array.isArray(doc?.records)) continue;
    for (const r of doc.records as { text?: unknown }[]) out.push({ ...r, kind: doc.kind });
  }
  return out;
}

/** How many episodes the session files (`memory/sessions/<id>.json`) hold. */
export function episodeCount(files: Files): number {
  let n = 0;
  for (const [path, text] of files) {
    if (!inFolder(path, SESSIONS_DIR)) continue;
    const doc = json(text) as { episodes?: unknown } | undefined;
    if (Array.isArray(doc?.episodes)) n += doc.episodes.length;
  }
  return n;
}
