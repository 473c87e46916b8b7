import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import type { RepoContext } from "../context/repo-context.js";
import { seedEnvelopes } from "../core/ingest/seed-envelopes.js";
import { InputError } from "../errors.js";
import type { IngestCounts } from "../ingest/ingest.js";
import { Seed } from "../schema/seed.js";
import { ingestSource } from "./ingest.js";

export interface FromSeedResult extends IngestCounts {
  seed: string;
  learnings: number;
  proposals: number;
  skipped: number;
  buffer: { events: number; bytes: number };
}

/** RFC 6901: `~` and `/` escaped in each segment. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/**
 * A pai-seed `seed.json`, read (never written) and validated; a malformed file is an
 * `InputError` naming the path and the field as a JSON pointer.
 */
export function readSeed(path: string): Seed {
  const text = readFileSync(path, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
  } catch (err) {
    throw new InputError(`${path}: not JSON: ${(err as Error).message}`, path, "", { cause: err });
  }
  const result = Seed.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const pointer = pointerOf(issue?.path ?? []);
  throw new InputError(
    `${path}: ${pointer === "" ? "(root)" : pointer}: ${issue?.message ?? "invalid"}`,
    path,
    pointer,
  );
}

/**
 * `director ingest --from-seed PATH`: the seed's confirmed learnings and pending proposals
 * as notes, through the normal ingest path (validated, redacted, journalled, deduplicated by
 * their `seed:` event ids, so a second import adds nothing).
 */
export async function ingestSeed(
  ctx: RepoContext,
  path: string,
  privacy: "public" | "private" = "private",
): Promise<FromSeedResult> {
  const seed = readSeed(path);
  const { text, learnings, proposals, skipped } = seedEnvelopes(seed, privacy);
  const { noteLines: _noteLines, ...counts } = await ingestSource(ctx, {
    stream: Readable.from([text]),
    name: `seed:${path}`,
  });
  return { seed: path, learnings, proposals, skipped, ...counts };
}
