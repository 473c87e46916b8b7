import { z } from "zod";

/** Filename-safe identifier: `A-Z a-z 0-9 _ -`. */
export const SafeId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, "expected 1-128 characters of A-Z a-z 0-9 _ -");

/** An ISO-8601 time with any offset: what workers send. */
export const IsoTime = z.iso.datetime({ offset: true });

/** An ISO-8601 UTC time (`Z`): everything the Director writes, so files do not depend on a zone. */
export const UtcTime = z.iso.datetime();

export const Privacy = z.enum(["public", "private", "sensitive"]);
export type Privacy = z.infer<typeof Privacy>;

export const LinkType = z.enum(["issue", "pr", "file", "spec", "commit", "url"]);
export type LinkType = z.infer<typeof LinkType>;

export const Link = z.object({ type: LinkType, ref: z.string().min(1).max(512) }).strict();
export type Link = z.infer<typeof Link>;

export const Sha256Ref = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 hex digits>");

/** AES-256-GCM sealed text (privacy `sensitive`): base64 fields. */
export const Sealed = z
  .object({
    alg: z.literal("A256GCM"),
    iv: z.string(),
    ct: z.string(),
    tag: z.string(),
    field: z.string(),
  })
  .strict();
export type Sealed = z.infer<typeof Sealed>;
