import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/candle.ts';
import { CandleRecorder } from './candle-recorder.ts';

/** The page's own decoder (page/common.js), run here on what the recorder encodes. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const decode = new Function(
  `${readFileSync(join(import.meta.dirname, 'page/common.js'), 'utf8')}; return decodeCandles;`,
)() as (s: unknown) => {
  t: Float64Array;
  o: Float64Array;
  h: Float64Array;
  l: Float64Array;
  c: Float64Array;
};
globalThis.atob ??= (s: string) => Buffer.from(s, 'base64').toString('latin1');

const MIN = 60_000;
/** M1 candles from a walk, with gaps (weekends, holes), bid below ask by 2 tenths of a pip; `next()` continues it. */
function walk(seed: number, gapEvery: number): (n: number) => Candle[] {
  let t = Date.UTC(2020, 0, 6);
  let mid = 1.1;
  let r = seed;
  let i = 0;
  const rnd = (): number => (r = (r * 1103515245 + 12345) % 2147483648) / 2147483648;
  return (n) => {
    const out: Candle[] = [];
    for (let k = 0; k < n; k++, i++) {
      if (i > 0 && i % gapEvery === 0) t += 2 * 86_400_000;
      const o = mid,
        c = Math.round((mid + (rnd() - 0.5) * 0.001) * 1e5) / 1e5;
      const h = Math.max(o, c) + Math.round(rnd() * 20) / 1e5,
        l = Math.min(o, c) - Math.round(rnd() * 20) / 1e5;
      const s = 0.00001;
      out.push({
        instrument: 'EUR_USD',
        granularity: 'M1',
        time: t,
        at: t + MIN,
        complete: true,
        volume: 1,
        bo: o - s,
        bh: h - s,
        bl: l - s,
        bc: c - s,
        ao: o + s,
        ah: h + s,
        al: l + s,
        ac: c + s,
      } as unknown as Candle);
      mid = c;
      t += MIN;
    }
    return out;
  };
}
const candles = (n: number, seed: number, gapEvery: number): Candle[] => walk(seed, gapEvery)(n);

describe('CandleRecorder: bounded memory, whatever the run length', () => {
  it('never keeps more than its cap of candles a series; below the cap every candle is kept as recorded, above it the bars are the exact OHLC of the candles they hold', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30_000 }),
        fc.integer({ min: 50, max: 3000 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 100, max: 5000 }),
        (n, cap, seed, gapEvery) => {
          const rec = new CandleRecorder(cap);
          const s = rec.series('EUR_USD', 'M1', 5, MIN);
          const xs = candles(n, seed, gapEvery);
          const days = new Set(xs.map((c) => Math.floor(c.time / 86_400_000))).size;
          const weeks = new Set(xs.map((c) => Math.floor(c.time / 604_800_000))).size;
          let peak = 0;
          for (const c of xs) {
            s.add(c);
            peak = Math.max(peak, rec.retained());
          }
          // Five columns of at most `cap` numbers (weekly bars, the last level, are not capped: their
          // columns hold at most twice the weeks, 64 at least), and the benchmark's two numbers a day.
          expect(peak).toBeLessThanOrEqual(5 * Math.max(cap, 64, 2 * weeks) + 2 * days);
          const doc = rec.encode();
          const enc = doc.series[0]!;
          expect(enc.count).toBeLessThanOrEqual(enc.granularity === 'W' ? Math.max(cap, weeks) : cap);
          const d = decode(enc);
          const mid = (a: number, b: number): number => Math.round(((a + b) / 2) * 2e5) / 2e5;
          if (n <= cap) {
            expect(enc.granularity).toBe('M1');
            expect(enc.count).toBe(n);
            expect(Array.from(d.t)).toEqual(xs.map((c) => c.time / 1000));
            expect(Array.from(d.c)).toEqual(xs.map((c) => mid(c.bc, c.ac)));
          } else {
            const step = { M5: 300, M15: 900, H1: 3600, H4: 14_400, D: 86_400, W: 604_800 }[
              enc.granularity as 'M5'
            ]!;
            expect(step).toBeGreaterThan(0);
            expect((enc as { recorded?: string }).recorded).toBe('M1');
            // Independent bucketing of the raw candles.
            const buckets = new Map<number, Candle[]>();
            for (const c of xs) {
              const k = Math.floor(c.time / 1000 / step) * step;
              buckets.set(k, [...(buckets.get(k) ?? []), c]);
            }
            expect(Array.from(d.t)).toEqual([...buckets.keys()]);
            let i = 0;
            for (const cs of buckets.values()) {
              expect(d.o[i]).toBe(mid(cs[0]!.bo, cs[0]!.ao));
              expect(d.c[i]).toBe(mid(cs.at(-1)!.bc, cs.at(-1)!.ac));
              expect(d.h[i]).toBe(Math.max(...cs.map((c) => mid(c.bh, c.ah))));
              expect(d.l[i]).toBe(Math.min(...cs.map((c) => mid(c.bl, c.al))));
              i++;
            }
            // The finest granularity that fits: the next finer one would not.
            const finer = [60, 300, 900, 3600, 14_400, 86_400, 604_800].filter((g) => g < step).at(-1)!;
            expect(new Set(xs.map((c) => Math.floor(c.time / 1000 / finer))).size).toBeGreaterThan(cap);
          }
          // Buy and hold: bought at the first ask, one mark a UTC day at its last bid.
          const b = doc.benchmarks![0]!;
          expect(b.ask).toBe(xs[0]!.ao);
          expect(b.bid.at(-1)).toBe(xs.at(-1)!.bc);
          expect(b.t.length).toBe(new Set(xs.map((c) => Math.floor(c.time / 86_400_000))).size);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("a page's candles are bounded: 4M M1 candles encode no larger than 400k", () => {
    const size = (n: number): { bytes: number; retained: number; count: number; gran: string } => {
      const rec = new CandleRecorder();
      const s = rec.series('EUR_USD', 'M1', 5, MIN);
      let peak = 0;
      // Generated in chunks: the test holds no more than the recorder does.
      const next = walk(7, 7200);
      let days = 0;
      for (let k = 0; k < n; k += 100_000) {
        const xs = next(Math.min(100_000, n - k));
        for (const c of xs) s.add(c);
        days = Math.floor(xs.at(-1)!.time / 86_400_000) - Math.floor(Date.UTC(2020, 0, 6) / 86_400_000) + 1;
        peak = Math.max(peak, rec.retained() - 2 * days);
      }
      const e = rec.encode().series[0]!;
      return { bytes: e.data.length, retained: peak, count: e.count, gran: e.granularity };
    };
    const year = size(400_000),
      four = size(4_000_000);
    expect(year.gran).toBe('M1');
    expect(four.gran).not.toBe('M1');
    expect(four.count).toBeLessThanOrEqual(400_000);
    expect(four.bytes).toBeLessThanOrEqual(year.bytes);
    // Numbers held at the peak besides the benchmark's mark a day: 5 columns of at most 400k.
    expect(year.retained).toBeLessThanOrEqual(5 * 400_000);
    expect(four.retained).toBeLessThanOrEqual(5 * 400_000);
  }, 60_000);
});
