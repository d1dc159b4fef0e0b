import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadInstruments } from './instrument.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import {
  DAILY_BREAK_WEEK,
  FX_WEEK,
  MarketCalendar,
  MarketCalendarError,
  MarketHours,
  TradingHoursError,
} from './market-hours.ts';
import { weekendClosure } from './new-york.ts';

const H = 3_600_000;
const utc = (s: string): number => Date.parse(s);

describe('trading hours per instrument', () => {
  it('the FX week agrees with the weekend closure at every instant, forwards and backwards (property)', () => {
    const fx = new MarketHours(FX_WEEK, 'tradingHours', MarketCalendar.NONE); // the weekly rule alone
    const t0 = utc('2019-01-01T00:00:00Z');
    const span = 8 * 365 * 24 * H;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: span }), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (offsets, sorted) => {
          const times = offsets.map((o) => t0 + o);
          if (sorted) times.sort((a, b) => a - b);
          for (const t of times) {
            const w = weekendClosure(t);
            expect(fx.isOpen(t), new Date(t).toISOString()).toBe(!(t >= w.from && t < w.to));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the FX week opens Sunday 17:00 and closes Friday 17:00 New York, daylight saving included', () => {
    const fx = new MarketHours(FX_WEEK);
    expect(fx.isOpen(utc('2024-01-05T21:59:59.999Z'))).toBe(true); // Friday 16:59:59.999 EST
    expect(fx.isOpen(utc('2024-01-05T22:00:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2024-01-06T12:00:00Z'))).toBe(false); // Saturday
    expect(fx.isOpen(utc('2024-01-07T21:59:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2024-01-07T22:00:00Z'))).toBe(true); // Sunday 17:00 EST
    expect(fx.isOpen(utc('2024-07-05T20:59:00Z'))).toBe(true); // Friday 16:59 EDT
    expect(fx.isOpen(utc('2024-07-05T21:00:00Z'))).toBe(false);
  });

  it('gold has the daily 17:00-18:00 New York break and opens Sunday 18:00', () => {
    const xau = loadInstruments().get('XAU_USD').hours;
    expect(xau.hours).toEqual(DAILY_BREAK_WEEK);
    expect(xau.isOpen(utc('2024-01-03T21:59:00Z'))).toBe(true); // Wednesday 16:59 EST
    expect(xau.isOpen(utc('2024-01-03T22:30:00Z'))).toBe(false); // 17:30: the daily break
    expect(xau.isOpen(utc('2024-01-03T23:00:00Z'))).toBe(true); // 18:00
    expect(xau.isOpen(utc('2024-01-07T22:30:00Z'))).toBe(false); // Sunday 17:30: FX is open, gold not yet
    expect(xau.isOpen(utc('2024-01-07T23:00:00Z'))).toBe(true);
  });

  it('the DAX trades 01:15 to 22:00 Berlin on weekdays only', () => {
    const dax = loadInstruments().get('DE30_EUR').hours;
    expect(dax.isOpen(utc('2024-01-03T00:14:00Z'))).toBe(false); // 01:14 CET
    expect(dax.isOpen(utc('2024-01-03T00:15:00Z'))).toBe(true);
    expect(dax.isOpen(utc('2024-01-03T20:59:00Z'))).toBe(true);
    expect(dax.isOpen(utc('2024-01-03T21:00:00Z'))).toBe(false); // 22:00 CET
    expect(dax.isOpen(utc('2024-07-03T20:30:00Z'))).toBe(false); // 22:30 CEST
    expect(dax.isOpen(utc('2024-01-06T12:00:00Z'))).toBe(false); // Saturday
  });

  it('every instrument of data/instruments.json has its hours, and each is open on a Wednesday at noon New York', () => {
    for (const i of loadInstruments().list()) {
      expect(i.hours.hours.sessions.length, i.name).toBeGreaterThan(0);
      expect(i.hours.isOpen(utc('2024-01-03T17:00:00Z')), i.name).toBe(true);
      expect(i.hours.isOpen(utc('2024-01-06T17:00:00Z')), i.name).toBe(false); // Saturday
    }
  });

  it('a bad entry names the field and the expected form', () => {
    expect(() => new MarketHours({ timeZone: 'Mars/Olympus', sessions: ['Sun 17:00-Fri 17:00'] })).toThrow(
      /timeZone: 'Mars\/Olympus' is not an IANA time zone/,
    );
    expect(() => new MarketHours({ timeZone: 'UTC', sessions: ['Sunday 5pm-Friday 5pm'] })).toThrow(
      TradingHoursError,
    );
    expect(() => new MarketHours({ timeZone: 'UTC', sessions: ['Fri 17:00-Sun 17:00'] })).toThrow(
      /must end after it starts/,
    );
    expect(
      () => new MarketHours({ timeZone: 'UTC', sessions: ['Mon 00:00-Wed 00:00', 'Tue 00:00-Thu 00:00'] }),
    ).toThrow(/overlap/);
  });
});

