import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  emptyLiveness,
  foldSightings,
  type LivenessRecord,
  parseLiveness,
} from "../core/swarm/liveness.js";
import type { MemoryEvent } from "../schema/memory-event.js";
import { writeFileAtomicSync } from "../state/atomic.js";
import type { StatePaths } from "../state/paths.js";

/** Far above 1000 well-formed sightings: a larger file is not read (it may come from anyone). */
const MAX_BYTES = 2 * 1024 * 1024;

/** The workers' last sightings, kept across compactions (`core/swarm/liveness.ts`). */
export function livenessPath(paths: StatePaths): string {
  return join(paths.root, "buffer", "liveness.json");
}

/**
 * The record as the state folder holds it; none yet is an empty record. A record that is not
 * JSON, or entries that are not well formed, are reported in `problems` and left out: the
 * record is a convenience for `director status`, never a reason for it to fail.
 */
export function readLiveness(paths: StatePaths): { record: LivenessRecord; problems: string[] } {
  const path = livenessPath(paths);
  let text: string;
  try {
    if (statSync(path).size > MAX_BYTES) {
      return {
        record: emptyLiveness(),
        problems: [`${path}: larger than ${MAX_BYTES} bytes, not read; delete it`],
      };
    }
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { record: emptyLiveness(), problems: [] };
    }
    return { record: emptyLiveness(), problems: [`${path}: ${(error as Error).message}`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      record: emptyLiveness(),
      problems: [`${path}: not JSON; the next compaction writes it again (or delete it)`],
    };
  }
  const { record, problems } = parseLiveness(json);
  return { record, problems: problems.map((p) => `${path}: ${p}`) };
}

/**
 * Before events leave the buffer, their workers' sightings join the record, atomically (0600).
 * Written before the journal is rewritten: a crash between the two replays the cycle, and
 * folding the same events again gives the same record.
 */
export function rememberSightings(paths: StatePaths, leaving: readonly MemoryEvent[]): void {
  if (!leaving.some((e) => e.sender.role === "worker")) return;
  const next = foldSightings(readLiveness(paths).record, leaving);
  writeFileAtomicSync(livenessPath(paths), `${JSON.stringify(next)}\n`);
}
