import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from './decimal.ts';
import { amount, convert, formatAmount, MoneyError, roundTo4 } from './money.ts';

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
          const expected = exact.abs().toDecimalPlaces(4, Decimal.ROUND_HALF_UP).times(exact.isNegative() ? -1 : 1);
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
});
