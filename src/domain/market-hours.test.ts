import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadInstruments } from './instrument.ts';
import { DAILY_BREAK_WEEK, FX_WEEK, MarketCalendar, MarketHours, TradingHoursError } from './market-hours.ts';
import { weekendClosure } from './new-york.ts';

const H = 3_600_000;
const utc = (s: string): number => Date.parse(s);

describe('trading hours per instrument', () => {
  it('the FX week agrees with the weekend closure at every instant, forwards and backwards (property)', () => {
    const fx = new MarketHours(FX_WEEK, 'tradingHours', MarketCalendar.NONE); // the weekly rule alone
    const t0 = utc('2019-01-01T00:00:00Z');
    const span = 8 * 365 * 24 * H;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: span }), { minLength: 1, maxLength: 40 }), fc.boolean(), (offsets, sorted) => {
        const times = offsets.map((o) => t0 + o);
        if (sorted) times.sort((a, b) => a - b);
        for (const t of times) {
          const w = weekendClosure(t);
          expect(fx.isOpen(t), new Date(t).toISOString()).toBe(!(t >= w.from && t < w.to));
        }
      }),
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
    expect(() => new MarketHours({ timeZone: 'Mars/Olympus', sessions: ['Sun 17:00-Fri 17:00'] })).toThrow(/timeZone: 'Mars\/Olympus' is not an IANA time zone/);
    expect(() => new MarketHours({ timeZone: 'UTC', sessions: ['Sunday 5pm-Friday 5pm'] })).toThrow(TradingHoursError);
    expect(() => new MarketHours({ timeZone: 'UTC', sessions: ['Fri 17:00-Sun 17:00'] })).toThrow(/must end after it starts/);
    expect(() => new MarketHours({ timeZone: 'UTC', sessions: ['Mon 00:00-Wed 00:00', 'Tue 00:00-Thu 00:00'] })).toThrow(/overlap/);
  });
});
