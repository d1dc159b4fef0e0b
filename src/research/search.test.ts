import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSpace } from './space.ts';
import { GridSearch, RandomSearch, TpeSearch, simulateSearch, type Search } from './search.ts';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Trials (1-based) until the first point in the top 5% of the valid grid, or trials+1 if never. */
function trialsToTop(
  search: Search,
  f: (p: number) => number,
  valid: number[],
  trials: number,
  batch: number,
  lag: number,
): number {
  const sorted = valid.map(f).sort((a, b) => b - a);
  const threshold = sorted[Math.max(0, Math.ceil(valid.length * 0.05) - 1)]!;
  const order = simulateSearch(search, f, trials, batch, lag);
  const i = order.findIndex((p) => f(p) >= threshold);
  return i < 0 ? trials + 1 : i + 1;
}

// Synthetic objective surfaces over a fast × slow grid like the bench's (fast 5..50 step 5 is 10
// values; slow 20..200 step 10 is 19 values), constraint fast < slow. Each is a deterministic
// function of the grid indices with a seeded ripple, so it is rugged but has a region of good points.
const defaults = { fast: 10, slow: 30, units: 1000 };
const space = buildSpace(defaults, ['fast=5:50:5', 'slow=20:200:10'], ['fast < slow']);
const valid = space.validPoints();
const surfaces: Record<string, (p: number) => number> = {
  // One smooth hill off-centre.
  bowl: (p) => {
    const [i, j] = space.digits(p) as [number, number];
    return -((i - 6.3) ** 2) - 0.4 * (j - 13.2) ** 2;
  },
  // A hill plus a ripple (local optima everywhere).
  rugged: (p) => {
    const [i, j] = space.digits(p) as [number, number];
    return -0.5 * ((i - 2.2) ** 2 + 0.3 * (j - 5.5) ** 2) + 2 * Math.sin(i * 1.7) * Math.cos(j * 1.3);
  },
  // A broad hill under point noise (a deterministic hash of the point): neighbours differ at random.
  noisy: (p) => {
    const [i, j] = space.digits(p) as [number, number];
    const h = Math.sin(p * 12.9898) * 43758.5453;
    return -((i - 3) ** 2) / 9 - (j - 15) ** 2 / 30 + 0.8 * (h - Math.floor(h));
  },
  // A ridge: good along fast ≈ slow / 4 (the kind of relation crossovers show).
  ridge: (p) => {
    const sp = space.params(p);
    return -Math.abs((sp.fast as number) - (sp.slow as number) / 4) - 0.02 * (sp.slow as number);
  },
};

describe('search', () => {
  it('grid visits every valid point once, in order; the constraint removes the others', () => {
    const g = new GridSearch(space);
    const all = simulateSearch(g, () => 0, 10_000, 7, 3);
    expect(all).toEqual(valid);
    // fast 5..50 (10) × slow 20..200 (19) = 190 points; fast < slow removes fast 20..50 with slow ≤ fast:
    // fast=20: slow 20 (1); 25: 20 (1); 30: 20,30 (2); 35: 2; 40: 20,30,40 (3); 45: 3; 50: 20..50 (4): 16 removed.
    expect(valid.length).toBe(190 - 16);
  });

  it('random and tpe: the same seed gives the same trials; no point twice; only valid points', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom('random', 'tpe'),
        (seed, batch, lag, kind) => {
          const make = (): Search =>
            kind === 'random' ? new RandomSearch(space, seed) : new TpeSearch(space, seed);
          const a = simulateSearch(make(), surfaces.rugged!, 60, batch, lag);
          const b = simulateSearch(make(), surfaces.rugged!, 60, batch, lag);
          expect(a).toEqual(b);
          expect(new Set(a).size).toBe(a.length);
          for (const p of a) expect(space.valid(p)).toBe(true);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('tpe runs out cleanly: asking for more than the space holds returns every valid point once', () => {
    const all = simulateSearch(new TpeSearch(space, 7), surfaces.bowl!, 1000, 8, 8);
    expect([...all].sort((a, b) => a - b)).toEqual(valid);
  });

  // The adaptive search must earn its place: over 31 seeds, the median number of trials until a
  // top-5% point is smaller than random search's, on every surface, on the sweep's default
  // schedule (batches of 1, lag 2: each proposal sees every result but the last two).
  // Random search's median is about ln 0.5 / ln(1 − 9/174) ≈ 13 here (9 top points of 174).
  for (const [name, f] of Object.entries(surfaces)) {
    it(`tpe reaches a top-5% point in fewer trials than random (median over 31 seeds): ${name}`, () => {
      const seeds = Array.from({ length: 31 }, (_, i) => 1000 + i * 7919);
      const tpe = seeds.map((s) => trialsToTop(new TpeSearch(space, s), f, valid, 120, 1, 2));
      const rnd = seeds.map((s) => trialsToTop(new RandomSearch(space, s), f, valid, 120, 1, 2));
      console.log(
        `${name}: tpe median ${median(tpe)} [${tpe.join(' ')}], random median ${median(rnd)} [${rnd.join(' ')}]`,
      );
      expect(median(tpe)).toBeLessThan(median(rnd));
    });
  }
});
