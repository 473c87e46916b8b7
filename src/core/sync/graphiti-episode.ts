import { createHash } from "node:crypto";

/** Graphiti's limits as its clients apply them: longer names are cut, longer bodies split. */
export const EPISODE_NAME_MAX = 200;
export const EPISODE_BODY_MAX = 5000;

const GROUP_ID = /^[a-zA-Z0-9_-]+$/;

export function validGroupId(group: string): boolean {
  return GROUP_ID.test(group);
}

/** One `add_memory` call. */
export interface EpisodePart {
  name: string;
  episode_body: string;
  group_id: string;
  source: "text";
  source_description: string;
  reference_time: string;
  uuid: string;
}

export interface EpisodeInput {
  title: string;
  body: string;
  group_id: string;
  /** Provenance: where the item comes from (frontmatter, file, engram key). */
  source_description: string;
  reference_time: string;
  content_hash: string;
}

/**
 * A UUID (version 8, RFC 9562 custom) derived from the content hash and the part index: the
 * same content always yields the same episode id, so a re-send is recognised, never doubled.
 */
export function episodeUuid(contentHash: string, part: number): string {
  const h = createHash("sha256").update(`engram-graphiti/v1\0${contentHash}\0${part}`).digest();
  const b = Buffer.from(h.subarray(0, 16));
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const x = b.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * Splits a body into consecutive parts of at most `max` characters, preferring a paragraph,
 * then a line, then a space boundary; nothing is dropped: the parts joined give the body back.
 */
export function splitBody(body: string, max = EPISODE_BODY_MAX): string[] {
  const parts: string[] = [];
  let rest = body;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = window.lastIndexOf("\n\n");
    if (cut < max / 2) cut = window.lastIndexOf("\n");
    if (cut < max / 2) cut = window.lastIndexOf(" ");
    if (cut < max / 2) cut = max;
    else cut += 1;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  parts.push(rest);
  return parts;
}

function cutName(name: string): string {
  return [...name].length <= EPISODE_NAME_MAX
    ? name
    : [...name].slice(0, EPISODE_NAME_MAX).join("");
}

/** The `add_memory` calls for one item, in order; a split body gets "(part i/n)" names. */
export function episodeParts(input: EpisodeInput): EpisodePart[] {
  if (!validGroupId(input.group_id)) {
    throw new Error(`group_id "${input.group_id}" must match ^[a-zA-Z0-9_-]+$`);
  }
  const bodies = splitBody(input.body);
  return bodies.map((episode_body, i) => {
    const suffix = bodies.length > 1 ? ` (part ${i + 1}/${bodies.length})` : "";
    const title = cutName(input.title);
    const name =
      suffix === ""
        ? title
        : `${[...title].slice(0, EPISODE_NAME_MAX - suffix.length).join("")}${suffix}`;
    return {
      name,
      episode_body,
      group_id: input.group_id,
      source: "text",
      source_description: input.source_description,
      reference_time: input.reference_time,
      uuid: episodeUuid(input.content_hash, i),
    };
  });
}

/** Lucene's special characters, as graphiti_core's `lucene_sanitize` escapes them. */
const LUCENE_SPECIAL = /[+\-&|!(){}[\]^"~*?:\\/]/g;

/**
 * A search query for the server's backend: FalkorDB's full-text search reads Lucene syntax, so
 * "apt-28" would mean "apt NOT 28" unless escaped; Neo4j's path escapes on the server.
 */
export function searchQuery(query: string, backend: "neo4j" | "falkordb"): string {
  return backend === "falkordb" ? query.replace(LUCENE_SPECIAL, (c) => `\\${c}`) : query;
}
