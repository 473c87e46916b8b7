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
  confirmed_by: "merge" | "local";
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

/** `2026-11-17T12:00:00Z`: ISO-8601 UTC, to the second. */
export function isoSeconds(seconds: number): string {
  const full = new Date(seconds * 1000).toISOString();
  // `YYYY-MM-DDTHH:MM:SS.mmmZ`; years beyond 9999 take the longer form and the general path.
  return full.length === 24 ? `${full.slice(0, 19)}Z` : full.replace(/\.\d{3}Z$/, "Z");
}

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `isoSeconds` for many times: the date part is formatted once per day, the time of day by
 * arithmetic, so 40,000 learnings do not build 120,000 `Date`s.
 */
function isoMemo(): (seconds: number) => string {
  const dates = new Map<number, string>();
  return (seconds) => {
    if (!Number.isSafeInteger(seconds)) return isoSeconds(seconds);
    const day = Math.floor(seconds / DAY);
    let date = dates.get(day);
    if (date === undefined) {
      date = isoSeconds(day * DAY).slice(0, -9);
      dates.set(day, date);
    }
    const rest = seconds - day * DAY;
    const hours = Math.floor(rest / 3600);
    const minutes = Math.floor((rest % 3600) / 60);
    return `${date}${two(hours)}:${two(minutes)}:${two(rest % 60)}Z`;
  };
}

/**
 * Graph-aware freshness: a learning stays fresh while anything it links to (its files, its
 * projects' and components' paths, its people, issues and PRs) keeps moving, however old the
 * learning itself is; temporal freshness looks at the confirmation time alone.
 */
export function freshnessOf(
  learning: LinkedLearning,
  confirmed: { at: number; by: "merge" | "local" },
  activityOf: ActivityOf,
  options: FreshnessOptions,
  iso: (seconds: number) => string = isoSeconds,
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
  const confirmedWords = `${confirmed.by === "merge" ? "confirmed" : "written"} ${days(confirmed.at)} days ago`;
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

/** The freshness of every learning, formatting each distinct time once. */
export function freshnessOfAll(
  learnings: readonly LinkedLearning[],
  confirmedOf: (learning: LinkedLearning) => { at: number; by: "merge" | "local" },
  activityOf: ActivityOf,
  options: FreshnessOptions,
): Freshness[] {
  const iso = isoMemo();
  return learnings.map((l) => freshnessOf(l, confirmedOf(l), activityOf, options, iso));
}
