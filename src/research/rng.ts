/**
 * A small seeded random number generator (SplitMix32 over a 32-bit state): the same seed gives the
 * same sequence on every machine and Node version. Used for random search, the adaptive search's
 * sampling and nothing else (trials themselves are deterministic backtests).
 */
export class Rng {
  #s: number;
  constructor(seed: number) {
    // Any finite number is a seed; fractions and large values are folded into 32 bits.
    this.#s = (Math.floor(Math.abs(seed)) ^ 0x9e3779b9) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#s = (this.#s + 0x9e3779b9) >>> 0;
    let z = this.#s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}
