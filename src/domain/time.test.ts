import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIsoMs, formatTime, formatUnixTime, parseRequestTime, parseTime } from './time.ts';

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

  it("formats whole milliseconds as Date's toISOString does, before 1970 too, interleaved days (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -2_208_988_800_000, max: 7_258_118_400_000 }), {
          minLength: 1,
          maxLength: 10,
        }),
        (times) => {
          for (const t of times) expect(formatIsoMs(t)).toBe(new Date(t).toISOString());
        },
      ),
    );
  });

  it('formats runs of times of one day as from scratch (the day part is cached) (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 47_482 }),
        fc.array(fc.integer({ min: 0, max: 86_399_999 }), { minLength: 1, maxLength: 20 }),
        (day, offsets) => {
          for (const ms of offsets) {
            const t = day * 86_400_000 + ms;
            expect(formatTime(t)).toBe(`${new Date(t).toISOString().slice(0, 23)}000000Z`);
          }
        },
      ),
    );
  });

  it("reads v20's own form as Date.UTC does, out-of-range fields included (property)", () => {
    const pad = (n: number, w: number): string => String(n).padStart(w, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 999_999_999 }),
        (y, mo, d, h, mi, s, frac) => {
          const text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(frac, 9)}Z`;
          const expected = Date.UTC(y, mo - 1, d, h, mi, s, Math.floor(frac / 1_000_000));
          expect(parseTime(text)).toBe(expected);
          expect(parseTime(text)).toBe(expected); // and from the cache
        },
      ),
    );
    expect(parseTime('2017-03-09T13:22:13.83258778xZ')).toBeNaN();
    expect(parseTime('0050-01-01T00:00:00.000000000Z')).toBe(Date.UTC(50, 0, 1)); // Date.UTC's 1950, as before
  });

  it('parses the text formatTime just wrote as it parses any other copy of it (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -70_000_000_000_000, max: 300_000_000_000_000 }), (t) => {
        const s = formatTime(t);
        const viaCache = parseTime(s);
        // Move both caches elsewhere, then read the same text again from scratch.
        formatTime(t + 1);
        parseTime('1970-01-01T00:00:00.000000000Z');
        expect(viaCache).toBe(parseTime(s));
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
