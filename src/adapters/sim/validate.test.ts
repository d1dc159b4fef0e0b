import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalPlaces } from './validate.ts';

/** The definition decimalPlaces replaces: a v20 decimal string and its count of fraction digits. */
function byRegex(s: string): number {
  if (!/^[+-]?\d+(\.\d+)?$/.test(s)) return -1;
  const dot = s.indexOf('.');
  return dot < 0 ? 0 : s.length - dot - 1;
}

describe('decimalPlaces', () => {
  it('agrees with /^[+-]?\\d+(\\.\\d+)?$/ and the digits after the dot (property)', () => {
    const chars = fc.constantFrom('0', '1', '5', '9', '.', '+', '-', 'e', ' ', '\n', '/', ':', '٣');
    const text = fc.oneof(
      fc.array(chars, { maxLength: 12 }).map((a) => a.join('')),
      fc.string({ maxLength: 12 }),
      fc.double({ noNaN: false }).map(String),
      fc
        .tuple(fc.integer(), fc.nat(), fc.constantFrom('', '+', '-'))
        .map(([i, f, s]) => `${s}${Math.abs(i)}.${f}`),
    );
    fc.assert(
      fc.property(text, (s) => {
        expect(decimalPlaces(s)).toBe(byRegex(s));
      }),
      { numRuns: 20_000 },
    );
  });

  it('reads the usual request fields', () => {
    expect(decimalPlaces('10000')).toBe(0);
    expect(decimalPlaces('-10000')).toBe(0);
    expect(decimalPlaces('0.0015')).toBe(4);
    expect(decimalPlaces('+1.5')).toBe(1);
    expect(decimalPlaces('1.')).toBe(-1);
    expect(decimalPlaces('.5')).toBe(-1);
    expect(decimalPlaces('')).toBe(-1);
    expect(decimalPlaces('-')).toBe(-1);
    expect(decimalPlaces('1e5')).toBe(-1);
    expect(decimalPlaces('1.5\n')).toBe(-1);
  });
});
