import type { EngramBody } from "../../schema/engram.js";
import type { KnownClaims } from "../graph/claims.js";

/** How a slice of events is compacted into engrams (compact.ts, and history.ts for commits). */
export interface CompactionPolicy {
  engram_max_bytes: number;
  stall_seconds: number;
  promote_min_confidence: number;
  /** At most this many groups per slice; the rest are merged into one `other` group. */
  max_groups: number;
  /** Links each engram to the registry's entities (absent: engrams carry no `entities`). */
  entities?: ((body: EngramBody) => string[]) | undefined;
  /** Claims memory already holds: restating one raises its evidence instead of a copy. */
  known?: KnownClaims | undefined;
}
