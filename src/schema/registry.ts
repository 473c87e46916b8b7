import { z } from "zod";

/**
 * `config/registry.toml`: the people, projects and components that learnings are linked to.
 * Kept by people in the repository; engram only reads it.
 */
const RegistryId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "expected letters, digits, _ . - (at most 64)");
const Alias = z.string().min(2).max(100);

export const RegistryPerson = z
  .object({
    id: RegistryId,
    name: z.string().min(1).max(200),
    aliases: z.array(Alias).max(50).default([]),
    emails: z.array(z.string().min(3).max(254)).max(50).default([]),
  })
  .strict();

export const RegistryArea = z
  .object({
    id: RegistryId,
    name: z.string().min(1).max(200),
    aliases: z.array(Alias).max(50).default([]),
    /** Path globs (`*` within a folder, `**` across folders) of the files it covers. */
    paths: z.array(z.string().min(1).max(500)).max(100).default([]),
  })
  .strict();

export const Registry = z
  .object({
    people: z.array(RegistryPerson).max(10_000).default([]),
    projects: z.array(RegistryArea).max(10_000).default([]),
    components: z.array(RegistryArea).max(10_000).default([]),
  })
  .strict();

export type Registry = z.infer<typeof Registry>;
export type RegistryPerson = z.infer<typeof RegistryPerson>;
export type RegistryArea = z.infer<typeof RegistryArea>;
