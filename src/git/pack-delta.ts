/**
 * Git's delta format (a pack's OFS_DELTA entries): the target as copies of ranges of a base
 * object and inserted bytes. Used for the files every version of a run rewrites with a few
 * changes (memory/catalog.json lists every engram and changes by a few lines a version):
 * compressing a delta instead of the whole file is what makes a version cheap to snapshot.
 */

/** Matches shorter than this are inserted, not copied: a copy costs up to eight bytes. */
const MIN_MATCH = 32;
/** Searches for a match in the base, each linear in its size: bounds the time on unlike input. */
const PROBES = 48;
const COMPARE_CHUNK = 4096;
/** How far from where it would sit a window is looked for, and how many of its occurrences. */
const SHIFT = 4096;
const NEAR_TRIES = 16;

type Op = { copy: number; length: number } | { insert: number; end: number };

/** Length of the common prefix of `a[aStart, aEnd)` and `b[bStart, bEnd)`. */
function prefixLength(
  a: Buffer,
  aStart: number,
  aEnd: number,
  b: Buffer,
  bStart: number,
  bEnd: number,
): number {
  const max = Math.min(aEnd - aStart, bEnd - bStart);
  let n = 0;
  // Whole chunks by memcmp, then byte by byte inside the first chunk that differs.
  while (
    n + COMPARE_CHUNK <= max &&
    a.compare(b, bStart + n, bStart + n + COMPARE_CHUNK, aStart + n, aStart + n + COMPARE_CHUNK) ===
      0
  ) {
    n += COMPARE_CHUNK;
  }
  while (n < max && a[aStart + n] === b[bStart + n]) n++;
  return n;
}

/** Length of the common suffix of `a[aStart, aEnd)` and `b[bStart, bEnd)`. */
function suffixLength(
  a: Buffer,
  aStart: number,
  aEnd: number,
  b: Buffer,
  bStart: number,
  bEnd: number,
): number {
  const max = Math.min(aEnd - aStart, bEnd - bStart);
  let n = 0;
  while (
    n + COMPARE_CHUNK <= max &&
    a.compare(b, bEnd - n - COMPARE_CHUNK, bEnd - n, aEnd - n - COMPARE_CHUNK, aEnd - n) === 0
  ) {
    n += COMPARE_CHUNK;
  }
  while (n < max && a[aEnd - n - 1] === b[bEnd - n - 1]) n++;
  return n;
}

/**
 * The ops that build `target[tStart, tEnd)` from `base[bStart, bEnd)`: the common prefix and
 * suffix are copied; in between, a window of the target is looked up in the base and the
 * match, grown both ways, splits the rest in two, each covered the same way.
 */
function cover(
  base: Buffer,
  target: Buffer,
  range: { bStart: number; bEnd: number; tStart: number; tEnd: number },
  ops: Op[],
  probes: { left: number },
): void {
  const { bStart, bEnd, tStart, tEnd } = range;
  if (tStart >= tEnd) return;
  let prefix = prefixLength(base, bStart, bEnd, target, tStart, tEnd);
  if (prefix < MIN_MATCH) prefix = 0;
  let suffix = suffixLength(base, bStart + prefix, bEnd, target, tStart + prefix, tEnd);
  if (suffix < MIN_MATCH) suffix = 0;
  if (prefix > 0) ops.push({ copy: bStart, length: prefix });
  const [b0, b1, t0, t1] = [bStart + prefix, bEnd - suffix, tStart + prefix, tEnd - suffix];
  const found =
    t1 - t0 >= 2 * MIN_MATCH && b1 - b0 >= MIN_MATCH
      ? longestMatch(base, target, { bStart: b0, bEnd: b1, tStart: t0, tEnd: t1 }, probes)
      : undefined;
  if (found === undefined) {
    if (t1 > t0) ops.push({ insert: t0, end: t1 });
  } else {
    cover(base, target, { bStart: b0, bEnd: found.b, tStart: t0, tEnd: found.t }, ops, probes);
    ops.push({ copy: found.b, length: found.length });
    const after = { bStart: found.b + found.length, tStart: found.t + found.length };
    cover(base, target, { ...after, bEnd: b1, tEnd: t1 }, ops, probes);
  }
  if (suffix > 0) ops.push({ copy: bEnd - suffix, length: suffix });
}

/**
 * The longest match found for a window of the target (its middle, else its quarters), grown
 * both ways. A window of repetitive text (JSON keys) also occurs where it does not belong,
 * so its occurrences near where it would sit if the change only shifted it (from either end)
 * are tried first, and only failing those its first occurrence in the base.
 */
