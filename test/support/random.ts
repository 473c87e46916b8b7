/**
 * The one seeded random generator of the tests and the bench: pure-rand's xoroshiro128+,
 * so the same seed gives the same data on every machine and every run.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

export class Rng {
  private readonly gen: ReturnType<typeof xoroshiro128plus>;

  constructor(readonly seed: number) {
    this.gen = xoroshiro128plus(seed);
  }

  /** A float in [0, 1). */
  next(): number {
    return uniformFloat64(this.gen);
  }

  float(): number {
    return this.next();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return uniformInt(this.gen, min, max);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }

  /** Skewed pick: low indices are more frequent (a few hot components, a long tail). */
  pickSkewed<T>(items: readonly T[]): T {
    if (this.next() < 0.7) return this.pick(items);
    const u = this.next();
    return items[Math.floor(u * u * items.length)] as T;
  }

  /** Between `min` and `max` distinct items, skewed to the first ones. */
  some<T>(items: readonly T[], min: number, max: number): T[] {
    const n = this.int(min, max);
    const out = new Set<T>();
    for (let i = 0; i < n * 3 && out.size < n; i++) out.add(this.pickSkewed(items));
    return [...out];
  }

  /** `length` lowercase hex digits. */
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.int(0, 0xffffffff).toString(16).padStart(8, "0");
    return out.slice(0, length);
  }

  /** `length` characters drawn from `alphabet`. */
  chars(alphabet: string, length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }
}

/** A seeded source of floats in [0, 1), for code that wants a plain function. */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}
