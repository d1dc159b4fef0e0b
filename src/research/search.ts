import { Rng } from './rng.ts';
import type { Space } from './space.ts';

/**
 * A search proposes points of a space in batches (ask) and learns their objective values (tell).
 *
 * Determinism whatever the number of workers: the sweep asks for the batch that starts at trial s
 * only once trials 0 … s−lag−1 are all told, in trial order (`toldBefore`), with `batch` and `lag`
 * fixed by the sweep, never by the worker count. So every batch is proposed from the same results,
 * and up to lag + batch trials are ready or running ahead of the results the proposer waits for.
 */
export interface Search {
  readonly name: SearchName;
  /** Up to `n` new points (fewer when the space is exhausted; none at the end). */
  ask(n: number): number[];
  /** The objective value of a point (higher is better); null when the trial failed. */
  tell(point: number, value: number | null): void;
}

export type SearchName = 'grid' | 'random' | 'tpe';
export const SEARCHES: readonly SearchName[] = ['grid', 'random', 'tpe'];

/** Every valid point in grid order (the first --param varies slowest). */
export class GridSearch implements Search {
  readonly name = 'grid' as const;
  #next = 0;
  readonly #points: number[];
  constructor(space: Space) {
    this.#points = space.validPoints();
  }
  get total(): number {
    return this.#points.length;
  }
  ask(n: number): number[] {
    const out = this.#points.slice(this.#next, this.#next + n);
    this.#next += out.length;
    return out;
  }
  tell(): void {}
}

/** Seeded Fisher–Yates order of the valid points: random sampling without replacement. */
export function shuffledPoints(space: Space, rng: Rng): number[] {
  const p = space.validPoints();
  for (let i = p.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = p[i]!;
    p[i] = p[j]!;
    p[j] = t;
  }
  return p;
}

/** Valid points in a seeded random order, each at most once. */
export class RandomSearch implements Search {
  readonly name = 'random' as const;
  #next = 0;
  readonly #points: number[];
  constructor(space: Space, seed: number) {
    this.#points = shuffledPoints(space, new Rng(seed));
  }
  ask(n: number): number[] {
    const out = this.#points.slice(this.#next, this.#next + n);
    this.#next += out.length;
    return out;
  }
  tell(): void {}
}

/**
 * Tree-structured Parzen estimator on a discrete space (Bergstra, Bardenet, Bengio & Kégl 2011,
 * "Algorithms for hyper-parameter optimization"), one independent density per dimension:
 * the told trials are split into the best γ (good) and the rest (bad); each dimension gets a
 * smoothed histogram over its values for each group (a Gaussian kernel over value indices for
 * ordered dimensions, so neighbours of good values gain weight; a flat prior keeps every value
 * possible). A proposal samples candidates from the good densities and keeps the one with the
 * highest l(x)/g(x) that is valid and not yet proposed. The first `startup` points are random.
 * The settings (γ = 25% of the told trials, at most 25; kernel width values/(4√n) indices, at
 * least 0.75; 48 candidates) were chosen on the synthetic surfaces of search.test.ts at lag 2.
 */
export class TpeSearch implements Search {
  readonly name = 'tpe' as const;
  readonly #space: Space;
  readonly #rng: Rng;
  readonly #random: number[];
  #randomNext = 0;
  readonly #proposed = new Set<number>();
  readonly #told: { point: number; value: number }[] = [];
  readonly #valid: number;
  constructor(
    space: Space,
    seed: number,
    readonly options: { startup?: number; candidates?: number } = {},
  ) {
    this.#space = space;
    this.#rng = new Rng(seed);
    this.#random = shuffledPoints(space, new Rng(seed ^ 0x5bd1e995));
    this.#valid = this.#random.length;
  }

  tell(point: number, value: number | null): void {
    // A failed trial counts as the worst outcome: its region is avoided.
    this.#told.push({ point, value: value === null || Number.isNaN(value) ? -Infinity : value });
  }

