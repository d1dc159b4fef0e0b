import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { Ledger } from '../../domain/ledger.ts';
import { parseTime } from '../../domain/time.ts';
import type { TransactionNote } from '../../domain/transaction-note.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { SimBroker, type SimBrokerOptions } from './broker.ts';
import { MINUTE, T0, candle, instruments, market } from './testkit.ts';

/**
 * Fills as notes (fill.ts FillNote): the simulator folds a fill into its ledger from the numbers it
 * computed, and builds the ORDER_FILL object only when a listener asks for it. Counted by the
 * simulator's own `stats.fillObjects`; the fold from numbers is checked against a ledger folding the
 * objects (the path live accounts take), the note's fields against the object's.
 */

const EU = 'EUR_USD';

/** What a ledger holds, as plain data (trades in their order, with every field). */
function snapshot(l: Ledger): unknown {
  return {
    balance: l.balance,
    pl: l.pl,
    financing: l.financing,
    commission: l.commission,
    fees: l.guaranteedExecutionFees,
    halfSpreadCost: l.halfSpreadCost,
    lastTransactionID: l.lastTransactionID,
    applied: l.applied,
    trades: [...l.trades.values()].map((t) => ({ ...t })),
    instrumentPL: [...l.instrumentPL],
    pending: [...l.pendingOrders.keys()],
  };
}

interface Step {
  units: number;
  tp?: number;
  sl?: number;
  trail?: number;
}

/** A random walk of candles (prices in 0.00001 units), and an order (or none) before each. */
function run(
  walk: readonly number[],
  steps: readonly (Step | undefined)[],
  listen: (sim: SimBroker) => void,
  opts: Partial<SimBrokerOptions> = {},
): SimBroker {
  const sim = new SimBroker({
    instruments: instruments(),
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
    commissionPerMillion: '45',
    ...opts,
  });
  listen(sim);
  sim.start(T0 - MINUTE);
  let px = 110000;
  for (let i = 0; i < walk.length; i++) {
    const st = steps[i];
    if (st !== undefined) {
      const extra: Record<string, unknown> = {};
      if (st.tp !== undefined) extra.takeProfitOnFill = { distance: (st.tp / 1e5).toFixed(5) };
      if (st.sl !== undefined) extra.stopLossOnFill = { distance: (st.sl / 1e5).toFixed(5) };
      if (st.trail !== undefined) extra.trailingStopLossOnFill = { distance: (st.trail / 1e5).toFixed(5) };
      sim.submit(market(EU, String(st.units), { ...extra, clientExtensions: { id: `c${i}` } }));
    }
    const open = px;
    px += walk[i]!;
    const high = Math.max(open, px) + 4;
    const low = Math.min(open, px) - 4;
    const c: Candle = candle(EU, T0 + i * MINUTE, [open / 1e5, high / 1e5, low / 1e5, px / 1e5], 0.00015);
    sim.onEvent(c);
  }
  return sim;
}

/** A reversal every 5 candles with all three exits: fills that open, close in full, and reduce. */
const WALK = Array.from({ length: 400 }, (_, i) => Math.round(Math.sin(i / 7) * 12 + ((i * 7919) % 11) - 5));
const STEPS: (Step | undefined)[] = WALK.map((_, i) =>
  i % 5 === 0
    ? { units: (i % 10 === 0 ? 1 : -1) * (1000 + (i % 3) * 500), tp: 40, sl: 30, trail: 60 }
    : undefined,
);

