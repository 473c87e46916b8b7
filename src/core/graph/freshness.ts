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
/** How a learning's `confirmed_at` was found: seed.json's confirmedAt, its PR's merge, or local. */
export const CONFIRMED_BY = ["origin", "merge", "local"] as const;
export type ConfirmedBy = (typeof CONFIRMED_BY)[number];

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

/** `2026-11-17T12:00:00Z`: ISO-8601 UTC, to the second. */
export function isoSeconds(seconds: number): string {
  const full = new Date(seconds * 1000).toISOString();
  // `YYYY-MM-DDTHH:MM:SS.mmmZ`; years beyond 9999 take the longer form and the general path.
  return full.length === 24 ? `${full.slice(0, 19)}Z` : full.replace(/\.\d{3}Z$/, "Z");
}

/**
 * How a freshness verdict is worded. Over a whole memory the same times (batches, merges,
 * commits) and the same entities come back for thousands of learnings: `memoFormat` words
 * each once and shares the strings, so a verdict costs little more than its comparison.
 */
interface Format {
  iso(seconds: number): string;
  /** `confirmed N days ago` / `written N days ago`. */
  confirmed(at: number, by: ConfirmedBy): string;
  /** The entity's activity as reported, and `ENTITY last moved N days ago (DETAIL)`. */
  moved(entity: EntityId, activity: Activity): { view: GraphActivity; words: string };
}

type GraphActivity = NonNullable<Freshness["graph_activity"]>;

function plainFormat(now: number, iso: (seconds: number) => string = isoSeconds): Format {
  const days = (s: number) => Math.floor((now - s) / DAY);
  return {
    iso,
    confirmed: (at, by) => `${by === "local" ? "written" : "confirmed"} ${days(at)} days ago`,
    moved: (entity, activity) => ({
      view: { at: iso(activity.at), entity, detail: activity.detail },
      words: `${entity} last moved ${days(activity.at)} days ago (${activity.detail})`,
    }),
  };
}

function memoFormat(now: number): Format {
  const times = new Map<number, string>();
  const iso = (seconds: number) => {
    let text = times.get(seconds);
    if (text === undefined) {
      text = isoSeconds(seconds);
      times.set(seconds, text);
    }
    return text;
  };
  const plain = plainFormat(now, iso);
  const confirmedWords: Record<ConfirmedBy, Map<number, string>> = {
    origin: new Map(),
    merge: new Map(),
    local: new Map(),
  };
  const movedWords = new Map<EntityId, { activity: Activity; out: ReturnType<Format["moved"]> }>();
  return {
    iso,
    confirmed(at, by) {
      let text = confirmedWords[by].get(at);
      if (text === undefined) {
        text = plain.confirmed(at, by);
        confirmedWords[by].set(at, text);
      }
      return text;
    },
    moved(entity, activity) {
      const known = movedWords.get(entity);
      if (known?.activity === activity) return known.out;
      const out = plain.moved(entity, activity);
      movedWords.set(entity, { activity, out });
      return out;
    },
  };
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
  format: Format = plainFormat(options.now),
): Freshness {
  let newestEntity: EntityId | undefined;
  let newest: Activity | undefined;
  for (const entity of learning.entities) {
    const activity = activityOf(entity);
    if (activity && (!newest || activity.at > newest.at)) {
      newest = activity;
      newestEntity = entity;
    }
  }
  const contextual = Math.max(confirmed.at, newest?.at ?? 0);
  const limit = options.thresholdDays * DAY;
  const moved = newest ? format.moved(newestEntity as EntityId, newest) : undefined;
  const confirmedWords = format.confirmed(confirmed.at, confirmed.by);
  return {
    id: learning.id,
    type: learning.type,
    text: learning.text,
    confirmed_at: format.iso(confirmed.at),
    confirmed_by: confirmed.by,
    graph_activity: moved ? moved.view : null,
    contextual_at: format.iso(contextual),
    age_days: Math.floor((options.now - contextual) / DAY),
    fresh: options.now - contextual <= limit,
    temporal_fresh: options.now - confirmed.at <= limit,
    why: moved
      ? `${confirmedWords}; ${moved.words}`
      : `${confirmedWords}; links to nothing with activity (${learning.entities.length} entities)`,
  };
}

/** The freshness of every learning, each time and each entity's activity worded once. */
export function freshnessOfAll(
  learnings: readonly LinkedLearning[],
  confirmedOf: (learning: LinkedLearning) => { at: number; by: ConfirmedBy },
  activityOf: ActivityOf,
  options: FreshnessOptions,
): Freshness[] {
  const format = memoFormat(options.now);
  return learnings.map((l) => freshnessOf(l, confirmedOf(l), activityOf, options, format));
}