  ask(n: number): number[] {
    const out: number[] = [];
    const startup = this.options.startup ?? Math.max(4, this.#space.dims.length * 2);
    while (out.length < n && this.#proposed.size < this.#valid) {
      const p =
        this.#told.length < Math.min(startup, 2) || this.#proposed.size < startup
          ? this.#nextRandom()
          : this.#model();
      if (p === undefined) break;
      this.#proposed.add(p);
      out.push(p);
    }
    return out;
  }

  #nextRandom(): number | undefined {
    while (this.#randomNext < this.#random.length) {
      const p = this.#random[this.#randomNext++]!;
      if (!this.#proposed.has(p)) return p;
    }
    return undefined;
  }

  #model(): number | undefined {
    const told = [...this.#told].sort((a, b) => b.value - a.value || a.point - b.point);
    if (told.length < 2) return this.#nextRandom();
    const nGood = Math.max(1, Math.min(25, Math.ceil(0.25 * told.length)));
    const good = told.slice(0, nGood).map((t) => this.#space.digits(t.point));
    const bad = told.slice(nGood).map((t) => this.#space.digits(t.point));
    const dims = this.#space.dims;
    const l = dims.map((d, k) =>
      density(
        d.values.length,
        d.ordered,
        good.map((g) => g[k]!),
      ),
    );
    const g = dims.map((d, k) =>
      density(
        d.values.length,
        d.ordered,
        bad.map((b) => b[k]!),
      ),
    );
    const cum = l.map(cumulative);
    const tries = this.options.candidates ?? 48;
    let best: number | undefined;
    let bestScore = -Infinity;
    for (let c = 0; c < tries * 4 && (c < tries || best === undefined); c++) {
      const digits = cum.map((cu) => sample(cu, this.#rng.next()));
      const p = this.#space.index(digits);
      if (this.#proposed.has(p) || !this.#space.valid(p)) continue;
      let score = 0;
      for (let k = 0; k < dims.length; k++)
        score += Math.log(l[k]![digits[k]!]!) - Math.log(g[k]![digits[k]!]!);
      if (score > bestScore) {
        bestScore = score;
        best = p;
      }
    }
    return best ?? this.#nextRandom();
  }
}

/** A smoothed, normalised histogram over `n` value indices from the observed indices. */
function density(n: number, ordered: boolean, obs: readonly number[]): Float64Array {
  const w = new Float64Array(n);
  // The prior: one observation's worth of weight spread evenly.
  for (let j = 0; j < n; j++) w[j] = 1 / n;
  const bw = Math.max(0.75, n / (4 * Math.max(1, obs.length) ** 0.5));
  for (const o of obs) {
    if (!ordered) {
      w[o]! += 1;
      continue;
    }
    let z = 0;
    const k = new Float64Array(n);
    for (let j = 0; j < n; j++) z += k[j] = Math.exp(-0.5 * ((j - o) / bw) ** 2);
    for (let j = 0; j < n; j++) w[j]! += k[j]! / z;
  }
  let s = 0;
  for (let j = 0; j < n; j++) s += w[j]!;
  for (let j = 0; j < n; j++) w[j]! /= s;
  return w;
}

function cumulative(p: Float64Array): Float64Array {
  const c = new Float64Array(p.length);
  let s = 0;
  for (let j = 0; j < p.length; j++) c[j] = s += p[j]!;
  return c;
}

function sample(cum: Float64Array, u: number): number {
  const x = u * cum[cum.length - 1]!;
  for (let j = 0; j < cum.length; j++) if (x < cum[j]!) return j;
  return cum.length - 1;
}

export function makeSearch(name: SearchName, space: Space, seed: number): Search {
  switch (name) {
    case 'grid':
      return new GridSearch(space);
    case 'random':
      return new RandomSearch(space, seed);
    case 'tpe':
      return new TpeSearch(space, seed);
  }
}

/**
 * The proposal schedule of a sweep, fixed by (`batch`, `lag`) and never by the number of workers:
 * the batch that starts at trial s is asked for once trials 0 … s−lag−1 are told, in trial order,
 * and sees exactly those results. Up to `lag + batch` trials can then run while the next batch is
 * already proposed: that many workers never wait for the proposer. Returns the number of leading
 * trials that must be told before the batch starting at trial `s` is asked for.
 */
export const toldBefore = (s: number, lag: number): number => Math.max(0, s - lag);

/**
 * Drives a search as a sweep does, without workers (`toldBefore` schedule). Returns the points in
 * trial order. `evaluate` is the objective. Used by tests and the bench to measure a search.
 */
export function simulateSearch(
  search: Search,
  evaluate: (point: number) => number | null,
  trials: number,
  batch: number,
  lag = batch,
): number[] {
  const points: number[] = [];
  let told = 0;
  while (points.length < trials) {
    const need = toldBefore(points.length, lag);
    for (; told < need; told++) search.tell(points[told]!, evaluate(points[told]!));
    const b = search.ask(Math.min(batch, trials - points.length));
    if (b.length === 0) break;
    points.push(...b);
  }
  return points;
}
