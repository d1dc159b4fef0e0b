import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from './decimal.ts';
import { formatFactor } from './conversion.ts';
import { amount, convert, convertProduct, formatAmount, MoneyError, roundTo4 } from './money.ts';

const amountArb = fc.integer({ min: -1e13, max: 1e13 });

describe('money (exact 1/10,000 units)', () => {
  it('formats and parses back to the same amount (property)', () => {
    fc.assert(
      fc.property(amountArb, (x) => {
        expect(amount(formatAmount(x)) === x).toBe(true);
      }),
    );
  });

  it('parses like decimal.js for any 4-place decimal string (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (n) => {
        const s = new Decimal(n.toString()).div(10_000).toFixed(4);
        expect(amount(s)).toBe(Number(n));
      }),
    );
  });

  it('converts with one rounding, half away from zero, exactly as decimal arithmetic (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
        fc.integer({ min: 4, max: 8 }),
        fc.integer({ min: 1, max: 99_999_999_999 }),
        fc.integer({ min: 9, max: 12 }),
        (int, places, mantissa, factorPlaces) => {
          const factor = new Decimal(mantissa).div(10 ** factorPlaces).toFixed(factorPlaces);
          const exact = new Decimal(int.toString()).div(new Decimal(10).pow(places)).times(factor);
          const expected = exact
            .abs()
            .toDecimalPlaces(4, Decimal.ROUND_HALF_UP)
            .times(exact.isNegative() ? -1 : 1);
          expect(formatAmount(convert(int, places, factor))).toBe(expected.toFixed(4));
        },
      ),
    );
  });

  it('rounds half away from zero', () => {
    expect(roundTo4(5n, 5)).toBe(1); // 0.00005 -> 0.0001
    expect(roundTo4(-5n, 5)).toBe(-1);
    expect(roundTo4(4n, 5)).toBe(0);
  });

  it('refuses what is not an exact 4-place amount', () => {
    expect(() => amount('1.23456')).toThrow(MoneyError);
    expect(() => amount('abc')).toThrow(/not a decimal amount/);
    expect(amount('1.23450')).toBe(12345);
    expect(formatAmount(-5)).toBe('-0.0005');
  });

  describe('convertProduct (number fast path) equals the BigInt path', () => {
    const MAX = Number.MAX_SAFE_INTEGER;
    /** The outcome of a computation: its value, or the class of what it threw. */
    const outcome = (f: () => number): { value?: number; threw?: string } => {
      try {
        return { value: f() };
      } catch (e) {
        return { threw: (e as Error).constructor.name };
      }
    };
    const same = (a: number, b: number, places: number, factor: string): void => {
      const fast = outcome(() => convertProduct(a, b, places, factor));
      const slow = outcome(() => convert(BigInt(a) * BigInt(b), places, factor));
      expect(fast).toEqual(slow);
      // toEqual tells -0 from +0; say it plainly too: the fast path never makes a negative zero.
      if (fast.value !== undefined) expect(Object.is(fast.value, slow.value)).toBe(true);
    };
    const sign = fc.constantFrom(1, -1);
    /** Safe integers of every size, with the edges: zero, ±1, ±2^53 - 1 and its neighbourhood. */
    const safeInt = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.integer({ min: Number.MIN_SAFE_INTEGER, max: MAX }),
      fc.tuple(sign, fc.integer({ min: 0, max: 1000 })).map(([s, k]) => s * (MAX - k)),
      fc.constantFrom(0, 1, -1, MAX, -MAX, 2 ** 52, -(2 ** 52), 94_906_265, -94_906_265),
    );
    const factor = fc.oneof(
      fc.constant('1'),
      fc.double({ min: 1e-6, max: 1e4, noNaN: true }).map(formatFactor),
      fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 22 })).map(([m, p]) => {
        const digits = m.toString().padStart(p + 1, '0');
        return p === 0 ? digits : `${digits.slice(0, digits.length - p)}.${digits.slice(digits.length - p)}`;
      }),
      fc.constantFrom(
        '0',
        '1.0',
        '0.0000000001',
        '99999.99999',
        '1e-7',
        '-1.5',
        '+2',
        '1.',
        '.5',
        '123456789012345678',
      ),
    );
    const places = fc.integer({ min: 0, max: 26 });

    it('for any safe integers, places and factor (property)', () => {
      fc.assert(fc.property(safeInt, safeInt, places, factor, same), { numRuns: 5000 });
    });

    it('around the 2^53 boundary of the product (property)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 2 ** 26 }),
          fc.integer({ min: -3, max: 3 }),
          sign,
          places,
          factor,
          (a, delta, s, p, f) => {
            // b such that a × b lands on either side of 2^53.
            const b = Math.floor(2 ** 53 / a) + delta;
            if (!Number.isSafeInteger(b)) return; // outside the function's domain (it throws)
            same(s * a, b, p, f);
          },
        ),
        { numRuns: 3000 },
      );
    });

    it('on and next to every half-way case (property)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 5, max: 20 }),
          fc.integer({ min: 0, max: 2 ** 30 }),
          fc.integer({ min: -1, max: 1 }),
          sign,
          factor,
          (p, q, delta, s, f) => {
            const div = 10 ** (p - 4);
            const int = q * div + div / 2 + delta;
            if (!Number.isSafeInteger(int)) return;
            same(s * int, 1, p, f);
            same(1, s * int, p, '1');
          },
        ),
        { numRuns: 3000 },
      );
    });

    it('rounds the fill-path figures as the BigInt path (examples)', () => {
      expect(convertProduct(-5, 1, 5, '1')).toBe(-1);
      expect(convertProduct(4, 1, 5, '1')).toBe(0);
      expect(Object.is(convertProduct(-4, 1, 5, '1'), 0)).toBe(true);
      expect(Object.is(convertProduct(0, -7, 2, '1'), 0)).toBe(true);
      // 0.00150 × 10000 units × 1.25 = 18.75 USD; one pip on 1 unit at 1.3 = 0.00013 → 0.0001.
      expect(formatAmount(convertProduct(150, 10_000, 5, '1.25'))).toBe('18.7500');
      expect(formatAmount(convertProduct(1, 1, 4, '1.3'))).toBe('0.0001');
      expect(() => convertProduct(0.5, 1, 5, '1')).toThrow(MoneyError);
      expect(() => convertProduct(MAX, MAX, 0, '1')).toThrow(MoneyError);
    });
  });
});
