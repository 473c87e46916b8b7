import { mkdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { itemKey } from "../../src/core/sync/item.js";
import { isEngramOutput, markdownItem } from "../../src/core/sync/markdown.js";
import { emptyQueue, enqueue, markSynced, type TargetQueue } from "../../src/core/sync/queue.js";
import { MarkdownSourceConfig } from "../../src/schema/sources-config.js";
import { parseFrontmatter } from "../../src/sources/frontmatter.js";
import { scanMarkdown } from "../../src/sources/markdown.js";
import { FAKE_KINDS, Rng } from "../support/fake-secrets.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());
const redactor = createRedactor();
const folder = { path: "notes", kind: "learning" as const, privacy: "public" as const };

describe("markdown frontmatter", () => {
  it("reads YAML frontmatter and the body", () => {
    const fm = parseFrontmatter("---\nrating: 8\ntags: [a, b]\n---\n# Title\n\nbody\n");
    expect(fm).toEqual({
      data: { rating: 8, tags: ["a", "b"] },
      body: "# Title\n\nbody\n",
      warning: null,
    });
  });

  it("missing, unclosed or malformed frontmatter keeps the body and says why", () => {
    expect(parseFrontmatter("just text").warning).toBe("no YAML frontmatter");
    expect(parseFrontmatter("---\na: 1\nno end").body).toBe("---\na: 1\nno end");
    const bad = parseFrontmatter("---\nrating: 8\ntags: [a, b\n---\nthe body\n");
    expect(bad.body).toBe("the body\n");
    expect(bad.warning).toMatch(/^malformed YAML frontmatter: line \d+, column \d+: \w/);
    expect(bad.warning).not.toMatch(/at line/);
    expect(parseFrontmatter("---\n- a\n- b\n---\nx").warning).toMatch(/not a mapping/);
  });

  it("recognises engram's own output (generated marker, source: engram...)", () => {
    const check = (text: string) => isEngramOutput(text, parseFrontmatter(text).data);
    expect(
      check(
        "# Memory\n\n<!-- engram: generated from memory/catalog.json version 3 hash sha256:ab; do not edit -->\n",
      ),
    ).toBe(true);
    expect(check("---\nsource: engram recall\n---\nhits")).toBe(true);
    expect(check("---\nsource: a talk\n---\nnotes")).toBe(false);
  });
});

describe("a markdown file as a sync item", () => {
  it("titles by capture_type and title, keeps every frontmatter key, redacts secrets", () => {
    const secret = (FAKE_KINDS["github-pat"] as (r: Rng) => { secret: string })(new Rng(7)).secret;
    const text = [
      "---",
      "capture_type: LEARNING",
      "rating: 9",
      "source: incident review",
      "tags: [apt-28, lateral]",
      "timestamp: 2026-01-05T10:00:00Z",
      `token: ${secret}`,
      "session: abc123",
      "---",
      "# apt-28 moved laterally",
      "",
      `They used ${secret} from a leaked CI log.`,
    ].join("\n");
    const made = markdownItem(
      { folder, relative: "a/one.md", frontmatter: parseFrontmatter(text), sha256: "f".repeat(64) },
      redactor,
      "proj",
    );
    const { item } = made.candidate;
    expect(item.title).toBe("LEARNING: apt-28 moved laterally");
    expect(item.occurred_at).toBe("2026-01-05T10:00:00.000Z");
    expect(item.fields).toMatchObject({
      kind: "learning",
      capture_type: "LEARNING",
      rating: 9,
      tags: ["apt-28", "lateral"],
      file: "notes/a/one.md",
      file_sha256: "f".repeat(64),
    });
    expect(item.fields.source_description).toContain("Source: incident review | Rating: 9");
    expect(item.fields.source_description).toContain("session: abc123");
    expect(made.redactions).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(item)).not.toContain(secret);
    expect(item.content).toContain("[REDACTED:");
    // Frontmatter privacy wins over the folder's.
    const priv = markdownItem(
      {
        folder,
        relative: "p.md",
        frontmatter: parseFrontmatter("---\nprivacy: private\n---\nx"),
        sha256: "0",
      },
      redactor,
      "proj",
    );
    expect(priv.candidate.item.privacy).toBe("private");
  });
});

