import type { EntityId, LinkedLearning } from "./entities.js";

/** When something linked to a learning last moved, and what that was. */
export interface Activity {
  /** Seconds since 1970. */
  at: number;
  /** What moved, e.g. "commit 1a2b3c4 by ada@example.com". */
  detail: string;
}

/** The repository's activity per entity, read from git (and GitHub when configured). */
export type ActivityOf = (entity: EntityId) => Activity | undefined;

/** Where `confirmed_at` comes from: the memory a learning was imported from, a merge, or the engram. */
export type ConfirmedBy = "origin" | "merge" | "local";

export interface FreshnessOptions {
  /** Seconds since 1970: the Director's clock (SOURCE_DATE_EPOCH when set). */
  now: number;
  thresholdDays: number;
}

export interface Freshness {
  id: string;
  type: string;
  text: string;
  /** When the learning was confirmed (its engram merged on main), or written locally. */
  confirmed_at: string;
  confirmed_by: ConfirmedBy;
  /** The newest activity of anything it links to, and which entity that was. */
  graph_activity: { at: string; entity: EntityId; detail: string } | null;
  /** The newer of the two. */
  contextual_at: string;
  age_days: number;
  fresh: boolean;
  /** The verdict of a purely temporal check (confirmed_at alone), for comparison. */
  temporal_fresh: boolean;
  why: string;
}

const DAY = 86_400;

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Graph-aware freshness: a learning stays fresh while anything it links to (its files, its
 * projects' and components' paths, its people, issues and PRs) keeps moving, however old the
 * learning itself is; temporal freshness looks at the confirmation time alone.
 */
export function freshnessOf(
  learning: LinkedLearning,
  confirmed: { at: number; by: ConfirmedBy },
  activityOf: ActivityOf,
  options: FreshnessOptions,
): Freshness {
  let newest: { entity: EntityId; activity: Activity } | undefined;
  for (const entity of learning.entities) {
    const activity = activityOf(entity);
    if (activity && (!newest || activity.at > newest.activity.at)) newest = { entity, activity };
  }
  const contextual = Math.max(confirmed.at, newest?.activity.at ?? 0);
  const limit = options.thresholdDays * DAY;
  const fresh = options.now - contextual <= limit;
  const temporalFresh = options.now - confirmed.at <= limit;
  const days = (s: number) => Math.floor((options.now - s) / DAY);
  const confirmedWords = `${confirmed.by === "local" ? "written" : "confirmed"} ${days(confirmed.at)} days ago`;
  let why: string;
  if (!newest) {
    why = `${confirmedWords}; links to nothing with activity (${learning.entities.length} entities)`;
  } else {
    const moved = `${newest.entity} last moved ${days(newest.activity.at)} days ago (${newest.activity.detail})`;
    why = `${confirmedWords}; ${moved}`;
  }
  return {
    id: learning.id,
    type: learning.type,
    text: learning.text,
    confirmed_at: iso(confirmed.at),
    confirmed_by: confirmed.by,
    graph_activity: newest
      ? { at: iso(newest.activity.at), entity: newest.entity, detail: newest.activity.detail }
      : null,
    contextual_at: iso(contextual),
    age_days: days(contextual),
    fresh,
    temporal_fresh: temporalFresh,
    why,
  };
}
