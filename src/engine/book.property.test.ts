import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/candle.ts';
import { withTag, type OrderIntent } from '../domain/intents.ts';
import type { Ledger } from '../domain/ledger.ts';
import { toUnits } from '../domain/money.ts';
import type { SimBrokerOptions } from '../adapters/sim/broker.ts';
import { MINUTE, T0, candle, harness, instruments } from '../adapters/sim/testkit.ts';
import { Books } from './book.ts';

/**
 * Issue 37: the books add up to the account, whatever the strategies do and however their orders
 * interleave. Two strategies (A, B) send random market orders (some with a take profit, a stop loss
 * or a trailing stop), close their own trades by ID and their own positions, and now and then the
 * account is flattened by nobody's order (a kill switch); a real simulated account (netting, netting
 * with each strategy's orders netted apart, hedging, FIFO) fills them over a random walk. After
 * every step: per instrument the books' net units add up to the account's, and the books' P/L
 * (balance less deposit, plus unrealized at the last mid prices) adds up to the account's, to the
 * rounding of one 1/10,000 unit per fill. (At closing prices it would not: units two books hold on
 * opposite sides, which a netting account nets away, are each marked at their own closing side.)
 */
const EU = 'EUR_USD';
const GU = 'GBP_USD';

type Step =
  | { kind: 'market'; who: 0 | 1; inst: 0 | 1; units: number; tp?: number; sl?: number; trail?: number }
  | { kind: 'closeTrade'; who: 0 | 1; pick: number }
  | { kind: 'closePosition'; who: 0 | 1; inst: 0 | 1 }
  | { kind: 'flatten'; inst: 0 | 1 };

const who = fc.constantFrom(0 as const, 1 as const);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        kind: fc.constant('market' as const),
        who,
        inst: who,
        units: fc.integer({ min: -3000, max: 3000 }).filter((u) => u !== 0),
        tp: fc.integer({ min: 5, max: 40 }),
        sl: fc.integer({ min: 5, max: 40 }),
        trail: fc.integer({ min: 50, max: 100 }),
      },
      { requiredKeys: ['kind', 'who', 'inst', 'units'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('closeTrade' as const), who, pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('closePosition' as const), who, inst: who }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flatten' as const), inst: who }) },
);

const walkArb = fc.array(
  fc.record({ move: fc.integer({ min: -25, max: 25 }), up: fc.nat(15), down: fc.nat(15), spread: fc.nat(3) }),
  { minLength: 10, maxLength: 40 },
);

const NAMES = ['A', 'B'] as const;

function check(
  steps: readonly (Step | undefined)[],
  walk: readonly { move: number; up: number; down: number; spread: number }[],
  opts: Partial<SimBrokerOptions>,
  netByTag: boolean,
): void {
  const h = harness({ ...opts, netByTag, marketHours: false });
  const books = new Books([...NAMES], {
    currency: 'USD',
    instruments: instruments(),
    initialBalance: '100000',
    hedging: opts.hedging === true && opts.fifo !== true,
  });
  const ledger = (h.sim as unknown as { ledger: Ledger }).ledger;
  let routed = 0;
  const route = (): void => {
    for (; routed < h.txs.length; routed++) books.route(h.txs[routed]!);
  };
  route();
  const last = new Map<string, Candle>();
  let px = [110000, 127000];
  let n = 0;
  let fills = 0;
  for (let i = 0; i < walk.length; i++) {
    const w = walk[i]!;
    for (const [k, inst] of [EU, GU].entries()) {
      const open = px[k]! + (k === 0 ? w.move : -w.move);
      const c = candle(
        inst,
        T0 + i * MINUTE,
        [open / 1e5, (open + w.up) / 1e5, (open - w.down) / 1e5, (open + w.up - w.down) / 1e5],
        w.spread / 1e5,
      );
      px[k] = open + w.up - w.down;
      last.set(inst, c);
      h.feed(c);
      route();
    }
    const s = steps[i];
    if (s !== undefined) {
      const intent = intentOf(s, books, ++n);
      if (intent) {
        h.submit(intent);
        route();
      }
    }
    fills = h.txs.filter((t) => t.type === 'ORDER_FILL').length;
    // The books' units add up to the account's, per instrument.
    for (const inst of [EU, GU]) {
      const acc = ledger.position(inst);
      let sum = 0;
      for (const b of books.books) {
        const p = b.portfolio.ledger.position(inst);
        sum += p.long + p.short;
      }
      expect(sum).toBe(acc.long + acc.short);
    }
    // The books' P/L at mid adds up to the account's (deposit given to every book in full).
    const pl = (l: Ledger): number => {
      let u = 0;
      for (const t of l.trades.values()) {
        const c = last.get(t.instrument)!;
        u += ((c.bc + c.ac) / 2 - t.priceNum) * t.unitsNum;
      }
      return toUnits(l.balance) - 100_000 + u;
    };
    let sumPL = 0;
    for (const b of books.books) sumPL += pl(b.portfolio.ledger);
    expect(Math.abs(sumPL - pl(ledger))).toBeLessThanOrEqual(0.0001 * (fills + 1) + 1e-9);
  }
}