function config(extra: Record<string, unknown> = {}) {
  return MarkdownSourceConfig.parse({ folders: [{ path: "notes" }], ...extra });
}

function sent(
  queue: TargetQueue,
  keys: readonly string[],
  candidates: Parameters<typeof enqueue>[1],
) {
  let q = enqueue(queue, candidates, "2026-01-05T10:00:00.000Z").queue;
  for (const key of keys) q = markSynced(q, key, `remote-${key}`, "2026-01-05T10:00:01.000Z");
  return q;
}

describe("scanning markdown folders", () => {
  it("is incremental by file hash, caps a run, archives removed files, skips engram output", async () => {
    const repo = dirs.dir("engram-md-");
    const notes = join(repo, "notes");
    mkdirSync(join(notes, "deep"), { recursive: true });
    for (let i = 0; i < 5; i++)
      writeFileSync(join(notes, `n${i}.md`), `---\nrating: ${i}\n---\nnote ${i}\n`);
    writeFileSync(join(notes, "deep", "x.txt"), "not markdown");
    writeFileSync(
      join(notes, "MEMORY.md"),
      "<!-- engram: generated from memory/catalog.json version 1 -->\n",
    );
    const options = { repoDir: repo, stateDir: join(repo, ".engram"), redactor, project: "p" };

    const capped = await scanMarkdown(emptyQueue(), {
      ...options,
      config: config({ max_files_per_run: 3 }),
    });
    expect(capped.candidates).toHaveLength(3);
    expect(capped.report).toMatchObject({ files: 5, deferred: 2, excluded: 1 });

    const first = await scanMarkdown(emptyQueue(), { ...options, config: config() });
    expect(first.report.new).toHaveLength(5);
    const keys = first.candidates.map((c) => itemKey(c.item));
    // Queued but not delivered yet: waiting, not unchanged, and not offered twice.
    const queued = enqueue(emptyQueue(), first.candidates, "2026-01-05T10:00:00.000Z").queue;
    const waiting = await scanMarkdown(queued, { ...options, config: config() });
    expect(waiting.report).toMatchObject({ waiting: 5, unchanged: 0 });
    expect(waiting.candidates).toHaveLength(0);
    let queue = sent(emptyQueue(), keys, first.candidates);

    const again = await scanMarkdown(queue, { ...options, config: config() });
    expect(again.candidates).toHaveLength(0);
    expect(again.report.unchanged).toBe(5);

    writeFileSync(join(notes, "n1.md"), "---\nrating: 1\n---\nnote 1, edited\n");
    unlinkSync(join(notes, "n2.md"));
    const third = await scanMarkdown(queue, { ...options, config: config() });
    expect(third.report.changed.map((f) => f.file)).toEqual(["notes/n1.md"]);
    expect(third.report.removed).toHaveLength(1);
    const removed = third.candidates.find((c) => c.item.fields.status === "removed");
    expect(removed?.item.content).toBe("");
    queue = sent(
      queue,
      third.candidates.map((c) => itemKey(c.item)),
      third.candidates,
    );
    // Archived once: the removal is not offered again.
    expect((await scanMarkdown(queue, { ...options, config: config() })).candidates).toHaveLength(
      0,
    );

    const all = await scanMarkdown(queue, { ...options, config: config(), all: true });
    expect(all.candidates).toHaveLength(4);

    // A missing folder is a warning, and its files are not taken for removed.
    rmSync(notes, { recursive: true });
    const gone = await scanMarkdown(queue, { ...options, config: config() });
    expect(gone.candidates).toHaveLength(0);
    expect(gone.report.warnings).toEqual(["[sources.markdown] notes: folder not found; skipped"]);
  });
});
