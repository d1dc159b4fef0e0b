import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MINUTE, T0, candle, harness, instruments, market } from '../adapters/sim/testkit.ts';
import { amount, toUnits } from '../domain/money.ts';
import type { Transaction, TradeReduce } from '../domain/v20/index.ts';
import { Portfolio } from './portfolio.ts';

const EU = 'EUR_USD';
const UJ = 'USD_JPY';

/** Per step: a price move, and what the account does on that candle (nothing, or a market order, hedging or not). */
const stepsArb = fc.array(
  fc.record({
    move: fc.integer({ min: -40, max: 40 }),
    order: fc.option(
      fc.record({
        instrument: fc.constantFrom(EU, UJ),
        units: fc.integer({ min: -3000, max: 3000 }).filter((u) => u !== 0),
        tp: fc.option(fc.integer({ min: 5, max: 40 }), { nil: undefined }),
        sl: fc.option(fc.integer({ min: 5, max: 40 }), { nil: undefined }),
      }),
      { nil: undefined },
    ),
  }),
  { minLength: 5, maxLength: 80 },
);

/**
 * The trades closed in full, computed from the raw transactions alone: a trade's realized P/L and
 * financing are the sums of its TradeReduce entries; it closes when its units reach zero.
 */
function closedFromTransactions(
  txs: readonly Transaction[],
): { id: string; units: number; realizedPL: number; closePrice: number }[] {
  const open = new Map<string, { units: number; initial: number; pl: bigint | number }>();
  const out: { id: string; units: number; realizedPL: number; closePrice: number }[] = [];
  for (const tx of txs) {
    if (tx.type !== 'ORDER_FILL') continue;
    const reduces: TradeReduce[] = [
      ...(tx.tradesClosed ?? []),
      ...(tx.tradeReduced ? [tx.tradeReduced] : []),
    ];
    for (const r of reduces) {
      const t = open.get(r.tradeID)!;
      t.units = Math.round((t.units + Number(r.units)) * 1e6) / 1e6;
      t.pl = Number(t.pl) + Number(amount(r.realizedPL ?? '0'));
      if (t.units === 0) {
        out.push({
          id: r.tradeID,
          units: t.initial,
          realizedPL: toUnits(Number(t.pl)),
          closePrice: Number(r.price ?? tx.price),
        });
        open.delete(r.tradeID);
      }
    }
    if (tx.tradeOpened)
      open.set(tx.tradeOpened.tradeID, {
        units: Number(tx.tradeOpened.units),
        initial: Number(tx.tradeOpened.units),
        pl: 0,
      });
  }
  return out;
}

