import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { humanTime, humanTimeTick } from './human-time.ts';

/**
 * Reads a humanTime string back to its instant, in `zone`: the wall time, then the one offset of
 * the zone (luxon's tables) whose instant shows that wall time under that abbreviation. Every
 * match is returned, so an ambiguous string (a repeated hour not told apart) shows as two.
 */
function readBack(s: string, zone: string): number[] {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)(?: (.+))?$/.exec(s);
  if (!m) throw new Error(`not a human time: ${s}`);
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!);
  const z = IANAZone.create(zone);
  const offsets = new Set([-86_400_000, 0, 86_400_000].map((d) => z.offset(wall + d)));
  const found: number[] = [];
  for (const o of offsets) {
    const t = wall - o * 60_000;
    if (z.offset(t) !== o) continue;
    if (zone !== 'UTC' && z.offsetName(t, { format: 'short', locale: 'en-US' }) !== m[6]) continue;
    found.push(t);
  }
  return found;
}

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/London',
  'Europe/Berlin',
  'Australia/Sydney',
  'Asia/Kolkata',
  'America/Sao_Paulo',
  'Pacific/Auckland',
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

describe('humanTime (report.txt and the report pages)', () => {
  it('in UTC is the minute of the ISO time, with no zone word (the pages say "UTC" once)', () => {
    expect(humanTime(Date.parse('2024-01-01T00:00:59.999Z'))).toBe('2024-01-01 00:00');
    expect(humanTime(Date.parse('2024-01-01T00:00:00Z'), 'UTC')).toBe('2024-01-01 00:00');
  });

  it('in New York says EST or EDT across the DST switches of 2024', () => {
    const ny = 'America/New_York';
    expect(humanTime(Date.parse('2024-03-10T06:59:00Z'), ny)).toBe('2024-03-10 01:59 EST');
    expect(humanTime(Date.parse('2024-03-10T07:00:00Z'), ny)).toBe('2024-03-10 03:00 EDT');
    // The repeated hour of November: told apart by its abbreviation.
    expect(humanTime(Date.parse('2024-11-03T05:30:00Z'), ny)).toBe('2024-11-03 01:30 EDT');
    expect(humanTime(Date.parse('2024-11-03T06:30:00Z'), ny)).toBe('2024-11-03 01:30 EST');
  });

  it('read back in its zone, is the instant it was made from (any minute 1990-2040, zones with DST on either hemisphere, half hours, none)', () => {
    const zones = ZONES;
    const minute = fc
      .integer({ min: Date.UTC(1990, 0, 1) / 60_000, max: Date.UTC(2040, 0, 1) / 60_000 })
      .map((m) => m * 60_000);
    fc.assert(
      fc.property(minute, fc.constantFrom(...zones), (t, zone) => {
        expect(readBack(humanTime(t, zone), zone)).toEqual([t]);
      }),
      { numRuns: 2000 },
    );
  });

  it('in UTC, for any instant, is the ISO time to the minute (the format the pages wrote before it was shared)', () => {
    const ms = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) });
    fc.assert(
      fc.property(ms, (t) => {
        expect(humanTime(t)).toBe(new Date(t).toISOString().slice(0, 16).replace('T', ' '));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("humanTimeTick (the charts' time-axis labels)", () => {
  it('is the year, month, day or clock of the same wall time humanTime says, in any zone', () => {
    const ms = fc
      .integer({ min: Date.UTC(1990, 0, 1) / 1000, max: Date.UTC(2040, 0, 1) / 1000 })
      .map((s) => s * 1000);
    fc.assert(
      fc.property(ms, fc.constantFrom(...ZONES), (t, zone) => {
        const [date, clock] = humanTime(t, zone).split(' ');
        const [y, m, d] = date!.split('-');
        expect(humanTimeTick(t, 0, zone)).toBe(y);
        expect(humanTimeTick(t, 1, zone)).toBe(MONTHS[Number(m) - 1]);
        expect(humanTimeTick(t, 2, zone)).toBe(String(Number(d)));
        expect(humanTimeTick(t, 3, zone)).toBe(clock);
        expect(humanTimeTick(t, 4, zone)).toBe(
          `${clock}:${String(new Date(t).getUTCSeconds()).padStart(2, '0')}`,
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('in New York: 14:00 at 18:00 UTC in summer, the 10th from 05:00 UTC on 10 March 2024', () => {
    const ny = 'America/New_York';
    expect(humanTimeTick(Date.parse('2024-07-01T18:00:00Z'), 3, ny)).toBe('14:00');
    expect(humanTimeTick(Date.parse('2024-03-10T04:59:00Z'), 2, ny)).toBe('9');
    expect(humanTimeTick(Date.parse('2024-03-10T05:00:00Z'), 2, ny)).toBe('10');
    expect(humanTimeTick(Date.parse('2024-03-01T04:59:00Z'), 1, ny)).toBe('Feb');
  });
});
