import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { MarketCalendar, SHIPPED_CALENDAR } from '../../domain/market-hours.ts';
import { aggregateBatches } from './aggregate.ts';
import { syntheticBatches } from './synthetic.ts';

const all = (it: Iterable<readonly Candle[]>): Candle[] => [...it].flat();
const week = (from: number, days = 10, seed = 7, instrument = 'EUR_USD'): Candle[] =>
  all(syntheticBatches({ instrument, granularity: 'M1', from, to: from + days * 86_400_000, seed }));

describe('synthetic generator (documented as synthetic data)', () => {
  it('is deterministic: the same seed gives identical candles, another seed different ones', () => {
    const from = Date.UTC(2024, 2, 4);
    expect(JSON.stringify(week(from, 3))).toBe(JSON.stringify(week(from, 3)));
    expect(JSON.stringify(week(from, 3, 8))).not.toBe(JSON.stringify(week(from, 3)));
  });

  it('has no candle between Friday 17:00 and Sunday 17:00 New York, across DST changes (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2023, 0, 1), max: Date.UTC(2025, 11, 1) }),
        fc.integer({ min: 1, max: 1000 }),
        (from, seed) => {
          const candles = week(Math.floor(from / 60_000) * 60_000, 9, seed);
          expect(candles.length).toBeGreaterThan(0);
          for (const c of candles) {
            const ny = DateTime.fromMillis(c.time, { zone: 'America/New_York' });
            const closed =
              ny.weekday === 6 || (ny.weekday === 5 && ny.hour >= 17) || (ny.weekday === 7 && ny.hour < 17);
            expect(closed).toBe(false);
          }
        },
      ),
      { numRuns: 20 },
    );
  });

  it('has no candle in the market calendar closures: Christmas, New Year, the early closes (property)', () => {
    const cal = MarketCalendar.load([SHIPPED_CALENDAR]);
    fc.assert(
      fc.property(
        fc.integer({ min: 2012, max: 2030 }),
        fc.constantFrom([11, 20], [11, 27], [11, 30]),
        fc.integer({ min: 0, max: 3 * 1440 }),
        fc.integer({ min: 1, max: 1000 }),
        (y, [m, d], minutes, seed) => {
          const from = Date.UTC(y, m!, d!) + minutes * 60_000;
          const candles = week(from, 6, seed);
          for (const c of candles)
            expect(cal.closureAt(c.time), new Date(c.time).toISOString()).toBeUndefined();
        },
      ),
      { numRuns: 20 },
    );
    // Christmas 2024 (a Wednesday): the week of 22 December has its 5 days less the 1,440 minutes of the 25th.
    const xmas = week(Date.UTC(2024, 11, 22, 22), 5, 42);
    expect(xmas).toHaveLength(4 * 1440);
    expect(xmas.some((c) => c.time === Date.UTC(2024, 11, 24, 21, 59))).toBe(true);
    expect(xmas.some((c) => c.time === Date.UTC(2024, 11, 25, 22))).toBe(true);
    // 24 December 2013 closed early, at 14:00 New York (19:00 UTC).
    const eve = week(Date.UTC(2013, 11, 24), 1, 42);
    expect(eve[eve.length - 1]!.time).toBe(Date.UTC(2013, 11, 24, 18, 59));
  });

  it('gives consistent two-sided candles with a positive spread, snapped to the instrument decimals', () => {
    for (const instrument of ['EUR_USD', 'USD_JPY']) {
      const decimals = instrument === 'USD_JPY' ? 3 : 5;
      for (const c of week(Date.UTC(2024, 5, 2), 5, 3, instrument)) {
        expect(c.bl).toBeLessThanOrEqual(Math.min(c.bo, c.bc));
        expect(c.bh).toBeGreaterThanOrEqual(Math.max(c.bo, c.bc));
        expect(c.al).toBeLessThanOrEqual(Math.min(c.ao, c.ac));
        expect(c.ah).toBeGreaterThanOrEqual(Math.max(c.ao, c.ac));
        expect(c.ac).toBeGreaterThan(c.bc);
        expect(Number(c.bc.toFixed(decimals))).toBe(c.bc);
        expect(c.at - c.time).toBe(60_000);
      }
    }
  });

  it('aggregates to H1 with v20 semantics: first open, max high, min low, last close, summed volume (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (seed) => {
        const m1 = week(Date.UTC(2024, 0, 8), 2, seed);
        const h1 = all(aggregateBatches([m1], 'H1'));
        for (const h of h1) {
          const inside = m1.filter((c) => c.time >= h.time && c.time < h.at);
          expect(inside.length).toBeGreaterThan(0);
          expect(h.time % 3_600_000).toBe(0);
          expect(h.bo).toBe(inside[0]!.bo);
          expect(h.bc).toBe(inside[inside.length - 1]!.bc);
          expect(h.bh).toBe(Math.max(...inside.map((c) => c.bh)));
          expect(h.al).toBe(Math.min(...inside.map((c) => c.al)));
          expect(h.volume).toBe(inside.reduce((s, c) => s + c.volume, 0));
        }
      }),
      { numRuns: 10 },
    );
  });

  it('aggregates D candles at 17:00 New York', () => {
    const d = all(aggregateBatches([week(Date.UTC(2024, 0, 8), 4)], 'D'));
    for (const c of d) expect(DateTime.fromMillis(c.time, { zone: 'America/New_York' }).hour).toBe(17);
  });
});
