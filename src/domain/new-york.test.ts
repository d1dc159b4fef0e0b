import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { newYorkDate, nextRollover, rolloverOfDay, tradingDayOf, weekendClosure } from './new-york.ts';

const NY = 'America/New_York';

// The definitions, spelled out with luxon DateTimes (slow, obviously right): the oracle.
function closureByDateTime(t: number): { from: number; to: number } {
  const ny = DateTime.fromMillis(t, { zone: NY });
  let to = ny.plus({ days: (7 - ny.weekday) % 7 }).set({ hour: 17, minute: 0, second: 0, millisecond: 0 });
  if (to.toMillis() <= t) to = to.plus({ days: 7 });
  return { from: to.minus({ days: 2 }).toMillis(), to: to.toMillis() };
}
function rolloverByDateTime(t: number): number {
  const ny = DateTime.fromMillis(t, { zone: NY });
  let r = ny.set({ hour: 17, minute: 0, second: 0, millisecond: 0 });
  if (r.toMillis() <= t) r = r.plus({ days: 1 });
  return r.toMillis();
}

const instants = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2060, 0, 1) });

describe('New York boundaries', () => {
  it('weekend closure: Friday 17:00 to Sunday 17:00 New York, in winter and in summer', () => {
    // Winter (EST, UTC-5): 22:00 UTC; summer (EDT, UTC-4): 21:00 UTC.
    expect(weekendClosure(Date.UTC(2024, 0, 3))).toEqual({
      from: Date.UTC(2024, 0, 5, 22),
      to: Date.UTC(2024, 0, 7, 22),
    });
    expect(weekendClosure(Date.UTC(2024, 6, 3))).toEqual({
      from: Date.UTC(2024, 6, 5, 21),
      to: Date.UTC(2024, 6, 7, 21),
    });
    // The Sunday of the spring switch (2024-03-10, 02:00 local): the closure starts in EST, ends in EDT.
    expect(weekendClosure(Date.UTC(2024, 2, 9))).toEqual({
      from: Date.UTC(2024, 2, 8, 22),
      to: Date.UTC(2024, 2, 10, 21),
    });
    // At the reopening instant itself, the next weekend is the one that ends first after it.
    expect(weekendClosure(Date.UTC(2024, 0, 7, 22)).to).toBe(Date.UTC(2024, 0, 14, 22));
  });

  it('rollover: the first 17:00 New York strictly after t, across daylight saving', () => {
    expect(nextRollover(Date.UTC(2024, 0, 3, 12))).toBe(Date.UTC(2024, 0, 3, 22));
    expect(nextRollover(Date.UTC(2024, 0, 3, 22))).toBe(Date.UTC(2024, 0, 4, 22));
    expect(nextRollover(Date.UTC(2024, 10, 2, 23))).toBe(Date.UTC(2024, 10, 3, 22)); // autumn switch day
  });

  it('trading days are named by the 17:00 New York rollover that ends them, across daylight saving', () => {
    // Winter: 17:00 New York = 22:00 UTC; summer: 21:00 UTC.
    expect(tradingDayOf(Date.UTC(2024, 0, 2, 21, 59, 59, 999))).toBe('2024-01-02');
    expect(tradingDayOf(Date.UTC(2024, 0, 2, 22))).toBe('2024-01-03');
    expect(tradingDayOf(Date.UTC(2024, 6, 2, 20, 59))).toBe('2024-07-02');
    expect(tradingDayOf(Date.UTC(2024, 6, 2, 21))).toBe('2024-07-03');
    expect(rolloverOfDay('2024-01-02')).toBe(Date.UTC(2024, 0, 2, 22));
    expect(rolloverOfDay('2024-07-02')).toBe(Date.UTC(2024, 6, 2, 21));
    expect(rolloverOfDay('2024-1-2')).toBeNaN();
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2060, 0, 1) }), (t) => {
        // The day's rollover is the first one after t, and it names its own day.
        const day = tradingDayOf(t);
        expect(rolloverOfDay(day)).toBe(nextRollover(t));
        expect(newYorkDate(rolloverOfDay(day))).toBe(day);
      }),
    );
  });

  it('equal the luxon DateTime definitions at any instant 1971-2060 (property)', () => {
    fc.assert(
      fc.property(instants, (t) => {
        expect(weekendClosure(t)).toEqual(closureByDateTime(t));
        expect(nextRollover(t)).toBe(rolloverByDateTime(t));
      }),
      { numRuns: 3000 },
    );
  });

  it('equal them on every hour around the switches of 2007-2030 (every hour, exhaustively)', () => {
    for (let y = 2007; y <= 2030; y++) {
      for (const month of [2, 10]) {
        for (let h = 0; h < 24 * 14; h++) {
          const t = Date.UTC(y, month, 1) + h * 3_600_000 + (h % 2) * 1_799_999;
          expect(weekendClosure(t)).toEqual(closureByDateTime(t));
          expect(nextRollover(t)).toBe(rolloverByDateTime(t));
        }
      }
    }
  });
});
