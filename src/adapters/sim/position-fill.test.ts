import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { MINUTE, T0, candle, f, harness, market, pending } from './testkit.ts';

/**
 * positionFill per account kind (docs/fills.md "positionFill"): OPEN_ONLY only opens or extends a
 * position, REDUCE_FIRST reduces then opens the rest, REDUCE_ONLY only reduces, DEFAULT is
 * REDUCE_FIRST without hedging and OPEN_ONLY with it. A netting account (no hedging; FIFO or not)
 * never holds a long and a short of one instrument at once.
 */

const EU = 'EUR_USD';
const flat = (t: number) => candle(EU, t, [1.1, 1.1, 1.1, 1.1]);
type Kind = 'netting' | 'fifo' | 'hedging';
const OPTS = { netting: {}, fifo: { fifo: true }, hedging: { hedging: true } } as const;

/** After a long 2000: a sell of `units` with `positionFill` (FOK market): what is open and how the order ended. */
function afterSell(
  kind: Kind,
  positionFill: string,
  units: string,
  tif = 'FOK',
): { long: number; short: number; out: Transaction[] } {
  const h = harness(OPTS[kind]);
  h.submit(market(EU, '2000'));
  h.feed(flat(T0));
  h.submit(market(EU, `-${units}`, { positionFill, timeInForce: tif }));
  const out = h.feed(flat(T0 + MINUTE));
  const { long, short } = h.sim.ledger.position(EU);
  return { long, short, out };
}
const ending = (out: Transaction[]): string => {
  const last = out[out.length - 1]!;
  return last.type === 'ORDER_CANCEL' ? `cancel ${String(f(last, 'reason'))}` : last.type;
};

describe('positionFill per account kind', () => {
  // [kind, positionFill, sell units] → [long, short, how the order ended]
  const table: [Kind, string, string, number, number, string][] = [
    ['netting', 'OPEN_ONLY', '1000', 2000, 0, 'cancel FIFO_VIOLATION'],
    ['fifo', 'OPEN_ONLY', '1000', 2000, 0, 'cancel FIFO_VIOLATION'],
    ['hedging', 'OPEN_ONLY', '1000', 2000, -1000, 'ORDER_FILL'],
    ['netting', 'DEFAULT', '3000', 0, -1000, 'ORDER_FILL'],
    ['fifo', 'DEFAULT', '3000', 0, -1000, 'ORDER_FILL'],
    ['hedging', 'DEFAULT', '1000', 2000, -1000, 'ORDER_FILL'],
    ['netting', 'REDUCE_FIRST', '3000', 0, -1000, 'ORDER_FILL'],
    ['hedging', 'REDUCE_FIRST', '3000', 0, -1000, 'ORDER_FILL'],
    ['netting', 'REDUCE_ONLY', '1500', 500, 0, 'ORDER_FILL'],
    ['hedging', 'REDUCE_ONLY', '1500', 500, 0, 'ORDER_FILL'],
    // Fill or kill: 5000 cannot all reduce a 2000 long, and REDUCE_ONLY opens nothing.
    ['netting', 'REDUCE_ONLY', '5000', 2000, 0, 'cancel POSITION_CLOSEOUT_FAILED'],
    ['hedging', 'REDUCE_ONLY', '5000', 2000, 0, 'cancel POSITION_CLOSEOUT_FAILED'],
  ];
  it.each(table)(
    '%s account, %s sell %s against a long 2000: long %i short %i (%s)',
    (kind, pf, units, long, short, end) => {
      const r = afterSell(kind, pf, units);
      expect([r.long, r.short, ending(r.out)]).toEqual([long, short, end]);
    },
  );

  it('a REDUCE_ONLY IOC sell of 5000 against a long 2000 fills the 2000 that reduce', () => {
    const r = afterSell('netting', 'REDUCE_ONLY', '5000', 'IOC');
    expect([r.long, r.short]).toEqual([0, 0]);
    const fill = r.out.find((t) => t.type === 'ORDER_FILL');
    expect(f(fill, 'units')).toBe('-2000');
  });

  it('a resting OPEN_ONLY limit on a netting account is cancelled when it would open against the position', () => {
    const h = harness();
    h.submit(market(EU, '2000'));
    h.feed(flat(T0));
    h.submit(pending('LIMIT', EU, '-1000', '1.10100', { positionFill: 'OPEN_ONLY' }));
    const out = h.feed(candle(EU, T0 + MINUTE, [1.1, 1.102, 1.1, 1.101]));
    expect(ending(out)).toBe('cancel FIFO_VIOLATION');
    expect(h.sim.ledger.position(EU)).toMatchObject({ long: 2000, short: 0 });
  });

  it('property: a netting account never holds a long and a short at once, whatever the orders', () => {
    const order = fc.record({
      units: fc.integer({ min: -4000, max: 4000 }).filter((u) => u !== 0),
      positionFill: fc.constantFrom('DEFAULT', 'OPEN_ONLY', 'REDUCE_FIRST', 'REDUCE_ONLY'),
      kind: fc.constantFrom('MARKET', 'LIMIT', 'STOP'),
      timeInForce: fc.constantFrom('FOK', 'IOC', 'GTC'),
      offset: fc.integer({ min: 1, max: 30 }),
    });
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(order, { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: -20, max: 20 }), { minLength: 30, maxLength: 30 }),
        (fifo, orders, moves) => {
          const h = harness(fifo ? { fifo: true } : {});
          let px = 1.1;
          for (const [i, o] of orders.entries()) {
            const units = String(o.units);
            if (o.kind === 'MARKET') {
              h.submit(
                market(EU, units, {
                  positionFill: o.positionFill,
                  timeInForce: o.timeInForce === 'GTC' ? 'FOK' : o.timeInForce,
                }),
              );
            } else {
              // A limit below (buy) / above (sell) the market, a stop the other way: some trigger in the candle.
              const away = (o.kind === 'LIMIT' ? -1 : 1) * Math.sign(o.units) * o.offset * 1e-5;
              h.submit(
                pending(o.kind, EU, units, (px + away).toFixed(5), {
                  positionFill: o.positionFill,
                  timeInForce: o.timeInForce,
                }),
              );
            }
            const next = Math.round((px + moves[i]! * 1e-5) * 1e5) / 1e5;
            const hi = Math.max(px, next) + 0.0002;
            const lo = Math.min(px, next) - 0.0002;
            h.feed(candle(EU, T0 + i * MINUTE, [px, hi, lo, next]));
            px = next;
            const { long, short } = h.sim.ledger.position(EU);
            if (long !== 0 && short !== 0) return false;
            let l = 0;
            let s = 0;
            for (const t of h.sim.ledger.trades.values())
              if (t.unitsNum > 0) l++;
              else s++;
            if (l > 0 && s > 0) return false;
          }
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });
});
