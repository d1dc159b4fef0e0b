import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ledger, type LedgerOrder } from '../../domain/ledger.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { SimBroker } from './broker.ts';
import { MINUTE, T0, candle, instruments } from './testkit.ts';

/**
 * The simulator's pending orders are the ledger's (one index: its working orders are filed in
 * `ledger.pendingOrders`), and its on-fill orders get their working orders from the fill's numbers.
 * Pinned here against what a reader of the transactions alone computes: a separate Ledger folding
 * every delivered transaction (as a live portfolio does) files the same orders, in the same order,
 * with the same LedgerOrder fields, after every event; and each on-fill order's level, as the
 * simulator reports it when the order is created, is the price its transaction carries, or for a
 * trailing stop its distance from the current quote.
 */

const EU = 'EUR_USD';
const inst = instruments().get(EU);

type Action =
  | {
      kind: 'market';
      units: number;
      tp?: number;
      tpByPrice: boolean;
      sl?: number;
      slGtd: boolean;
      trail?: number;
      tpClient: boolean;
      tradeClient: boolean;
    }
  | { kind: 'limit'; units: number; offset: number; gtd: boolean; tp?: number; sl?: number; client: boolean }
  | { kind: 'cancelLast' }
  | { kind: 'closeFirst' }
  | { kind: 'replaceSL'; distance: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('market' as const),
    units: fc.integer({ min: -5000, max: 5000 }).filter((u) => u !== 0),
    tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    tpByPrice: fc.boolean(),
    sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    slGtd: fc.boolean(),
    trail: fc.option(fc.integer({ min: 50, max: 120 }), { nil: undefined }),
    tpClient: fc.boolean(),
    tradeClient: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('limit' as const),
    units: fc.integer({ min: -5000, max: 5000 }).filter((u) => u !== 0),
    offset: fc.integer({ min: 1, max: 40 }),
    gtd: fc.boolean(),
    tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    client: fc.boolean(),
  }),
  fc.constant({ kind: 'cancelLast' as const }),
  fc.constant({ kind: 'closeFirst' as const }),
  fc.record({ kind: fc.constant('replaceSL' as const), distance: fc.integer({ min: 10, max: 80 }) }),
);

const stepsArb = fc.array(
  fc.record({
    move: fc.integer({ min: -30, max: 30 }),
    up: fc.integer({ min: 0, max: 25 }),
    down: fc.integer({ min: 0, max: 25 }),
    close: fc.integer({ min: 0, max: 100 }),
    spread: fc.integer({ min: 0, max: 5 }),
    action: fc.option(actionArb, { freq: 2, nil: undefined }),
  }),
  { minLength: 10, maxLength: 80 },
);

/** The LedgerOrder fields of every pending order, in the index's order. */
const view = (l: Ledger): unknown[] =>
  [...l.pendingOrders.values()].map((o: LedgerOrder) => ({
    id: o.id,
    type: o.type,
    created: o.created,
    instrument: o.instrument,
    tradeID: o.tradeID,
    clientExtensions: o.clientExtensions,
  }));

const p = (x: number): string => x.toFixed(5);

