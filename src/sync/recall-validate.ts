/**
 * The background validation of a recall stated at confidence 0.7 or more: started detached
 * by `worker recall`, it asks the stores and fills the recall cache, then exits. It prints
 * nothing (no one reads it); a failure is logged in the sync log like any remote recall.
 */
import { receiptTime } from "../clock.js";
import { openContext } from "../context/repo-context.js";
import { askTargets, recallCache } from "./hybrid-recall.js";

interface Job {
  repo: string;
  config?: string;
  query: string;
  limit: number;
  targets: ("notion" | "graphiti")[];
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? "{}") as Job;
  const ctx = await openContext({ repo: job.repo, config: job.config });
  const asked = await askTargets(ctx, job.query, job.limit, job.targets, receiptTime());
  recallCache(ctx).update(asked.entries);
}

main().then(
  () => process.exit(0),
  () => process.exit(1),
);
