import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { PackedOutcomes } from "./normalize-batch.js";

/** A small young generation keeps each worker's memory low at almost no cost in speed. */
const YOUNG_MB = 8;

export interface PoolSettings {
  maxMessageBytes: number;
  patterns: readonly string[];
  sealKey: Uint8Array | undefined;
}

/**
 * Worker threads that normalize large inputs while the main thread deduplicates, appends and
 * fsyncs. Chunks go out as one string and come back packed, so little time is spent copying
 * between threads; the caller applies results in input order.
 */
export class IngestPool {
  private readonly workers: Worker[];
  private readonly waiting = new Map<
    number,
    { resolve: (p: PackedOutcomes) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;

  private constructor(script: string, size: number, settings: PoolSettings) {
    const workerData = {
      maxMessageBytes: settings.maxMessageBytes,
      patterns: [...settings.patterns],
      sealKeyHex:
        settings.sealKey === undefined ? undefined : Buffer.from(settings.sealKey).toString("hex"),
    };
    this.workers = Array.from({ length: size }, () => {
      // Bounded heaps: a worker holds a chunk or two at a time, and the whole ingest has to
      // stay within its memory budget.
      const worker = new Worker(script, {
        workerData,
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB, maxOldGenerationSizeMb: 128 },
      });
      worker.on("message", (message: { id: number; packed: PackedOutcomes }) => {
        this.waiting.get(message.id)?.resolve(message.packed);
        this.waiting.delete(message.id);
      });
      worker.on("error", (error) => {
        for (const { reject } of this.waiting.values()) reject(error);
        this.waiting.clear();
      });
      return worker;
    });
  }

  /**
   * A pool, or undefined where it would not help or cannot run: a single core,
   * `ENGRAM_INGEST_THREADS=0`, or running from the TypeScript sources (tests), where there is
   * no compiled worker script.
   */
  static create(settings: PoolSettings): IngestPool | undefined {
    const size = threadCount(process.env.ENGRAM_INGEST_THREADS);
    const script = fileURLToPath(new URL("./ingest-worker.js", import.meta.url));
    if (size < 1 || !existsSync(script)) return undefined;
    return new IngestPool(script, size, settings);
  }

  get size(): number {
    return this.workers.length;
  }

  run(
    text: string,
    firstLine: number,
    source: string,
    receivedAt: string,
  ): Promise<PackedOutcomes> {
    const id = this.nextId++;
    const worker = this.workers[id % this.workers.length] as Worker;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, text, firstLine, source, receivedAt });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * `ENGRAM_INGEST_THREADS` (0 turns the pool off), else one worker per core beside the main
 * thread's, up to 4. None on two cores or fewer: the main thread deduplicates, appends and
 * fsyncs on a core of its own, and measured on two cores, one or two workers made `director
 * ingest` of 100,000 lines slower (1.34-1.44 s against 1.19-1.26 s on one thread).
 */
function threadCount(setting: string | undefined): number {
  if (setting !== undefined && /^\d+$/.test(setting.trim())) return Math.min(16, Number(setting));
  const cores = availableParallelism();
  return cores <= 2 ? 0 : Math.min(4, cores - 1);
}
