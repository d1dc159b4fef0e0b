import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { humanTime } from './human-time.ts';

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
    const zones = [
      'UTC',
      'America/New_York',
      'Europe/London',
      'Europe/Berlin',
      'Australia/Sydney',
      'Asia/Kolkata',
      'America/Sao_Paulo',
      'Pacific/Auckland',
    ];
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
});
