import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime, formatUnixTime, parseRequestTime, parseTime } from './time.ts';

describe('time', () => {
  it('formats as v20 does (nine fraction digits) and parses back (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (t) => {
        const s = formatTime(t);
        expect(s).toBe(`${new Date(t).toISOString().slice(0, 23)}000000Z`);
        expect(parseTime(s)).toBe(t);
        expect(parseTime(formatUnixTime(t))).toBe(t);
      }),
    );
  });

  it('formats runs of times of one day as from scratch (the day part is cached) (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 47_482 }), fc.array(fc.integer({ min: 0, max: 86_399_999 }), { minLength: 1, maxLength: 20 }), (day, offsets) => {
        for (const ms of offsets) {
          const t = day * 86_400_000 + ms;
          expect(formatTime(t)).toBe(`${new Date(t).toISOString().slice(0, 23)}000000Z`);
        }
      }),
    );
  });

  it('reads offsets, short fractions and UNIX seconds', () => {
    expect(parseTime('2017-03-09T13:22:13.832587780Z')).toBe(Date.UTC(2017, 2, 9, 13, 22, 13, 832));
    expect(parseTime('2017-03-09T15:22:13+02:00')).toBe(Date.UTC(2017, 2, 9, 13, 22, 13));
    expect(parseTime('1502463871.639182000')).toBe(1502463871639);
    expect(parseTime('1502463871')).toBe(1502463871000);
    expect(parseTime('yesterday')).toBeNaN();
  });

  it('reads a request time without a zone as New York local time (recorded v20 behaviour)', () => {
    expect(new Date(parseRequestTime('2018-07-02T00:00:00')).toISOString()).toBe('2018-07-02T04:00:00.000Z');
    expect(new Date(parseRequestTime('2018-01-02T00:00:00')).toISOString()).toBe('2018-01-02T05:00:00.000Z');
  });
});