function longestMatch(
  base: Buffer,
  target: Buffer,
  range: { bStart: number; bEnd: number; tStart: number; tEnd: number },
  probes: { left: number },
): { b: number; t: number; length: number } | undefined {
  const { bStart: b0, bEnd: b1, tStart: t0, tEnd: t1 } = range;
  const span = t1 - t0 - MIN_MATCH;
  for (const at of [span >> 1, span >> 2, span - (span >> 2)]) {
    if (probes.left <= 0) return undefined;
    probes.left--;
    const t = t0 + at;
    const window = target.subarray(t, t + MIN_MATCH);
    let best: { b: number; t: number; length: number } | undefined;
    const consider = (b: number) => {
      const back = suffixLength(base, b0, b, target, t0, t);
      const forward = prefixLength(base, b + MIN_MATCH, b1, target, t + MIN_MATCH, t1);
      const length = back + MIN_MATCH + forward;
      if (best === undefined || length > best.length) best = { b: b - back, t: t - back, length };
    };
    for (const expected of [b0 + (t - t0), b1 - (t1 - t)]) {
      // Nearest first, both ways, and only near there: a search through the whole base
      // would cost as much as the delta.
      const from = Math.max(b0, expected - SHIFT);
      const near = base.subarray(from, Math.max(from, Math.min(b1, expected + SHIFT + MIN_MATCH)));
      // A negative offset would count from the end.
      const mid = Math.min(Math.max(expected - from, 0), near.length);
      let ahead = near.indexOf(window, mid);
      let behind = mid > 0 ? near.lastIndexOf(window, mid - 1) : -1;
      for (let n = 0; n < NEAR_TRIES && (ahead >= 0 || behind >= 0); n++) {
        if (ahead >= 0 && (behind < 0 || ahead - mid <= mid - behind)) {
          consider(from + ahead);
          ahead = near.indexOf(window, ahead + 1);
        } else {
          consider(from + behind);
          behind = behind > 0 ? near.lastIndexOf(window, behind - 1) : -1;
        }
      }
    }
    if (best === undefined) {
      const first = base.subarray(b0, b1).indexOf(window);
      if (first >= 0) consider(b0 + first);
    }
    if (best !== undefined) return best;
  }
  return undefined;
}

function sizeBytes(n: number, out: number[]): void {
  let rest = n;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

function copyOp(offset: number, length: number, out: number[]): void {
  const at = out.length;
  out.push(0x80);
  let command = 0x80;
  for (let i = 0; i < 4; i++) {
    const byte = Math.floor(offset / 2 ** (8 * i)) & 0xff;
    if (byte !== 0) {
      command |= 1 << i;
      out.push(byte);
    }
  }
  // A length is never 0 here: git reads a copy without length bytes as 0x10000.
  for (let i = 0; i < 3; i++) {
    const byte = (length >>> (8 * i)) & 0xff;
    if (byte !== 0) {
      command |= 0x10 << i;
      out.push(byte);
    }
  }
  out[at] = command;
}

/**
 * A delta that makes `target` from `base`, or undefined when it would not be much smaller
 * than `target` itself (then the object is stored whole).
 */
export function deltaOf(base: Buffer, target: Buffer): Buffer | undefined {
  const ops: Op[] = [];
  const range = { bStart: 0, bEnd: base.length, tStart: 0, tEnd: target.length };
  cover(base, target, range, ops, { left: PROBES });
  const head: number[] = [];
  sizeBytes(base.length, head);
  sizeBytes(target.length, head);
  const parts: Buffer[] = [Buffer.from(head)];
  let size = head.length;
  const limit = target.length / 2;
  for (const op of ops) {
    const bytes: number[] = [];
    if ("copy" in op) {
      // A copy holds at most 0xffffff bytes.
      for (let done = 0; done < op.length; done += 0xffffff) {
        copyOp(op.copy + done, Math.min(0xffffff, op.length - done), bytes);
      }
      parts.push(Buffer.from(bytes));
    } else {
      // An insert holds at most 127 bytes, after its length.
      for (let at = op.insert; at < op.end; at += 127) {
        const end = Math.min(op.end, at + 127);
        parts.push(Buffer.from([end - at]), target.subarray(at, end));
        size += 1;
      }
      size += op.end - op.insert;
    }
    size += bytes.length;
    if (size > limit) return undefined;
  }
  return size > limit ? undefined : Buffer.concat(parts, size);
}
