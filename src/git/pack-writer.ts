/**
 * Many new objects written as one git pack (`objects/pack/pack-<sum>.pack` and its version 2
 * `.idx`) instead of a loose file each: a cycle that makes a hundred versions makes some
 * two thousand objects, and creating a file per object costs more than hashing and
 * compressing them all. Git does the same when it receives more than a hundred objects
 * (`transfer.unpackLimit`). Objects are stored whole, except large ones added as another
 * version of an earlier object (see `add`), stored as its delta; `git gc` repacks them.
 */
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { deltaOf } from "./pack-delta.js";

export type PackedType = "commit" | "tree" | "blob";

const TYPE_CODE: Record<PackedType, number> = { commit: 1, tree: 2, blob: 3 };

const OFS_DELTA = 6;

/**
 * Objects this large or larger, added like an earlier one (the same file of another version),
 * are stored as a delta of it when that is much smaller: below, compressing them whole is cheap.
 */
const DELTA_MIN_BYTES = 16 * 1024;

interface Entry {
  oid: string;
  type: PackedType;
  /** The object's bytes, until they are compressed into `packed` (see `PackBuilder`). */
  body?: Buffer;
  /** The entry's bytes in the pack, stored whole, once it is sure to be packed. */
  packed?: Buffer;
  /** It may be another's delta base, or its delta: its bytes stay whole until `write`. */
  deltaPart?: boolean;
  /** The first object added like this one, stored whole: deltas are never of deltas. */
  base?: Entry;
}

/** An object the batch stores loose: its type and bytes. */
export interface LooseObject {
  oid: string;
  type: PackedType;
  body: Buffer;
}

interface Placed {
  oid: string;
  offset: number;
  crc: number;
}

/**
 * The objects of one pack, gathered in memory until `write`. Once the batch holds `packFrom`
 * objects it is sure to be written as a pack: from then on each object is kept compressed,
 * as the pack stores it, not whole (a version snapshot of a large memory holds some 20 MB
 * of text; only possible deltas and their bases stay whole until `write`).
 */
export class PackBuilder {
  private readonly entries: Entry[] = [];
  private readonly held = new Set<string>();
  private readonly firstLike = new Map<string, Entry>();
  private candidates = 0;

  constructor(private readonly packFrom = Number.POSITIVE_INFINITY) {}

  get size(): number {
    return this.entries.length;
  }

  /** The objects gathered, in the order they were added, whole: only before `packFrom`. */
  get objects(): readonly LooseObject[] {
    return this.entries.map((e) => {
      if (e.body === undefined) throw new Error("a packed batch has no loose objects");
      return { oid: e.oid, type: e.type, body: e.body };
    });
  }

  has(oid: string): boolean {
    return this.held.has(oid);
  }

  /** Objects that may be stored as deltas (loose objects cannot be). */
  get deltaCandidates(): number {
    return this.candidates;
  }

  /**
   * Adds an object (its id computed by the caller) unless the pack holds it already. `like`
   * names what it is a version of (a path): it may be stored as a delta of the first object
   * added like it.
   */
  add(oid: string, type: PackedType, body: Buffer, like?: string): void {
    if (this.held.has(oid)) return;
    const entry: Entry = { oid, type, body };
    if (like !== undefined && body.length >= DELTA_MIN_BYTES) {
      entry.deltaPart = true;
      const first = this.firstLike.get(like);
      if (first === undefined) this.firstLike.set(like, entry);
      else if (first.type === type) {
        entry.base = first;
        this.candidates++;
      }
    }
    this.entries.push(entry);
    this.held.add(oid);
    if (this.entries.length === this.packFrom) for (const e of this.entries) compress(e);
    else if (this.entries.length > this.packFrom) compress(entry);
  }

