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
 * It can be made to fail (`failNext`), to fail after the write (`failAfterWrite`: the item is
 * stored, the answer is an error), and to lag (`queryLag`: `findByKey` does not see a new item
 * until `catchUp`), to exercise the engine's error handling.
 */
export class MemoryTarget implements SyncTarget {
  readonly name = "memory";
  readonly items = new Map<string, OutgoingItem & { remote_id: string; writes: number }>();
  creates = 0;
  updates = 0;
  down = false;
  /** New items stay out of `findByKey` until `catchUp()`. */
  queryLag = false;
  private readonly hidden = new Set<string>();
  private failures: SyncTargetError[] = [];
  private afterWrite: SyncTargetError[] = [];
  private next = 1;

  failNext(...errors: SyncTargetError[]): void {
    this.failures.push(...errors);
  }

  failAfterWrite(...errors: SyncTargetError[]): void {
    this.afterWrite.push(...errors);
  }

  /** The store's queries catch up with its writes. */
  catchUp(): void {
    this.hidden.clear();
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
    if (this.queryLag) this.hidden.add(item.key);
    const lost = this.afterWrite.shift();
    if (lost) throw lost;
    return id;
  }

  async findByKey(_type: SyncType, key: string): Promise<string | null> {
    if (this.hidden.has(key)) return null;
    return this.items.get(key)?.remote_id ?? null;
  }
}
