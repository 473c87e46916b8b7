import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** Every file under `dir` (dotfiles included), as sorted POSIX paths relative to `base`. */
export function listFiles(dir: string, base = dir, skip: readonly string[] = []): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      const rel = relative(base, full).split(sep).join("/");
      if (skip.includes(rel)) continue;
      if (statSync(full).isDirectory()) walk(full);
      else out.push(rel);
    }
  };
  walk(dir);
  return out.sort();
}

/** path -> bytes of every file under the given roots (relative to `base`). */
export function snapshot(base: string, roots: readonly string[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const root of roots) {
    const full = join(base, root);
    if (!existsSync(full)) continue;
    if (statSync(full).isDirectory()) {
      for (const rel of listFiles(full, base)) out.set(rel, readFileSync(join(base, rel)));
    } else {
      out.set(root, readFileSync(full));
    }
  }
  return out;
}

/** The files under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  return listFiles(dir).filter((rel) => readFileSync(join(dir, rel)).includes(needle));
}

export interface EngramFile {
  path: string;
  bytes: number;
  engram: {
    engram_id: string;
    hash: string;
    version: string;
    scope: "st" | "lt";
    facts: string[];
    decisions: { title: string; rationale: string }[];
    topics: string[];
    tentative?: string[];
    supersedes?: string[];
    provenance: { event_count: number; part?: number; [key: string]: unknown };
    [key: string]: unknown;
  };
}

/** Every `engram_*.json` under memory/st and memory/lt. */
export function readEngrams(repoDir: string, scope?: "st" | "lt"): EngramFile[] {
  const scopes = scope ? [scope] : (["st", "lt"] as const);
  const out: EngramFile[] = [];
  for (const s of scopes) {
    for (const rel of listFiles(join(repoDir, "memory", s), repoDir)) {
      if (!/\/engram_[^/]+\.json$/.test(rel)) continue;
      const text = readFileSync(join(repoDir, rel));
      out.push({ path: rel, bytes: text.length, engram: JSON.parse(text.toString("utf8")) });
    }
  }
  return out;
}

export interface CatalogFile {
  catalog_version: number;
  created_at: string;
  hash: string;
  entries: {
    engram_id: string;
    scope: "st" | "lt";
    version: string;
    path: string;
    hash: string;
    bytes: number;
  }[];
}

export function readCatalogFile(repoDir: string): CatalogFile {
  return JSON.parse(readFileSync(join(repoDir, "memory", "catalog.json"), "utf8")) as CatalogFile;
}

export interface JournalEvent {
  key: string;
  seq: number;
  type: string;
  kind: string;
  text?: string;
  received_at: string;
  [key: string]: unknown;
}

export interface Journal {
  raw: string;
  events: JournalEvent[];
  /** Lines that do not parse, including a last line without its newline. */
  bad: string[];
}

/** The Director's buffer journal, read leniently so that a test can report what is wrong. */
export function readJournal(repoDir: string, stateDir = ".engram"): Journal {
  const path = join(repoDir, stateDir, "buffer", "journal.ndjson");
  const raw = existsSync(path) ? readFileSync(path, "utf8") : "";
  const events: JournalEvent[] = [];
  const bad: string[] = [];
  const lines = raw.split("\n");
  const tail = lines.pop();
  if (tail !== undefined && tail !== "") bad.push(tail);
  for (const line of lines) {
    try {
      events.push(JSON.parse(line) as JournalEvent);
    } catch {
      bad.push(line);
    }
  }
  return { raw, events, bad };
}

/** Lines of an NDJSON file, parsed; a missing file is empty. */
export function readNdjson<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}