  /**
   * Writes the pack, then its index, into `<gitdir>/objects/pack` (each a temp file, fsynced,
   * then renamed; git sees a pack only once its index is there). Returns the pack's name, or
   * undefined when there was nothing to write.
   */
  write(gitdir: string): string | undefined {
    if (this.entries.length === 0) return undefined;
    const header = Buffer.alloc(12);
    header.write("PACK", 0, "latin1");
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(this.entries.length, 8);
    const sum = createHash("sha1").update(header);
    const dir = join(gitdir, "objects", "pack");
    mkdirSync(dir, { recursive: true });
    // Written as it is made: the pack's name is its checksum, known at the end.
    // Git's own names for a pack being written: `git gc` removes those a crash left behind.
    const temp = join(dir, `tmp_pack_${process.pid}`);
    const fd = openSync(temp, "w", 0o444);
    const placed: Placed[] = [];
    let checksum: Buffer;
    try {
      writeSync(fd, header);
      let length = header.length;
      const offsets = new Map<Entry, number>();
      for (const entry of this.entries) {
        const data = entry.packed ?? packedEntry(entry, length, offsets);
        // The index's offsets are 31 bits here: a pack of one cycle's versions stays far below.
        if (length + data.length >= 2 ** 31) throw new RangeError("pack over 2 GiB");
        offsets.set(entry, length);
        placed.push({ oid: entry.oid, offset: length, crc: crc32(data) });
        sum.update(data);
        writeSync(fd, data);
        length += data.length;
      }
      checksum = sum.digest();
      writeSync(fd, checksum);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const name = `pack-${checksum.toString("hex")}`;
    renameSync(temp, join(dir, `${name}.pack`));
    writeDurably(join(dir, `${name}.idx`), "tmp_idx_", [indexOf(placed, checksum)]);
    const folder = openSync(dir, "r");
    try {
      fsyncSync(folder);
    } finally {
      closeSync(folder);
    }
    return name;
  }
}

/** Keeps an entry as the pack stores it whole, unless it may take part in a delta. */
function compress(entry: Entry): void {
  if (entry.deltaPart || entry.body === undefined) return;
  entry.packed = wholeEntry(entry.type, entry.body);
  entry.body = undefined;
}

/** An entry's bytes in the pack at `at`: a delta of its base (written before it), or whole. */
function packedEntry(entry: Entry, at: number, offsets: ReadonlyMap<Entry, number>): Buffer {
  const body = entry.body as Buffer;
  const baseAt = entry.base === undefined ? undefined : offsets.get(entry.base);
  const delta =
    baseAt === undefined ? undefined : deltaOf((entry.base as Entry).body as Buffer, body);
  if (baseAt !== undefined && delta !== undefined) {
    return Buffer.concat([
      objectHeader(OFS_DELTA, delta.length),
      baseDistance(at - baseAt),
      deflateSync(delta, { level: 1 }),
    ]);
  }
  return wholeEntry(entry.type, body);
}

function wholeEntry(type: PackedType, body: Buffer): Buffer {
  return Buffer.concat([
    objectHeader(TYPE_CODE[type], body.length),
    deflateSync(body, { level: 1 }),
  ]);
}

/**
 * How far back an OFS_DELTA's base starts: seven bits a byte, most significant first, each
 * continued group less one (git's encoding, so that every distance has a single form).
 */
function baseDistance(distance: number): Buffer {
  const bytes = [distance & 0x7f];
  let rest = Math.floor(distance / 128);
  while (rest > 0) {
    rest -= 1;
    bytes.unshift(0x80 | (rest & 0x7f));
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

/** A pack entry's header: the type and the inflated size, seven bits a byte after the first four. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** The version 2 index: fan-out table, sorted ids, CRC-32s, offsets, both checksums. */
function indexOf(entries: readonly Placed[], packChecksum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const out = Buffer.alloc(8 + 256 * 4 + n * 28 + 20);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Uint32Array(256);
  for (const e of sorted) {
    const first = Number.parseInt(e.oid.slice(0, 2), 16);
    fanout[first] = (fanout[first] as number) + 1;
  }
  let at = 8;
  let total = 0;
  for (const count of fanout) {
    total += count;
    out.writeUInt32BE(total, at);
    at += 4;
  }
  for (const e of sorted) at += out.write(e.oid, at, "hex");
  for (const e of sorted) at = out.writeUInt32BE(e.crc, at);
  for (const e of sorted) at = out.writeUInt32BE(e.offset, at);
  packChecksum.copy(out, at);
  return Buffer.concat([out, createHash("sha1").update(out).digest()]);
}

function writeDurably(path: string, prefix: string, parts: readonly Buffer[]): void {
  // Git's own names for a file being written: `git gc` removes those a crash left behind.
  const temp = join(path, "..", `${prefix}${process.pid}`);
  const fd = openSync(temp, "w", 0o444);
  try {
    for (const part of parts) writeSync(fd, part);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (the zlib polynomial), as the index records it for each packed entry. */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) {
    c = (CRC_TABLE[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}
