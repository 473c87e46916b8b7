import { execFileSync } from "node:child_process";
/** Sealed engram repositories for the bench: catalogs, engrams and MEMORY.md from a seed. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openContext, type RepoContext } from "../src/context/repo-context.js";
import {
  catalogEntryFor,
  sealCatalog,
  sealEngram,
  serializeCatalog,
  serializeEngram,
} from "../src/core/model/engram.js";
import { renderFocusFor } from "../src/core/rendering/focus.js";
import { initRepository } from "../src/director/init.js";
import type { Catalog, CatalogEntry, Engram, EngramBody } from "../src/schema/engram.js";
import { Rng } from "../test/support/random.js";

const _ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const _UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

import { BASE_TIME } from "./envelope-fixtures.js";
import { CAUSES, COMPONENTS, ERROR_TYPES, filePath, noteText } from "./fixtures.js";

// ---------------------------------------------------------------------------------------
// Repositories

/** The `[memory]` budgets of a bench repository: room for everything the scenario holds. */
export interface BenchBudgets {
  buffer_max_bytes: number;
  buffer_max_events: number;
  st_max_total_bytes: number;
  lt_max_total_bytes: number;
  st_max_files: number;
  lt_max_files: number;
}

export const ROOMY_BUDGETS: BenchBudgets = {
  buffer_max_bytes: 128 * 1024 * 1024,
  buffer_max_events: 200_000,
  st_max_total_bytes: 256 * 1024 * 1024,
  lt_max_total_bytes: 256 * 1024 * 1024,
  st_max_files: 20_000,
  lt_max_files: 20_000,
};

export function configToml(budgets: BenchBudgets): string {
  return [
    "# engram bench repository: budgets large enough for the scenario to hold.",
    "[memory]",
    ...Object.entries(budgets).map(([key, value]) => `${key} = ${value}`),
    "",
  ].join("\n");
}

/** A repository laid out as `director init` does, after writing our own config/dev.toml. */
export async function initBenchRepo(repoDir: string, budgets: BenchBudgets): Promise<RepoContext> {
  mkdirSync(join(repoDir, "config"), { recursive: true });
  // The command line works only in a git work tree (as git does).
  execFileSync("git", ["init", "-q", repoDir], { stdio: "ignore" });
  writeFileSync(join(repoDir, "config", "dev.toml"), configToml(budgets));
  const ctx = await openContext({ repo: repoDir });
  initRepository(ctx);
  return ctx;
}