describe('Portfolio over the simulator ledger (shared, as in backtests)', () => {
  it('keeps the same closed trades, balance and exposure as a portfolio folding the transactions itself, and both match the raw transactions (property)', () => {
    let closed = 0;
    fc.assert(
      fc.property(stepsArb, fc.boolean(), (steps, hedging) => {
        const h = harness({ hedging });
        const own = new Portfolio({ currency: 'USD', instruments: instruments(), initialBalance: '100000' });
        const shared = new Portfolio({
          currency: 'USD',
          instruments: instruments(),
          initialBalance: '100000',
          ledger: h.sim.ledger,
          shared: true,
        });
        // The same, fed the simulator's notes (as the engine in a backtest): a fill's numbers, no object read.
        const noted = new Portfolio({
          currency: 'USD',
          instruments: instruments(),
          initialBalance: '100000',
          ledger: h.sim.ledger,
          shared: true,
        });
        h.sim.listenNotes((n) => expect(noted.applyNote(n)).toBe(true));
        // The account's CREATE and deposit were emitted at start: the own fold takes them; the shared
        // portfolio starts from its ledger's state, which holds them already.
        for (const tx of h.txs) {
          expect(own.apply(tx)).toBe(true);
          expect(shared.apply(tx)).toBe(false);
        }
        h.sim.transactions$.subscribe((tx) => {
          // The simulator folded tx into its ledger already: the shared portfolio does not fold it again.
          expect(own.apply(tx)).toBe(true);
          expect(shared.apply(tx)).toBe(true);
          expect(shared.apply(tx)).toBe(false); // a repeat is recognized
        });
        let eu = 1.1;
        let uj = 150;
        steps.forEach((s, i) => {
          eu = Math.round((eu + s.move / 1e5) * 1e5) / 1e5;
          uj = Math.round((uj + s.move / 1e3) * 1e3) / 1e3;
          const t = T0 + i * MINUTE;
          for (const [name, o, pip] of [
            [EU, eu, 1e-5],
            [UJ, uj, 1e-3],
          ] as const) {
            const c = candle(name, t, [o, o + 20 * pip, o - 20 * pip, o + (s.move % 7) * pip], 2 * pip);
            h.sim.onEvent(c);
            own.mark(c);
            shared.mark(c);
            noted.mark(c);
          }
          if (s.order) {
            const pip = s.order.instrument === EU ? 1e-4 : 1e-2;
            const extra: Record<string, unknown> = {};
            if (s.order.tp !== undefined)
              extra.takeProfitOnFill = { distance: (s.order.tp * pip).toFixed(5) };
            if (s.order.sl !== undefined) extra.stopLossOnFill = { distance: (s.order.sl * pip).toFixed(5) };
            h.sim.submit(market(s.order.instrument, String(s.order.units), extra));
          }
        });
        own.finish();
        shared.finish();
        noted.finish();
        expect(noted.closedTrades).toEqual(own.closedTrades);
        expect(noted.tradeStats).toEqual(own.tradeStats);
        expect([noted.balance, noted.nav, noted.exposureMs]).toEqual([own.balance, own.nav, own.exposureMs]);
        expect(noted.equity).toEqual(own.equity);
        expect(shared.ledger).toBe(h.sim.ledger);
        expect(shared.closedTrades).toEqual(own.closedTrades);
        expect(shared.balance).toBe(own.balance);
        expect(shared.nav).toBe(own.nav);
        expect(shared.exposureMs).toBe(own.exposureMs);
        expect(shared.equity).toEqual(own.equity);
        expect(own.ledger.balance).toBe(h.sim.ledger.balance);
        const expected = closedFromTransactions(h.txs);
        expect(
          shared.closedTrades.map((t) => ({
            id: t.id,
            units: t.units,
            realizedPL: t.realizedPL,
            closePrice: t.closePrice,
          })),
        ).toEqual(expected);
        closed += expected.length;
      }),
      { numRuns: 150 },
    );
    // The runs closed trades (by TP, SL and reducing orders), so the comparison above had something to compare.
    expect(closed).toBeGreaterThan(40); // about 1 to 2 per run; the runs are random
  });

  it('MAE, MFE and run-up of each closed trade equal an independent scan of the candles marked while it was open (property)', () => {
    let checked = 0;
    fc.assert(
      fc.property(stepsArb, (steps) => {
        // Hedging: orders only open trades, so a trade's units are constant until its TP or SL closes it.
        const h = harness({ hedging: true });
        const p = new Portfolio({
          currency: 'USD',
          instruments: instruments(),
          initialBalance: '100000',
          ledger: h.sim.ledger,
          shared: true,
        });
        h.sim.transactions$.subscribe((tx) => p.apply(tx));
        const candles: { time: number; at: number; bh: number; bl: number; ah: number; al: number }[] = [];
        let eu = 1.1;
        steps.forEach((s, i) => {
          eu = Math.round((eu + s.move / 1e5) * 1e5) / 1e5;
          const c = candle(
            EU,
            T0 + i * MINUTE,
            [eu, eu + (15 + (i % 9)) * 1e-5, eu - (12 + (i % 5)) * 1e-5, eu + (s.move % 7) * 1e-5],
            2e-5,
          );
          h.sim.onEvent(c);
          p.mark(c);
          candles.push({ time: c.time, at: c.at, bh: c.bh, bl: c.bl, ah: c.ah, al: c.al });
          if (s.order)
            h.sim.submit(
              market(EU, String(s.order.units), {
                takeProfitOnFill: { distance: ((s.order.tp ?? 10) * 1e-5).toFixed(5) },
                stopLossOnFill: { distance: ((s.order.sl ?? 10) * 1e-5).toFixed(5) },
              }),
            );
        });
        for (const t of p.closedTrades) {
          // Marked while open: the candles that started at or after its fill and ended by its close.
          const seen = candles.filter((c) => c.time >= t.openTime && c.at <= t.closeTime);
          const long = t.units > 0;
          const pls = seen.map((c) => [
            ((long ? c.bl : c.ah) - t.openPrice) * t.units,
            ((long ? c.bh : c.al) - t.openPrice) * t.units,
          ]);
          const mae = Math.min(0, t.realizedPL, ...pls.map((x) => x[0]!));
          const mfe = Math.max(0, t.realizedPL, ...pls.map((x) => x[1]!));
          const moves = seen.map((c) => (long ? c.bh - t.openPrice : t.openPrice - c.al));
          const runUp =
            (Math.max(0, long ? t.closePrice - t.openPrice : t.openPrice - t.closePrice, ...moves) /
              t.openPrice) *
            100;
          expect(t.mae).toBeCloseTo(mae, 4);
          expect(t.mfe).toBeCloseTo(mfe, 4);
          expect(t.runUpPct).toBeCloseTo(runUp, 4);
          expect(t.mae).toBeLessThanOrEqual(Math.min(0, t.realizedPL));
          expect(t.mfe).toBeGreaterThanOrEqual(Math.max(0, t.realizedPL));
          checked++;
        }
      }),
      { numRuns: 120 },
    );
    expect(checked).toBeGreaterThan(100);
  });

  it('refuses to share without a ledger', () => {
    expect(
      () => new Portfolio({ currency: 'USD', instruments: instruments(), initialBalance: '0', shared: true }),
    ).toThrow(/shared needs the ledger/);
  });
});
