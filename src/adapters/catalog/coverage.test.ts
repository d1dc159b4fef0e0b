import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { CoverageTracker, openMarketMs } from './coverage.ts';

const H = 3_600_000;
const DAY = 24 * H;

function candle(time: number): Candle {
  return {
    kind: 'candle',
    instrument: 'EUR_USD',
    granularity: 'H1',
    time,
    at: time + H,
    bo: 1,
    bh: 1,
    bl: 1,
    bc: 1,
    ao: 1,
    ah: 1,
    al: 1,
    ac: 1,
    volume: 0,
    complete: true,
  };
}

const EARLY = ['2012-12-24', '2012-12-31', '2013-12-24', '2013-12-31', '2014-12-24', '2014-12-31'];
EARLY.push('2015-12-24', '2015-12-31', '2016-12-30');

/** The luxon computation openMarketMs had before it used the cached New York offsets: the reference. */
function openMarketMsLuxon(a: number, b: number): number {
  if (b <= a) return 0;
  let day = DateTime.fromMillis(a, { zone: 'America/New_York' }).set({
    hour: 17,
    minute: 0,
    second: 0,
    millisecond: 0,
  });
  if (day.toMillis() > a) day = day.minus({ days: 1 });
  let open = 0;
  while (day.toMillis() < b) {
    const next = day.plus({ days: 1 });
    const wd = next.weekday;
    const closed =
      wd === 6 ||
      wd === 7 ||
      (next.month === 12 && (next.day === 25 || (next.day === 26 && wd === 1))) ||
      (next.month === 1 && (next.day === 1 || (next.day === 2 && wd === 1)));
    // The shipped early closes (data/market-calendar.json): the day ends at 14:00 New York.
    const end = EARLY.includes(next.toISODate()!) ? next.set({ hour: 14 }).toMillis() : next.toMillis();
    if (!closed) open += Math.max(0, Math.min(end, b) - Math.max(day.toMillis(), a));
    day = next;
  }
  return open;
}

describe('openMarketMs', () => {
  it('is what luxon DateTimes in New York give, DST switches, holidays, Mondays observed and early closes included (property)', () => {
    const t = fc.oneof(
      fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2040, 0, 1) }),
      // Near the 17:00 boundaries, the DST switches and the year's end.
      fc
        .tuple(
          fc.integer({ min: 1990, max: 2040 }),
          fc.constantFrom([2, 8], [2, 14], [9, 31], [10, 7], [11, 24], [11, 31], [0, 1]),
          fc.integer({ min: -30 * H, max: 30 * H }),
        )
        .map(([y, [m, d], dt]) => Date.UTC(y, m!, d!, 22) + dt),
    );
    fc.assert(
      fc.property(t, fc.integer({ min: 0, max: 20 * DAY }), (a, x) => {
        expect(openMarketMs(a, a + x)).toBe(openMarketMsLuxon(a, a + x));
      }),
      { numRuns: 2000 },
    );
  });

  it('adds up over adjacent stretches (property)', () => {
    const t = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2030, 0, 1) });
    fc.assert(
      fc.property(
        t,
        fc.integer({ min: 0, max: 40 * DAY }),
        fc.integer({ min: 0, max: 40 * DAY }),
        (a, x, y) => {
          expect(openMarketMs(a, a + x) + openMarketMs(a + x, a + x + y)).toBe(openMarketMs(a, a + x + y));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is 120 hours in any week without 25 December or 1 January (property), in summer and winter time alike', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 10), max: Date.UTC(2030, 11, 10) }), (a) => {
        const d = new Date(a);
        const m = d.getUTCMonth();
        fc.pre(!(m === 11 && d.getUTCDate() >= 15) && !(m === 0 && d.getUTCDate() <= 10));
        // A week of New York's calendar (7 × 24 h would be an hour off across a DST change).
        const b = DateTime.fromMillis(a, { zone: 'America/New_York' }).plus({ weeks: 1 }).toMillis();
        expect(openMarketMs(a, b)).toBe(120 * H);
      }),
      { numRuns: 300 },
    );
  });

  it('closes the weekend from Friday 17:00 to Sunday 17:00 New York (22:00 UTC in winter, 21:00 in summer)', () => {
    expect(openMarketMs(Date.UTC(2024, 0, 5, 22), Date.UTC(2024, 0, 7, 22))).toBe(0);
    expect(openMarketMs(Date.UTC(2024, 6, 5, 21), Date.UTC(2024, 6, 7, 21))).toBe(0);
    expect(openMarketMs(Date.UTC(2024, 6, 5, 20), Date.UTC(2024, 6, 7, 22))).toBe(2 * H);
    // 25 December 2024 (a Wednesday): 17:00 on the 24th to 17:00 on the 25th.
    expect(openMarketMs(Date.UTC(2024, 11, 24, 22), Date.UTC(2024, 11, 25, 22))).toBe(0);
  });
});

describe('CoverageTracker', () => {
  it('lists a stretch without candles on open days, and the stretch after the last candle up to the period end', () => {
    const from = Date.UTC(2024, 2, 4); // a Monday
    const t = new CoverageTracker('H1', from);
    for (let h = 0; h < 24; h++) t.feed(candle(from + h * H));
    for (let h = 0; h < 5; h++) t.feed(candle(from + 2 * DAY + h * H)); // Wednesday: Tuesday is missing
    t.end(from + 4 * DAY);
    expect(
      t.holes.map((x) => [new Date(x.from).toISOString(), new Date(x.to).toISOString(), x.openHours]),
    ).toEqual([
      ['2024-03-05T00:00:00.000Z', '2024-03-06T00:00:00.000Z', 24],
      ['2024-03-06T05:00:00.000Z', '2024-03-08T00:00:00.000Z', 43],
    ]);
    expect([t.first, t.last]).toEqual([from, from + 2 * DAY + 4 * H]);
  });

  it('does not list 6 hours or less of missing open market (minutes with no quote change, early closes)', () => {
    const from = Date.UTC(2024, 2, 4);
    const t = new CoverageTracker('M1', from);
    t.feed(candle(from));
    t.feed(candle(from + 6 * H));
    expect(t.holes).toEqual([]);
  });
});
