import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FillModelError, parseFillModels } from './fill-models.ts';

/** The one parser of fill model names every simulator is built from (backtest, run --broker sim, shadow, replay, sandbox). */
describe('parseFillModels', () => {
  it('property: a model built from a valid name carries that name back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5000 }), (pips, ms) => {
        const m = parseFillModels({ slippage: `fixed:${pips / 10}`, latency: `fixed:${ms}` }, 'USD');
        expect(m.slippage.name).toBe(`fixed:${pips / 10}`);
        expect(m.latency.name).toBe(`fixed:${ms}`);
      }),
    );
  });

  it("absent names are v20's own behaviour; a bad name throws naming its model", () => {
    const m = parseFillModels({}, 'USD');
    expect([m.slippage.name, m.latency.name, m.commission.name, m.marketHours]).toEqual([
      'none',
      'none',
      'none',
      true,
    ]);
    for (const [names, model] of [
      [{ slippage: 'wobbly' }, 'slippage'],
      [{ latency: 'fixed:-1' }, 'latency'],
      [{ commission: 'lots' }, 'commission'],
    ] as const) {
      const e = (() => {
        try {
          parseFillModels(names, 'USD');
        } catch (x) {
          return x;
        }
      })();
      expect(e).toBeInstanceOf(FillModelError);
      expect((e as FillModelError).model).toBe(model);
    }
  });
});