function intentOf(s: Step, books: Books, n: number): OrderIntent | undefined {
  const p = (x: number): string => x.toFixed(5);
  switch (s.kind) {
    case 'market': {
      const inst = s.inst === 0 ? EU : GU;
      const req: Record<string, unknown> = { type: 'MARKET', instrument: inst, units: String(s.units) };
      if (s.tp !== undefined) req.takeProfitOnFill = { distance: p(s.tp / 1e5) };
      if (s.sl !== undefined) req.stopLossOnFill = { distance: p(s.sl / 1e5) };
      if (s.trail !== undefined && s.sl === undefined)
        req.trailingStopLossOnFill = { distance: p(s.trail / 1e5) };
      const name = NAMES[s.who];
      return withTag({ kind: 'order', id: `${name}-${n}`, request: req as never }, name);
    }
    case 'closeTrade': {
      const name = NAMES[s.who];
      const trades = [...books.book(name).portfolio.ledger.trades.values()];
      if (trades.length === 0) return undefined;
      return {
        kind: 'closeTrade',
        id: `${name}-${n}`,
        tradeSpecifier: trades[s.pick % trades.length]!.id,
        units: 'ALL',
      };
    }
    case 'closePosition': {
      // A strategy's close of its own position: an order for the opposite of its book's net units.
      const name = NAMES[s.who];
      const inst = s.inst === 0 ? EU : GU;
      const pos = books.book(name).portfolio.ledger.position(inst);
      const net = pos.long + pos.short;
      if (net === 0) return undefined;
      return withTag(
        {
          kind: 'order',
          id: `${name}-${n}`,
          request: {
            type: 'MARKET',
            instrument: inst,
            units: String(-net),
            positionFill: 'REDUCE_FIRST',
          } as never,
        },
        name,
      );
    }
    case 'flatten':
      return {
        kind: 'closePosition',
        id: `fxflow-kill-${n}`,
        instrument: s.inst === 0 ? EU : GU,
        longUnits: 'ALL',
        shortUnits: 'ALL',
      };
  }
}

const scenario = fc.tuple(
  fc.array(fc.option(stepArb, { freq: 3, nil: undefined }), { minLength: 40, maxLength: 40 }),
  walkArb,
);

describe('the books add up to the account for any interleaving of two strategies’ orders', () => {
  it.each([
    ['netting (the strategies reduce each other’s trades)', {}, false],
    ['netting, each strategy netted apart (a portfolio backtest’s account)', {}, true],
    ['hedging', { hedging: true }, false],
    ['FIFO', { fifo: true }, false],
  ] as const)('%s', (_name, opts, netByTag) => {
    fc.assert(
      fc.property(scenario, ([steps, walk]) => check(steps, walk, opts, netByTag)),
      { numRuns: 150 },
    );
  });

  it('on a hedging account every book gets the account’s own fills (no P/L of its own making)', () => {
    fc.assert(
      fc.property(scenario, ([steps, walk]) => {
        const h = harness({ hedging: true, marketHours: false });
        const books = new Books([...NAMES], {
          currency: 'USD',
          instruments: instruments(),
          initialBalance: '100000',
          hedging: true,
        });
        const ledger = (h.sim as unknown as { ledger: Ledger }).ledger;
        let routed = 0;
        let n = 0;
        for (let i = 0; i < walk.length; i++) {
          const c = candle(
            EU,
            T0 + i * MINUTE,
            [1.1, 1.1 + walk[i]!.up / 1e5, 1.1 - walk[i]!.down / 1e5, 1.1],
            0,
          );
          h.feed(c);
          const s = steps[i];
          if (s !== undefined && s.kind === 'market') h.submit(intentOf({ ...s, inst: 0 }, books, ++n)!);
          for (; routed < h.txs.length; routed++) books.route(h.txs[routed]!);
        }
        // Each account trade is in the book of the strategy that opened it, with the same units.
        for (const t of ledger.trades.values()) {
          const owner = books.tradeOwner(t.id)!;
          expect(books.book(owner).portfolio.ledger.trades.get(t.id)?.unitsNum).toBe(t.unitsNum);
        }
        let realized = 0;
        for (const b of books.books) realized += toUnits(b.portfolio.ledger.pl);
        expect(realized).toBeCloseTo(toUnits(ledger.pl), 4);
      }),
      { numRuns: 100 },
    );
  });
});