describe('fills as notes', () => {
  it('with only listeners of notes, builds no ORDER_FILL object; its ledger is the fold of the objects another run delivers', () => {
    const notes: unknown[] = [];
    const bare = run(WALK, STEPS, (sim) =>
      sim.listenNotes((n: TransactionNote) => {
        if (n.type === 'ORDER_FILL') notes.push([n.id, n.idNum, n.orderID, n.reason, n.price, n.at]);
      }),
    );
    const objects: Transaction[] = [];
    const read = run(WALK, STEPS, (sim) => sim.listen((tx) => objects.push(tx)));
    expect(bare.stats.fills).toBeGreaterThan(50);
    expect(bare.stats.fillObjects).toBe(0);
    expect(read.stats.fillObjects).toBe(read.stats.fills);
    // Closing fills and reducing fills both occurred (the numbers' fold covers each part kind).
    const fills = objects.filter(
      (t): t is Extract<Transaction, { type: 'ORDER_FILL' }> => t.type === 'ORDER_FILL',
    );
    expect(fills.some((t) => t.tradesClosed !== undefined)).toBe(true);
    expect(fills.some((t) => t.tradeOpened !== undefined && t.tradesClosed !== undefined)).toBe(true);
    // The note carries what the object says.
    expect(notes).toEqual(
      fills.map((t) => [t.id, Number(t.id), t.orderID, t.reason, Number(t.price), parseTime(t.time)]),
    );
    // Folded from numbers (both simulators) = folded from the objects, parsed (a ledger of its own).
    const parsed = new Ledger({ currency: 'USD' });
    for (const tx of objects) parsed.apply(tx);
    expect(snapshot(bare.ledger)).toEqual(snapshot(read.ledger));
    const own = snapshot(parsed) as { trades: Record<string, unknown>[] };
    expect(snapshot(bare.ledger)).toEqual(own);
  });

  it('builds each fill object once, shared by every reader, and only for the deliveries asked', () => {
    const a: Transaction[] = [];
    const b: Transaction[] = [];
    const asked: Transaction[] = [];
    let fillNotes = 0;
    const sim = run(WALK, STEPS, (s) => {
      s.listen((tx) => a.push(tx));
      s.listenNotes((n) => {
        if (n.type !== 'ORDER_FILL') return;
        fillNotes++;
        // A note reader asks for every other fill's object: the one the object listeners got.
        if (fillNotes % 2 === 0) asked.push(n.transaction());
      });
      s.listen((tx) => b.push(tx));
    });
    expect(sim.stats.fillObjects).toBe(sim.stats.fills);
    expect(b).toEqual(a);
    for (let i = 0; i < a.length; i++) expect(b[i]).toBe(a[i]);
    const fillsA = a.filter((t) => t.type === 'ORDER_FILL');
    expect(asked).toHaveLength(Math.floor(fillNotes / 2));
    for (let i = 0; i < asked.length; i++) expect(asked[i]).toBe(fillsA[2 * i + 1]);

    // Notes alone, asking for one fill in three: as many objects as asked.
    let n = 0;
    let got = 0;
    const some = run(WALK, STEPS, (s) =>
      s.listenNotes((note) => {
        if (note.type === 'ORDER_FILL' && n++ % 3 === 0) {
          note.transaction();
          note.transaction(); // a second call of one delivery builds nothing
          got++;
        }
      }),
    );
    expect(some.stats.fillObjects).toBe(got);
    expect(got).toBe(Math.ceil(some.stats.fills / 3));
  });

  it('keeps the fold from numbers equal to the fold of the objects, whatever the orders (property)', () => {
    const stepArb: fc.Arbitrary<Step | undefined> = fc.option(
      fc.record({
        units: fc.integer({ min: -4000, max: 4000 }).filter((u) => u !== 0),
        tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
        sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
        trail: fc.option(fc.integer({ min: 50, max: 120 }), { nil: undefined }), // v20's minimum: 5 pips
      }),
      { freq: 3, nil: undefined },
    );
    let fills = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -25, max: 25 }), { minLength: 10, maxLength: 80 }),
        fc.array(stepArb, { minLength: 80, maxLength: 80 }),
        fc.boolean(),
        (walk, steps, hedging) => {
          const bare = run(walk, steps, (s) => s.listenNotes(() => {}), { hedging });
          const objects: Transaction[] = [];
          const read = run(walk, steps, (s) => s.listen((tx) => objects.push(tx)), { hedging });
          const parsed = new Ledger({ currency: 'USD' });
          for (const tx of objects) parsed.apply(tx);
          expect(bare.stats.fillObjects).toBe(0);
          expect(read.stats.fillObjects).toBe(read.stats.fills);
          expect(snapshot(bare.ledger)).toEqual(snapshot(parsed));
          fills += bare.stats.fills;
        },
      ),
      { numRuns: 60 },
    );
    expect(fills).toBeGreaterThan(300); // the cases filled orders
  });
});