describe('the market calendar: the days the whole market closes', () => {
  const cal = MarketCalendar.load([join(import.meta.dirname, '../../data/market-calendar.json')]);

  /** The reference, with luxon: the trading day of `t` is dated by the next 17:00 New York; closed on 25 Dec and 1 Jan, and on 26 Dec and 2 Jan when they are Mondays. */
  function holiday(t: number): boolean {
    const local = DateTime.fromMillis(t, { zone: 'America/New_York' });
    // The early closes OANDA's candles show: from 14:00 New York on these dates.
    const early = ['2012-12-24', '2012-12-31', '2013-12-24', '2013-12-31', '2014-12-24', '2014-12-31'];
    early.push('2015-12-24', '2015-12-31', '2016-12-30');
    if (early.includes(local.toISODate()!) && local.hour >= 14 && local.hour < 17) return true;
    let d = local;
    if (d.hour >= 17) d = d.plus({ days: 1 });
    const monday = d.weekday === 1;
    return (
      (d.month === 12 && (d.day === 25 || (d.day === 26 && monday))) ||
      (d.month === 1 && (d.day === 1 || (d.day === 2 && monday)))
    );
  }

  it('closes Christmas and New Year from 17:00 New York the day before to 17:00 on the day, for FX and gold alike', () => {
    const fx = new MarketHours(FX_WEEK, 'tradingHours', cal);
    expect(fx.isOpen(utc('2019-12-24T21:59:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2019-12-24T22:00:00Z'))).toBe(false); // 17:00 EST on the 24th
    expect(fx.isOpen(utc('2019-12-25T12:00:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2019-12-25T22:00:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2020-01-01T12:00:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2020-01-01T22:00:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2016-12-26T12:00:00Z'))).toBe(false); // Christmas 2016 was a Sunday: observed on Monday
    expect(fx.isOpen(utc('2017-12-26T12:00:00Z'))).toBe(true); // 2017: on the Monday itself, the Tuesday trades
    // The shipped calendar is every instrument's (loadInstruments builds their hours with it).
    const xau = loadInstruments().get('XAU_USD').hours;
    expect(xau.isOpen(utc('2019-12-25T12:00:00Z'))).toBe(false);
    expect(xau.isOpen(utc('2019-12-25T23:00:00Z'))).toBe(true); // 18:00 EST, after gold's daily break
    expect(xau.weekly.isOpen(utc('2019-12-25T12:00:00Z'))).toBe(true); // the weekly hours alone
  });

  it('closes early on the 24 and 31 December OANDA closed early (2012 to 2015, and 30 December 2016), until the holiday ends; other years trade to 17:00', () => {
    const fx = new MarketHours(FX_WEEK, 'tradingHours', cal);
    expect(fx.isOpen(utc('2013-12-24T18:59:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2013-12-24T19:00:00Z'))).toBe(false); // 14:00 EST
    expect(cal.closureAt(utc('2013-12-24T20:00:00Z'))).toEqual({
      from: utc('2013-12-24T19:00:00Z'),
      to: utc('2013-12-24T22:00:00Z'),
      name: 'Christmas Eve early close',
    });
    // Then Christmas itself: closed from the early close to the reopen at 17:00 New York on the 25th.
    for (let t = utc('2013-12-24T19:00:00Z'); t < utc('2013-12-25T22:00:00Z'); t += 15 * 60_000)
      expect(fx.isOpen(t), new Date(t).toISOString()).toBe(false);
    expect(fx.isOpen(utc('2013-12-25T22:00:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2014-12-31T19:30:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2016-12-30T19:30:00Z'))).toBe(false); // the Friday before a Saturday New Year's Eve
    expect(fx.isOpen(utc('2016-12-23T19:30:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2019-12-24T19:30:00Z'))).toBe(true);
    expect(fx.isOpen(utc('2018-12-31T21:30:00Z'))).toBe(true);
    expect(cal.nextClosure(utc('2013-12-24T12:00:00Z'))).toBe(utc('2013-12-24T19:00:00Z'));
    expect(cal.nextClosure(utc('2013-12-20T12:00:00Z'))).toBe(utc('2013-12-24T19:00:00Z'));
    // Open time of the trading day of 24 December 2013: 17:00 on the 23rd to 14:00 on the 24th.
    expect(cal.openFxMs(utc('2013-12-23T22:00:00Z'), utc('2013-12-25T22:00:00Z'))).toBe(21 * H);
    expect(cal.openFxMs(utc('2019-12-23T22:00:00Z'), utc('2019-12-25T22:00:00Z'))).toBe(24 * H);
  });

  it('is open exactly when the FX week is and the trading day is no holiday, forwards and backwards (property)', () => {
    const fx = new MarketHours(FX_WEEK, 'tradingHours', cal);
    const near = fc
      .tuple(
        fc.integer({ min: 2000, max: 2035 }),
        fc.constantFrom([11, 24], [11, 25], [11, 26], [11, 31], [0, 1], [0, 2]),
        fc.integer({ min: -40 * H, max: 40 * H }),
      )
      .map(([y, [m, d], dt]) => Date.UTC(y, m!, d!, 22) + dt);
    const t = fc.oneof(near, fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2035, 0, 1) }));
    fc.assert(
      fc.property(fc.array(t, { minLength: 1, maxLength: 40 }), fc.boolean(), (times, sorted) => {
        if (sorted) times.sort((a, b) => a - b);
        for (const x of times) {
          const w = weekendClosure(x);
          const weekend = x >= w.from && x < w.to;
          expect(fx.isOpen(x), new Date(x).toISOString()).toBe(!weekend && !holiday(x));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a user calendar adds its days (every year, or one dated day); a bad one names the file, the entry and the form', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-calendar-'));
    const mine = join(dir, 'mine.json');
    writeFileSync(
      mine,
      JSON.stringify({
        closedDays: [
          { name: 'Thanksgiving 2019', date: '2019-11-28' },
          { name: 'Boxing Day', date: '12-26' },
          { name: 'Black Friday early close', date: '11-29', weekday: 'Fri', closes: '13:00' },
        ],
      }),
    );
    const both = MarketCalendar.load([join(import.meta.dirname, '../../data/market-calendar.json'), mine]);
    const fx = new MarketHours(FX_WEEK, 'tradingHours', both);
    expect(fx.isOpen(utc('2019-11-28T12:00:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2020-11-26T12:00:00Z'))).toBe(true); // dated: that year only
    expect(fx.isOpen(utc('2019-12-26T12:00:00Z'))).toBe(false); // every year
    expect(fx.isOpen(utc('2019-12-25T12:00:00Z'))).toBe(false); // the shipped days stay
    expect(fx.isOpen(utc('2019-11-29T17:59:00Z'))).toBe(true); // an early close on a Friday: 13:00 EST
    expect(fx.isOpen(utc('2019-11-29T18:00:00Z'))).toBe(false);
    expect(fx.isOpen(utc('2020-11-29T18:00:00Z'))).toBe(false); // a Sunday: the weekend anyway
    expect(fx.isOpen(utc('2024-11-29T18:00:00Z'))).toBe(false); // a Friday again
    expect(both.closureAt(utc('2019-11-28T12:00:00Z'))).toEqual({
      from: utc('2019-11-27T22:00:00Z'),
      to: utc('2019-11-28T22:00:00Z'),
      name: 'Thanksgiving 2019',
    });
    const bad = (x: unknown): string => {
      writeFileSync(mine, JSON.stringify(x));
      try {
        MarketCalendar.load([mine]);
      } catch (e) {
        expect(e).toBeInstanceOf(MarketCalendarError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(bad([])).toBe(
      `${mine}: must be an object with a list "closedDays", e.g. {"closedDays": [{"name": "Christmas", "date": "12-25"}]}`,
    );
    expect(bad({ closedDays: [{ name: 'x', date: '25.12' }] })).toBe(
      `${mine}: closedDays[0] (x): date "25.12" is not "MM-DD" (every year) or "YYYY-MM-DD" (that year)`,
    );
    expect(bad({ closedDays: [{ name: 'x', date: '12-26', weekday: 'Monday' }] })).toMatch(
      /closedDays\[0\] \(x\): weekday "Monday" is not one of Sun, Mon/,
    );
    expect(bad({ closedDays: [{ date: '12-26' }] })).toMatch(/closedDays\[0\]: give \{"name"/);
    expect(bad({ closedDays: [{ name: 'x', date: '12-24', closes: '2pm' }] })).toBe(
      `${mine}: closedDays[0] (x): closes "2pm" is not an early close "HH:MM" New York time between 03:00 and 16:59 (e.g. "14:00")`,
    );
    expect(bad({ closedDays: [{ name: 'x', date: '12-24', closes: '18:00' }] })).toMatch(
      /closes "18:00" is not/,
    );
    writeFileSync(mine, '{not json');
    expect(() => MarketCalendar.load([mine])).toThrow(
      new RegExp(`^${mine.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read the market calendar`),
    );
  });
});
