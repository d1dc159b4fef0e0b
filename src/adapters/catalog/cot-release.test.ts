import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { LabsCotEntry } from '../v20/labs.ts';
import { cotPublishedAt, visibleAt, type CotItem } from './labs-items.ts';

/**
 * The Commitments of Traders report of a Tuesday is published by the CFTC on the Friday after, at
 * 15:30 New York: a backtest and a replayed recording make it known then, not at its date
 * (the sandbox's generated data: src/sandbox/labs-cot.test.ts). Hand-worked cases on both sides of the US daylight-saving switches
 * (and in the weeks when Europe's differ), then properties over any date.
 */

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

describe('cotPublishedAt', () => {
  it.each([
    // [report date (UTC), published (UTC)]: OANDA dates a report Tuesday 00:00 New York.
    ['2018-01-30T05:00:00Z', '2018-02-02T20:30:00.000Z'], // a recorded OANDA report date, winter (EST)
    ['2024-03-05T05:00:00Z', '2024-03-08T20:30:00.000Z'], // the week before the US switch (10 March)
    ['2024-03-12T04:00:00Z', '2024-03-15T19:30:00.000Z'], // after it (EDT); Europe still on winter time
    ['2024-03-26T04:00:00Z', '2024-03-29T19:30:00.000Z'], // Europe switches 31 March
    ['2024-10-29T04:00:00Z', '2024-11-01T19:30:00.000Z'], // Europe back on 27 October, the US not until 3 November
    ['2024-11-05T05:00:00Z', '2024-11-08T20:30:00.000Z'], // both back
    ['2024-01-09T21:00:00Z', '2024-01-12T20:30:00.000Z'], // the sandbox dates them Tuesday 21:00 UTC (16:00 New York)
    ['2024-07-02T21:00:00Z', '2024-07-05T19:30:00.000Z'],
  ])('a report dated %s is published %s', (date, published) => {
    expect(iso(cotPublishedAt(at(date)))).toBe(published);
  });

  it('is always a Friday 15:30 New York, after the report and within a week of it (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }), (t) => {
        const p = cotPublishedAt(t);
        const ny = DateTime.fromMillis(p, { zone: 'America/New_York' });
        expect([ny.weekday, ny.hour, ny.minute, ny.second]).toEqual([5, 15, 30, 0]);
        expect(p).toBeGreaterThan(t);
        expect(p - t).toBeLessThanOrEqual(8 * 86_400_000);
      }),
      { numRuns: 2000 },
    );
  });

  it('a COT item is visible at the later of its knownAt and its publication', () => {
    const report: LabsCotEntry = {
      oi: '1',
      price: '1.1',
      ncs: '1',
      ncl: '1',
      date: at('2024-03-12T04:00:00Z') / 1000,
      unit: 'Contracts Of EUR 125,000',
    };
    const item = (knownAt: number): CotItem => ({
      kind: 'cot',
      knownAt,
      key: `EUR_USD|${report.date}`,
      instrument: 'EUR_USD',
      report,
    });
    expect(iso(visibleAt(item(report.date * 1000)))).toBe('2024-03-15T19:30:00.000Z');
    expect(iso(visibleAt(item(at('2024-03-16T10:00:00Z'))))).toBe('2024-03-16T10:00:00.000Z');
  });
});
