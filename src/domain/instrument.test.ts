import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Instrument, loadInstruments } from './instrument.ts';

const eurusd = loadInstruments().get('EUR_USD');
/** EUR_USD's definition with another displayPrecision. */
const withPrecision = (d: number): Instrument => new Instrument({ ...eurusd.wire, displayPrecision: d });

describe('Instrument.price', () => {
  it('writes exactly what snap(x).toFixed(displayPrecision) writes (property)', () => {
    const x = fc.oneof(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 10, noNaN: true }),
      fc.double({ min: -1e-3, max: 1e-3, noNaN: true }),
      fc.double({ noNaN: false }),
      // Half-way between two units of the last place, and next to it.
      fc
        .tuple(
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
          fc.integer({ min: 0, max: 6 }),
          fc.constantFrom(-1e-9, 0, 1e-9),
        )
        .map(([k, d, e]) => (k + 0.5) / 10 ** d + e),
      fc.constantFrom(
        0,
        -0,
        1,
        -1,
        1.123455,
        2 ** 31 / 1e5,
        2 ** 31 / 1e5 + 1e-5,
        1e21,
        -1e21,
        Infinity,
        -Infinity,
        Number.NaN,
      ),
    );
    fc.assert(
      fc.property(x, fc.integer({ min: 0, max: 8 }), (v, d) => {
        const inst = withPrecision(d);
        expect(inst.price(v)).toBe(inst.snap(v).toFixed(d));
      }),
      { numRuns: 20_000 },
    );
  });

  it('pins the usual forms', () => {
    const i5 = withPrecision(5);
    expect(i5.price(1.123455)).toBe('1.12346');
    expect(i5.price(1.1)).toBe('1.10000');
    expect(i5.price(0.000004)).toBe('0.00000');
    expect(i5.price(-0.000004)).toBe('0.00000');
    expect(i5.price(-1.5)).toBe('-1.50000');
    expect(withPrecision(0).price(38012.5)).toBe('38013');
    expect(withPrecision(3).price(151.2345)).toBe('151.235');
    // A snapped price prints as its own toFixed (the fill's bid and ask texts rely on it).
    expect(i5.price(i5.snap(1.0842349999))).toBe(i5.snap(1.0842349999).toFixed(5));
  });
});
