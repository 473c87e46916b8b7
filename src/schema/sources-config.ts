import { z } from "zod";
import { Privacy } from "./common.js";

/** A Graphiti `group_id`: the server rejects anything else. */
export const GraphitiGroup = z
  .string()
  .regex(/^[a-zA-Z0-9_-]+$/, "expected letters, digits, _ or - (Graphiti's group_id rule)")
  .max(100);

/** One `[[sources.markdown.folders]]` entry: a folder, its globs and where its files go. */
export const MarkdownFolderConfig = z
  .object({
    path: z
      .string()
      .min(1)
      .meta({ examples: ["notes/learning", "/home/me/.claude/MEMORY/RESEARCH"] })
      .describe(
        "The folder, relative to the repository or absolute; one outside the repository is read only when ENGRAM_ALLOW_FOLDERS names it. A missing folder is a warning.",
      ),
    globs: z
      .array(z.string().min(1))
      .min(1)
      .max(20)
      .default(["**/*.md"])
      .describe(
        "Which files of the folder (fast-glob patterns, relative to it); only *.md files, never dotfiles, are read.",
      ),
    kind: z
      .enum(["learning", "research"])
      .default("learning")
      .describe("What the files are; picks the Graphiti group of that kind unless `group` is set."),
    group: GraphitiGroup.optional().describe(
      "The Graphiti group_id of this folder's files; default: [sync.graphiti] groups of `kind`.",
    ),
    privacy: Privacy.optional().describe(
      "Privacy of a file without a `privacy` frontmatter key; default: [sources.markdown] privacy.",
    ),
  })
  .strict();
export type MarkdownFolderConfig = z.infer<typeof MarkdownFolderConfig>;

/** `[sources.markdown]`: markdown memory files (YAML frontmatter) synced to the knowledge graph. */
export const MarkdownSourceConfig = z
  .object({
    folders: z
      .array(MarkdownFolderConfig)
      .max(50)
      .default([])
      .describe("The folders to read; none means the source is off."),
    max_files_per_run: z
      .number()
      .int()
      .positive()
      .max(10_000)
      .default(50)
      .describe(
        "Most new, changed or removed files one sync run queues; the rest wait for the next.",
      ),
    max_file_bytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024)
      .describe("A larger file is skipped with a warning."),
    privacy: Privacy.default("public").describe(
      "Privacy of a file whose folder and frontmatter say none: listing a folder is the opt-in to send it.",
    ),
  })
  .strict();
export type MarkdownSourceConfig = z.infer<typeof MarkdownSourceConfig>;

/** `[sources]`: what the sync engine reads besides memory. */
export const SourcesConfig = z
  .object({
    markdown: MarkdownSourceConfig.prefault({}).describe("Markdown memory files."),
  })
  .strict();
export type SourcesConfig = z.infer<typeof SourcesConfig>;