export function batchId(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/**
 * `count` realistic engrams, as compaction would have written them over ~60 days: ~5 per
 * batch, 85% short-term, 15% long-term (LT ones supersede earlier ST ones), a few to a dozen
 * facts and decisions each, links, provenance, signals, and telemetry on some.
 */
export function generateEngrams(count: number, seed = 0x5eed_0003): Engram[] {
  const rng = new Rng(seed);
  const out: Engram[] = [];
  const stIds: string[] = [];
  const span = 60 * 86_400_000;
  const batches = Math.max(1, Math.ceil(count / 5));
  for (let i = 0; i < count; i++) {
    const batch = Math.floor((i / count) * batches);
    const t = BASE_TIME - span + Math.floor((batch / batches) * span);
    const version = batchId(t);
    const createdAt = new Date(Math.floor(t / 1000) * 1000).toISOString();
    const start = new Date(t - rng.int(60, 3600) * 1000).toISOString();
    const lt = stIds.length > 20 && rng.chance(0.15);
    const component = rng.pickSkewed(COMPONENTS);
    const issue = rng.int(1, 400);
    const label = rng.chance(0.5) ? `issue-${issue}` : component;
    const topics = [...new Set([label, component, ...rng.some(COMPONENTS, 0, 4)])].slice(0, 12);
    const facts: string[] = [];
    const tentative: string[] = [];
    const decisions: { title: string; rationale: string }[] = [];
    let lessons = 0;
    let incidents = 0;
    const nFacts = rng.int(2, 7);
    for (let f = 0; f < nFacts; f++) {
      const kind = rng.pick([
        "fact",
        "lesson",
        "convention",
        "incident",
        "question",
        "fact",
      ] as const);
      const prefix =
        kind === "lesson"
          ? "Lesson: "
          : kind === "incident"
            ? "Incident: "
            : kind === "question"
              ? "Question: "
              : kind === "convention"
                ? "Convention: "
                : "";
      if (kind === "lesson") lessons++;
      if (kind === "incident") incidents++;
      const fact =
        prefix +
        noteText(rng, kind, rng.chance(0.6) ? component : rng.pickSkewed(COMPONENTS), 60, 200);
      facts.push(fact);
      if (kind === "question" || rng.chance(0.1)) tentative.push(fact);
    }
    const nDecisions = rng.chance(0.35) ? rng.int(1, 2) : 0;
    for (let d = 0; d < nDecisions; d++) {
      decisions.push({
        title: noteText(rng, "decision", component, 50, 120),
        rationale: noteText(rng, "fact", component, 60, 200),
      });
    }
    const links = rng
      .some(
        [`#${issue}`, filePath(rng), `#${rng.int(1, 400)}`, filePath(rng), `PR#${rng.int(1, 900)}`],
        0,
        4,
      )
      .map((ref) =>
        ref.startsWith("PR#")
          ? { type: "pr" as const, ref: ref.slice(2) }
          : ref.startsWith("#")
            ? { type: "issue" as const, ref }
            : { type: "file" as const, ref },
      );
    const senders = Array.from(
      { length: rng.int(1, 4) },
      () => `worker-${String(rng.int(1, 50)).padStart(2, "0")}`,
    );
    const errors = rng.chance(0.2) ? rng.int(1, 30) : 0;
    const body: EngramBody = {
      version,
      scope: lt ? "lt" : "st",
      created_at: createdAt,
      source_window: { start_ts: start, end_ts: createdAt },
      topics,
      facts,
      decisions,
      links,
      provenance: {
        created_by: "engram-director",
        run_id: lt ? `promote-${version}` : `run-${version}`,
        event_count: lt ? 0 : rng.int(5, 400),
        senders: [...new Set(senders)].sort(),
        message_types: lt
          ? {}
          : { "heartbeat.v1": rng.int(0, 300), "memory_note.v1": nFacts + nDecisions },
      },
      privacy: rng.chance(0.3) ? "public" : "private",
      signals: {
        notes: nFacts + nDecisions,
        decisions: nDecisions,
        lessons,
        incidents,
        errors,
        max_surprise: rng.chance(0.3) ? Math.round(rng.next() * 1000) / 1000 : null,
        mean_confidence: rng.chance(0.5) ? Math.round(rng.next() * 1000) / 1000 : null,
        redactions: rng.chance(0.05) ? 1 : 0,
        truncated: 0,
      },
    };
    if (tentative.length > 0) body.tentative = tentative;
    if (!lt && errors > 0) {
      const errorType = rng.pickSkewed(ERROR_TYPES);
      body.telemetry = {
        workers: [],
        errors: [
          {
            error_type: errorType,
            count: errors,
            retryable: rng.chance(0.5),
            sample: `${errorType}: ${rng.pick(CAUSES)} in ${component}`,
            workers: [...new Set(senders)].sort(),
          },
        ],
      };
    }
    if (lt) {
      const sources = [
        ...new Set(Array.from({ length: rng.int(1, 3) }, () => rng.pick(stIds))),
      ].sort();
      body.supersedes = sources;
      body.promotion = {
        reasons: facts.slice(0, 2).map((f) => `repeated in 3 engrams: ${f}`.slice(0, 200)),
      };
    }
    const engram = sealEngram(body);
    if (!lt) stIds.push(engram.engram_id);
    out.push(engram);
  }
  return out;
}

export interface EngramRepoStats {
  engrams: number;
  st: number;
  lt: number;
  bytes: number;
  catalog_bytes: number;
  memory_md_bytes: number;
  catalog_hash: string;
}

/**
 * Writes engram files, the sealed catalog and MEMORY.md (rendered by the real `renderFocus`)
 * into an initialized repository. Fixture files are written plainly (no fsync): this is set-up.
 */
export function writeEngramRepo(ctx: RepoContext, engrams: readonly Engram[]): EngramRepoStats {
  const entries: CatalogEntry[] = [];
  const dirs = new Set<string>();
  let bytes = 0;
  for (const engram of engrams) {
    const text = serializeEngram(engram);
    const size = Buffer.byteLength(text, "utf8");
    const entry = catalogEntryFor(engram, size);
    const dir = join(ctx.repoDir, "memory", engram.scope, engram.version);
    if (!dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      dirs.add(dir);
    }
    writeFileSync(join(ctx.repoDir, entry.path), text);
    entries.push(entry);
    bytes += size;
  }
  let newest = "";
  for (const e of engrams) if (e.created_at > newest) newest = e.created_at;
  const catalog: Catalog = sealCatalog(engrams.length > 0 ? 1 : 0, newest, entries);
  const catalogText = serializeCatalog(catalog);
  writeFileSync(join(ctx.repoDir, "memory", "catalog.json"), catalogText);
  const memory = ctx.config.memory;
  const focus = renderFocusFor(catalog, new Map(engrams.map((e) => [e.engram_id, e])), memory);
  writeFileSync(join(ctx.repoDir, "MEMORY.md"), focus.text);
  const lt = engrams.filter((e) => e.scope === "lt").length;
  return {
    engrams: engrams.length,
    st: engrams.length - lt,
    lt,
    bytes,
    catalog_bytes: Buffer.byteLength(catalogText, "utf8"),
    memory_md_bytes: focus.bytes,
    catalog_hash: catalog.hash,
  };
}
