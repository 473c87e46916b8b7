import { z } from "zod";
import { IsoTime } from "./common.js";

/**
 * A pai-seed `seed.json`, as far as engram reads it (the learnings and the proposals). Unknown
 * keys pass, as pai-seed's own schema lets them; engram never writes the file.
 */
export const SeedLearning = z.looseObject({
  id: z.string().min(1),
  content: z.string().min(1),
  source: z.string().min(1),
  extractedAt: IsoTime,
  confirmedAt: IsoTime.optional(),
  confirmed: z.boolean(),
  tags: z.array(z.string()),
});
export type SeedLearning = z.infer<typeof SeedLearning>;

export const SeedProposal = z.looseObject({
  id: z.string().min(1),
  type: z.enum(["pattern", "insight", "self_knowledge"]),
  content: z.string().min(1),
  source: z.string().min(1),
  extractedAt: IsoTime,
  status: z.enum(["pending", "accepted", "rejected"]),
  method: z.enum(["acr", "regex"]).optional(),
  confidence: z.number().min(0).max(1).optional(),
  decidedAt: IsoTime.optional(),
});
export type SeedProposal = z.infer<typeof SeedProposal>;

export const Seed = z.looseObject({
  version: z.string().regex(/^\d+\.\d+\.\d+/, "expected a semver version"),
  learned: z.looseObject({
    patterns: z.array(SeedLearning),
    insights: z.array(SeedLearning),
    selfKnowledge: z.array(SeedLearning),
  }),
  state: z.looseObject({
    proposals: z.array(SeedProposal),
  }),
});
export type Seed = z.infer<typeof Seed>;
