// A small seeded PRNG (mulberry32): every random choice of a chaos run comes from one of these, so a
// seed replays the same schedule and the same operation mix.

/** A seeded random source. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** One element of a non-empty array. */
  pick<T>(xs: readonly T[]): T;
  /** A shuffled copy. */
  shuffle<T>(xs: readonly T[]): T[];
  /** An independent stream derived from this seed and a label. */
  fork(label: string | number): Rng;
}

/** A PRNG from a 32-bit seed. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const self: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    shuffle: (xs) => {
      const out = [...xs];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
    fork: (label) => {
      let h = seed >>> 0;
      for (const ch of String(label)) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
      return rng(h);
    },
  };
  return self;
}
