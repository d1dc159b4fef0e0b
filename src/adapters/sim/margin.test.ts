import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Tick } from '../../domain/tick.ts';
import { f, harness, instruments, market, T0 } from './testkit.ts';

const EU = 'EUR_USD';
const tick = (i: number, bid: number, spread = 0.0002): Tick => ({
  kind: 'tick',
  instrument: EU,
  at: T0 + i * 1000,
  bid: Math.round(bid * 1e5) / 1e5,
  ask: Math.round((bid + spread) * 1e5) / 1e5,
});

describe('margin call and margin closeout', () => {
  it('enters a margin call when NAV falls below the margin used, and closes out at half of it', () => {
    const h = harness({ initialBalance: '1000' }, T0 - 1000);
    h.submit(market(EU, '10000'));
    h.feed(tick(0, 1.1) as never);
    expect(h.sim.ledger.trades.size).toBe(1);
    // Margin used = 10,000 × mid × 0.05 (EUR_USD's 5% is stricter than the account's 2%): 550 at 1.1.
    let out = h.feed(tick(1, 1.05) as never); // loss ≈ 502: NAV ≈ 498 < margin ≈ 525
    expect(out.map((t) => t.type)).toEqual(['MARGIN_CALL_ENTER']);
    out = h.feed(tick(2, 1.08) as never); // NAV back above the margin used
    expect(out.map((t) => t.type)).toEqual(['MARGIN_CALL_EXIT']);
    h.feed(tick(3, 1.05) as never);
    out = h.feed(tick(4, 1.02) as never); // loss ≈ 802: NAV ≈ 198 ≤ 255 (half the margin)
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['MARKET_ORDER', 'MARGIN_CLOSEOUT'],
      ['ORDER_FILL', 'MARKET_ORDER_MARGIN_CLOSEOUT'],
      ['MARGIN_CALL_EXIT', undefined],
    ]);
    expect(f(out[0], 'marginCloseout')).toEqual({ reason: 'MARGIN_CHECK_VIOLATION' });
    expect(f(out[1], 'price')).toBe('1.02000');
    expect(h.sim.ledger.trades.size).toBe(0);
    expect(h.sim.stats.marginCloseouts).toBe(1);
  });

  it('closes out exactly when the closeout NAV reaches half the margin used (property)', () => {
    const rate = instruments().get(EU).marginRate;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -40, max: 25 }), { minLength: 5, maxLength: 200 }),
        fc.integer({ min: 600, max: 3000 }),
        (steps, balance) => {
          const h = harness({ initialBalance: String(balance) }, T0 - 1000);
          h.submit(market(EU, '10000'));
          let bid = 1.1;
          h.feed(tick(0, bid) as never);
          const trade = [...h.sim.ledger.trades.values()][0]!;
          let closedAt = -1;
          for (const [i, s] of steps.entries()) {
            bid = Math.max(0.5, bid + s / 10_000);
            const k = tick(i + 1, bid);
            // Independent computation, from the trade and the tick: NAV on the closing side, margin at mid.
            const nav = balance + (k.bid - trade.priceNum) * 10_000;
            const margin = 10_000 * ((k.bid + k.ask) / 2) * Math.max(0.02, rate);
            const out = h.feed(k as never);
            const closed = out.some((t) => f(t, 'reason') === 'MARKET_ORDER_MARGIN_CLOSEOUT');
            expect(closed).toBe(closedAt < 0 && nav <= margin / 2 + 1e-9);
            if (closed) closedAt = i;
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
