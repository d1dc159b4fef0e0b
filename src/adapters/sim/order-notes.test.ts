import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TransactionNote } from '../../domain/transaction-note.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { transactionJson } from '../../domain/v20/transaction-json.ts';
import { SimBroker } from './broker.ts';
import type { SimOrder, WorkingOrder } from './orders.ts';
import { MINUTE, T0, candle, instruments, market } from './testkit.ts';

/**
 * Order-creating transactions as notes (order-notes.ts, orders.ts `WorkingOrder`): a MARKET_ORDER
 * and the common on-fill orders are folded and delivered as values, their objects built only when
 * a reader asks, once, the same object for the note's reader and the pending order's `created`;
 * and the objects, and transactions.jsonl's lines of them, are the bytes the simulator wrote before
 * (a hash pinned from the build before this change).
 */

const EU = 'EUR_USD';

/**
 * Reversals every 5 candles with TP (by distance, or by price every 15th), SL (GTD every 20th) and
 * trailing stop, client IDs and tags, a client trade ID with a quoted comment every 25th, position
 * closes and trade closes: market orders of all three reasons, on-fill orders common and not.
 */
function scenario(hedging: boolean, listen: (sim: SimBroker) => void, candles = 600): SimBroker {
  const sim = new SimBroker({
    instruments: instruments(),
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
    commissionPerMillion: '45',
    hedging,
  });
  listen(sim);
  sim.start(T0 - MINUTE);
  let px = 110000;
  for (let i = 0; i < candles; i++) {
    if (i % 5 === 0) {
      const units = (i % 10 === 0 ? 1 : -1) * (1000 + (i % 3) * 500);
      const extra: Record<string, unknown> = {
        takeProfitOnFill:
          i % 15 === 0
            ? { price: ((px + (units > 0 ? 40 : -40)) / 1e5).toFixed(5) }
            : { distance: '0.00040' },
        stopLossOnFill: {
          distance: '0.00030',
          ...(i % 20 === 0
            ? { timeInForce: 'GTD', gtdTime: new Date(T0 + (i + 30) * MINUTE).toISOString() }
            : {}),
        },
        trailingStopLossOnFill: { distance: '0.00060' },
      };
      if (i % 25 === 0) extra.tradeClientExtensions = { id: `t${i}`, comment: 'a "quoted" one' };
      sim.submit(market(EU, String(units), { ...extra, clientExtensions: { id: `c${i}`, tag: 'x' } }));
    }
    if (i % 35 === 17) sim.submit({ kind: 'closePosition', id: `p${i}`, instrument: EU, longUnits: 'ALL' });
    if (i % 45 === 22) {
      const t = sim.ledger.trades.values().next().value;
      if (t) sim.submit({ kind: 'closeTrade', id: `x${i}`, tradeSpecifier: t.id, units: 'ALL' });
    }
    const open = px;
    px += Math.round(Math.sin(i / 7) * 12 + ((i * 7919) % 11) - 5);
    sim.onEvent(
      candle(
        EU,
        T0 + i * MINUTE,
        [open / 1e5, (Math.max(open, px) + 4) / 1e5, (Math.min(open, px) - 4) / 1e5, px / 1e5],
        0.00015,
      ),
    );
  }
  return sim;
}

/** sha256 of every transaction's JSON.stringify text, one line each, of the scenario on the build before order notes. */
const PINNED = {
  netting: 'a08557f5a6556ba7bff635c63ea4995fb53a313336b25092174648a11b92f00a',
  hedging: '9818bbf7ee50aba5a271958a2897e921a186fe47249293a5056de3d55959b03f',
};

/** Candles after which the scenario's netting account has a trade with its three exits pending. */
const CUT = 406;

const CREATES = ['MARKET_ORDER', 'TAKE_PROFIT_ORDER', 'STOP_LOSS_ORDER', 'TRAILING_STOP_LOSS_ORDER'];