describe('one index of pending orders (property)', () => {
  it('the simulator files the orders a ledger folding its transactions files, field for field, and each on-fill order acts at the level its transaction states', () => {
    // What the runs exercised (checked at the end: the property must not hold vacuously).
    const seen = {
      onFill: 0,
      trailing: 0,
      gtd: 0,
      clientOnFill: 0,
      expired: 0,
      linkedCancels: 0,
      maxPending: 0,
    };
    fc.assert(
      fc.property(stepsArb, fc.boolean(), (steps, hedging) => {
        const sim = new SimBroker({
          instruments: instruments(),
          currency: 'USD',
          initialBalance: '100000',
          marginRate: '0.02',
          financing: false,
          hedging,
          commissionPerMillion: '40',
        });
        const reader = new Ledger({ currency: 'USD' });
        const mismatches: string[] = [];
        sim.listen((tx: Transaction) => {
          reader.apply(tx);
          const t = tx as Transaction & { reason?: string; price?: string; distance?: string };
          if (tx.type === 'ORDER_CANCEL') {
            const why = (tx as { reason?: string }).reason;
            if (why === 'TIME_IN_FORCE_EXPIRED') seen.expired++;
            if (why === 'LINKED_TRADE_CLOSED') seen.linkedCancels++;
          }
          seen.maxPending = Math.max(seen.maxPending, sim.ledger.pendingOrders.size);
          if (t.reason !== 'ON_FILL') return;
          seen.onFill++;
          if (tx.type === 'TRAILING_STOP_LOSS_ORDER') seen.trailing++;
          if ((t as { gtdTime?: string }).gtdTime !== undefined) seen.gtd++;
          if ((t as { clientExtensions?: unknown }).clientExtensions !== undefined) seen.clientOnFill++;
          const level = sim.triggerLevel(tx.id);
          const q = sim.quotes.get(EU)!;
          const sells = (sim.ledger.trades.get((t as { tradeID?: string }).tradeID!)?.unitsNum ?? 0) > 0;
          const expected =
            tx.type === 'TRAILING_STOP_LOSS_ORDER'
              ? inst.snap(sells ? q.bid - Number(t.distance) : q.ask + Number(t.distance))
              : Number(t.price);
          if (level !== expected)
            mismatches.push(`${tx.type} ${tx.id}: level ${level}, its transaction says ${expected}`);
        });
        let px = 110000;
        let seq = 0;
        for (let i = 0; i < steps.length; i++) {
          const s = steps[i]!;
          const open = px + s.move;
          const high = open + s.up;
          const low = open - s.down;
          const close = low + Math.round(((high - low) * s.close) / 100);
          px = close;
          const c = candle(
            EU,
            T0 + i * MINUTE,
            [open / 1e5, high / 1e5, low / 1e5, close / 1e5],
            s.spread / 1e5,
          );
          sim.onEvent(c);
          expect(view(sim.ledger)).toEqual(view(reader));
          const a = s.action;
          if (a === undefined) continue;
          const id = `o${++seq}`;
          const mid = (c.bc + c.ac) / 2;
          if (a.kind === 'market') {
            const dir = a.units > 0 ? 1 : -1;
            const r: Record<string, unknown> = {
              type: 'MARKET',
              instrument: EU,
              units: String(a.units),
              clientExtensions: { id },
            };
            if (a.tp !== undefined)
              r.takeProfitOnFill = {
                ...(a.tpByPrice
                  ? { price: p(mid + (dir * (a.tp + 10)) / 1e5) }
                  : { distance: p(a.tp / 1e5) }),
                ...(a.tpClient ? { clientExtensions: { id: `tp-${id}` } } : {}),
              };
            if (a.sl !== undefined)
              r.stopLossOnFill = a.slGtd
                ? {
                    distance: p(a.sl / 1e5),
                    timeInForce: 'GTD',
                    gtdTime: new Date(c.at + 7 * MINUTE).toISOString(),
                  }
                : { distance: p(a.sl / 1e5) };
            if (a.trail !== undefined) r.trailingStopLossOnFill = { distance: p(a.trail / 1e5) };
            if (a.tradeClient) r.tradeClientExtensions = { id: `t-${id}` };
            sim.submit({ kind: 'order', id, request: r } as never);
          } else if (a.kind === 'limit') {
            const r: Record<string, unknown> = {
              type: 'LIMIT',
              instrument: EU,
              units: String(a.units),
              price: p(a.units > 0 ? mid - a.offset / 1e5 : mid + a.offset / 1e5),
            };
            if (a.gtd)
              Object.assign(r, { timeInForce: 'GTD', gtdTime: new Date(c.at + 5 * MINUTE).toISOString() });
            if (a.tp !== undefined) r.takeProfitOnFill = { distance: p(a.tp / 1e5) };
            if (a.sl !== undefined) r.stopLossOnFill = { distance: p(a.sl / 1e5) };
            if (a.client) r.clientExtensions = { id };
            sim.submit({ kind: 'order', id, request: r } as never);
          } else if (a.kind === 'cancelLast') {
            sim.submit({ kind: 'cancel', id, orderSpecifier: `@o${seq - 1}` });
          } else {
            const first = sim.ledger.trades.values().next().value;
            if (first === undefined) continue;
            if (a.kind === 'closeFirst')
              sim.submit({ kind: 'closeTrade', id, tradeSpecifier: first.id, units: 'ALL' });
            else
              sim.submit({
                kind: 'tradeOrders',
                id,
                tradeSpecifier: first.id,
                stopLoss: { distance: p(a.distance / 1e5) },
              });
          }
          expect(view(sim.ledger)).toEqual(view(reader));
        }
        expect(mismatches).toEqual([]);
        // Every pending working order acts (has a level) and every level belongs to a pending order.
        for (const o of sim.ledger.pendingOrders.values())
          if (o.type !== 'MARKET') expect(sim.triggerLevel(o.id)).toBeTypeOf('number');
      }),
      { numRuns: 150 },
    );
    for (const [k, n] of Object.entries(seen)) expect(n, k).toBeGreaterThan(k === 'maxPending' ? 3 : 10);
  });
});
