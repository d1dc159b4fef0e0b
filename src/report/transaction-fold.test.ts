import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FillRow } from './run-model.ts';
import { FillColumns, packFillRows } from './transaction-fold.ts';

// IDs as v20 writes them (plain integers), and the odd ones a hand-edited file could hold.
const id = fc.oneof(
  fc.nat({ max: 1e9 }).map(String),
  fc.constantFrom('', '-0', '-1', '007', '1e3', 'x', '12.5', ' 1'),
);
const fill = fc.record({
  id,
  time: fc.double({ noNaN: false }),
  instrument: fc.constantFrom('EUR_USD', 'USD_JPY', ''),
  units: fc.double(),
  price: fc.double(),
  reason: fc.constantFrom('MARKET_ORDER', 'STOP_LOSS_ORDER', ''),
  tradeID: id,
}) as fc.Arbitrary<FillRow>;

describe('FillColumns: the fold keeps fills as columns of numbers (issue 27, bounded report memory)', () => {
  it('gives back every fill exactly as pushed, in order, whatever the IDs', () => {
    fc.assert(
      fc.property(fc.array(fill, { maxLength: 600 }), (fills) => {
        const c = new FillColumns();
        for (const f of fills) c.push(f);
        expect(c.length).toBe(fills.length);
        expect(c.rows()).toEqual(fills);
      }),
      { numRuns: 200 },
    );
  });

  it('packs for the page exactly as the rows pack: the same columns and the same name indexes in the same order', () => {
    const delta = (xs: ArrayLike<number>, n: number): number[] =>
      Array.from({ length: n }, (_, i) => (i === 0 ? xs[0]! : Math.round((xs[i]! - xs[i - 1]!) * 1e6) / 1e6));
    const namer = (): [(s: string) => number, string[]] => {
      const names: string[] = [];
      return [(s) => (names.includes(s) ? names.indexOf(s) : names.push(s) - 1), names];
    };
    fc.assert(
      fc.property(fc.array(fill, { maxLength: 300 }), fc.constantFrom('', 'USD_JPY'), (fills, seen) => {
        const c = new FillColumns();
        for (const f of fills) c.push(f);
        const [a, namesA] = namer();
        const [b, namesB] = namer();
        // A name the trades already took comes first in both.
        if (seen) (a(seen), b(seen));
        expect(c.packed(a, delta)).toEqual(packFillRows(fills, b, delta));
        expect(namesA).toEqual(namesB);
      }),
      { numRuns: 200 },
    );
  });

  it('holds plain v20 fills in typed columns: 7 numbers a fill, not an object each', () => {
    const c = new FillColumns();
    for (let i = 1; i <= 5000; i++)
      c.push({
        id: String(2 * i),
        time: 1.6e9 + i,
        instrument: 'EUR_USD',
        units: 1000,
        price: 1.1,
        reason: 'MARKET_ORDER',
        tradeID: String(2 * i - 1),
      });
    expect(c.bytes()).toBeLessThanOrEqual(7 * 8 * 8192);
    expect(c.rows()[4999]).toEqual({
      id: '10000',
      time: 1.6e9 + 5000,
      instrument: 'EUR_USD',
      units: 1000,
      price: 1.1,
      reason: 'MARKET_ORDER',
      tradeID: '9999',
    });
  });
});