describe('order-creating transactions as notes', () => {
  for (const hedging of [false, true]) {
    const account = hedging ? 'hedging' : 'netting';
    it(`${account}: the objects and transactions.jsonl's lines are the bytes of the build before`, () => {
      const stringified = createHash('sha256');
      const written = createHash('sha256');
      const types = new Set<string>();
      scenario(hedging, (sim) =>
        sim.listen((tx) => {
          types.add(tx.type);
          stringified.update(`${JSON.stringify(tx)}\n`);
          written.update(`${transactionJson(tx)}\n`);
        }),
      );
      for (const t of CREATES) expect(types).toContain(t);
      expect(stringified.digest('hex')).toBe(PINNED[account]);
      expect(written.digest('hex')).toBe(PINNED[account]);
    });
  }

  it('with only listeners of notes, builds no order object; the notes say what the objects say', () => {
    const fromNotes: unknown[] = [];
    const bare = scenario(false, (sim) =>
      sim.listenNotes((n: TransactionNote) => {
        if (CREATES.includes(n.type))
          fromNotes.push([n.type, n.id, n.idNum, n.at, n.reason, n.orderID, n.clientExtensionsID]);
      }),
    );
    const fromObjects: unknown[] = [];
    const read = scenario(false, (sim) =>
      sim.listen((tx) => {
        if (!CREATES.includes(tx.type)) return;
        const t = tx as Transaction & {
          reason?: string;
          orderID?: string;
          clientExtensions?: { id?: string };
        };
        fromObjects.push([
          t.type,
          t.id,
          Number(t.id),
          Date.parse(t.time),
          t.reason,
          t.orderID,
          t.clientExtensions?.id,
        ]);
      }),
    );
    expect(fromNotes.length).toBeGreaterThan(300);
    expect(bare.stats.orderObjects).toBe(0);
    expect(read.stats.orderObjects).toBeGreaterThan(300);
    expect(fromNotes).toEqual(fromObjects);
    // The same account either way.
    expect(bare.ledger.balance).toBe(read.ledger.balance);
    expect([...bare.ledger.pendingOrders.keys()]).toEqual([...read.ledger.pendingOrders.keys()]);
  });

  it('builds an order object once, when asked: the pending order and the note give the same object', () => {
    const delivered = new Map<string, Transaction>();
    const sim = scenario(
      false,
      (s) =>
        s.listenNotes((n) => {
          // Only the on-fill orders' notes are asked, every other time.
          if (n.type.endsWith('STOP_LOSS_ORDER') && n.idNum % 2 === 0) delivered.set(n.id, n.transaction());
        }),
      CUT,
    );
    // Built from values: the common on-fill orders (the others, with a GTD time or client IDs, are built at once).
    const common = (t: Transaction): boolean =>
      !('gtdTime' in t) && !('clientTradeID' in t) && !('clientExtensions' in t);
    expect(sim.stats.orderObjects).toBe([...delivered.values()].filter(common).length);
    expect(sim.stats.orderObjects).toBeGreaterThan(20);
    const pending = [...sim.ledger.pendingOrders.values()] as SimOrder[];
    expect(pending.length).toBeGreaterThan(0);
    for (const o of pending) {
      const asked = delivered.get(o.id);
      if (asked !== undefined) expect(o.created).toBe(asked);
    }
    // Reading a pending order's transaction builds it then, once.
    const idle = scenario(false, (s) => s.listenNotes(() => {}), CUT);
    const waiting = [...idle.ledger.pendingOrders.values()] as WorkingOrder[];
    const unbuilt = waiting.filter((o) => !o.createdBuilt);
    expect(unbuilt.length).toBeGreaterThan(0);
    expect(idle.stats.orderObjects).toBe(0);
    for (const o of unbuilt) expect(o.created).toBe(o.created);
    expect(idle.stats.orderObjects).toBe(unbuilt.length);
    expect(waiting.every((o) => o.createdBuilt)).toBe(true);
  });
});
