import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalsAsStrings, decimalText } from './request.ts';

describe('request decimals as OANDA reads them', () => {
  it('decimalText writes every finite double as a plain decimal that reads back as the same number (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const s = decimalText(x);
        expect(s).toMatch(/^-?\d+(\.\d+)?$/);
        expect(Number(s)).toBe(x === 0 ? 0 : x);
      }),
      { numRuns: 5000 },
    );
    expect([
      decimalText(100),
      decimalText(1.1),
      decimalText(1e-7),
      decimalText(-250),
      decimalText(1e21),
    ]).toEqual(['100', '1.1', '0.0000001', '-250', '1000000000000000000000']);
  });

  it('converts numbers only in decimal fields, at any depth, and leaves the rest (and a body without numbers) as it is', () => {
    const body = {
      order: {
        type: 'MARKET',
        units: 100,
        instrument: 'EUR_USD',
        takeProfitOnFill: { price: 1.2 },
        clientExtensions: { id: 7 },
      },
    };
    expect(decimalsAsStrings(body)).toEqual({
      order: {
        type: 'MARKET',
        units: '100',
        instrument: 'EUR_USD',
        takeProfitOnFill: { price: '1.2' },
        clientExtensions: { id: 7 },
      },
    });
    expect(body.order.units).toBe(100); // the input is not changed
    const strings = { order: { type: 'MARKET', units: '100' } };
    expect(decimalsAsStrings(strings)).toBe(strings);
    const proto = JSON.parse('{"__proto__": {"units": 5}, "units": 1}') as Record<string, unknown>;
    const out = decimalsAsStrings(proto);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ units: '5' });
  });
});
