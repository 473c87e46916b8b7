import type { OutgoingItem } from "../../core/sync/outgoing.js";
import { SYNC_TYPES, type SyncType } from "../../core/sync/policy.js";
import {
  type SchemaReport,
  type SyncTarget,
  SyncTargetError,
  type TargetHealth,
} from "./target.js";

/**
 * An in-memory store behind the target interface: for tests of the engine and for dry runs.
 * It can be made to fail (`failNext`) to exercise the engine's error handling.
 */
export class MemoryTarget implements SyncTarget {
  readonly name = "memory";
  readonly items = new Map<string, OutgoingItem & { remote_id: string; writes: number }>();
  creates = 0;
  updates = 0;
  down = false;
  private failures: SyncTargetError[] = [];
  private next = 1;

  failNext(...errors: SyncTargetError[]): void {
    this.failures.push(...errors);
  }

  async health(): Promise<TargetHealth> {
    const schema: TargetHealth["schema"] = {};
    for (const type of SYNC_TYPES) schema[type] = "ok";
    return {
      healthy: !this.down,
      error: this.down ? "unavailable" : null,
      message: this.down ? "memory target is down" : null,
      latency_ms: 0,
      rate_limit: null,
      schema,
    };
  }

  async ensureSchema(): Promise<SchemaReport> {
    return { created: [], validated: [...SYNC_TYPES], ids: {} };
  }

  async upsert(item: OutgoingItem, remoteId: string | null): Promise<string> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    if (this.down) throw new SyncTargetError("memory target is down", "unavailable");
    const existing = remoteId === null ? undefined : this.items.get(item.key);
    if (existing !== undefined) {
      this.updates++;
      this.items.set(item.key, {
        ...item,
        remote_id: existing.remote_id,
        writes: existing.writes + 1,
      });
      return existing.remote_id;
    }
    if (this.items.has(item.key)) {
      // A create for a key the store already holds: exactly the double the engine must avoid.
      throw new Error(`memory target: ${item.key} created twice`);
    }
    const id = `mem-${this.next++}`;
    this.creates++;
    this.items.set(item.key, { ...item, remote_id: id, writes: 1 });
    return id;
  }

  async findByKey(_type: SyncType, key: string): Promise<string | null> {
    return this.items.get(key)?.remote_id ?? null;
  }
}
