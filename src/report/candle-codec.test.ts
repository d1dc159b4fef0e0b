import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCandles, type EncodedSeries } from './candle-codec.ts';

// The page's decoder, loaded from the very file the report inlines.
const decodeCandles = new Function(
  `${readFileSync(join(import.meta.dirname, 'page/common.js'), 'utf8')}; return decodeCandles;`,
)() as (s: EncodedSeries) => {
  t: Float64Array;
  o: Float64Array;
  h: Float64Array;
  l: Float64Array;
  c: Float64Array;
};

describe('candle codec (Node encoder, page decoder)', () => {
  it('round-trips any candle series: times exact, mid prices exact on the half-digit grid', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 7 * 86_400 }),
            o: fc.integer({ min: 1, max: 4_000_000 }),
            h: fc.nat(5000),
            l: fc.nat(5000),
            c: fc.integer({ min: -5000, max: 5000 }),
          }),
          { maxLength: 300 },
        ),
        (precision, rows) => {
          const scale = 2 * 10 ** precision;
          const t: number[] = [],
            o: number[] = [],
            h: number[] = [],
            l: number[] = [],
            c: number[] = [];
          let time = 1_600_000_000;
          for (const r of rows) {
            time += r.gap;
            const oi = r.o,
              ci = Math.max(1, r.o + r.c);
            t.push(time * 1000);
            o.push(oi / scale);
            c.push(ci / scale);
            h.push((Math.max(oi, ci) + r.h) / scale);
            l.push(Math.max(0, Math.min(oi, ci) - r.l) / scale);
          }
          const enc = encodeCandles(
            { instrument: 'EUR_USD', granularity: 'M1', precision },
            t,
            o,
            h,
            l,
            c,
            t.length,
          );
          const d = decodeCandles(JSON.parse(JSON.stringify(enc)));
          expect([...d.t]).toEqual(t.map((x) => x / 1000));
          expect([...d.o]).toEqual(o);
          expect([...d.h]).toEqual(h);
          expect([...d.l]).toEqual(l);
          expect([...d.c]).toEqual(c);
          expect(enc.count).toBe(rows.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a damaged series is an error naming the instrument, not silent garbage', () => {
    const enc = encodeCandles(
      { instrument: 'USD_JPY', granularity: 'H1', precision: 3 },
      [3_600_000, 7_200_000],
      [150, 150.5],
      [151, 151],
      [149, 150],
      [150.5, 150.7],
      2,
    );
    expect(() => decodeCandles({ ...enc, count: 1 })).toThrow(
      /candles of USD_JPY: \d+ bytes left after 1 candles/,
    );
  });
});
