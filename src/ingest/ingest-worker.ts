import { parentPort, workerData } from "node:worker_threads";
import { createRedactor } from "../core/ingest/redact.js";
import {
  type LineOutcome,
  loadEnvelopeSchemas,
  normalizeBatch,
  packOutcomes,
  splitLines,
} from "./normalize-batch.js";

/** A worker thread of the ingest pool: chunks of NDJSON in, packed outcomes out. */
interface Settings {
  maxMessageBytes: number;
  patterns: string[];
  sealKeyHex: string | undefined;
}
interface Job {
  id: number;
  text: string;
  firstLine: number;
  source: string;
  receivedAt: string;
}

const settings = workerData as Settings;
const redactor = createRedactor(settings.patterns);
const sealKey =
  settings.sealKeyHex === undefined ? undefined : Buffer.from(settings.sealKeyHex, "hex");

parentPort?.on("message", async (job: Job) => {
  const lines = splitLines(job.text, job.firstLine, job.source);
  const batch = {
    receivedAt: job.receivedAt,
    maxMessageBytes: settings.maxMessageBytes,
    redactor,
    sealKey,
  };
  let outcomes = normalizeBatch(lines, batch);
  if (outcomes === undefined) {
    await loadEnvelopeSchemas();
    outcomes = normalizeBatch(lines, batch) as LineOutcome[];
  }
  parentPort?.postMessage({ id: job.id, packed: packOutcomes(outcomes, job.receivedAt) });
});
