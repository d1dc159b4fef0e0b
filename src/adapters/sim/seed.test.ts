import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { formatAmount } from '../../domain/money.ts';
import { formatTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { SandboxAccount } from '../../sandbox/account.ts';
import { SimBroker } from './broker.ts';
import { SimSeedError, type SimAccountState } from './seed.ts';
import { MINUTE, T0, candle, f, harness, instruments, market } from './testkit.ts';

const EU = 'EUR_USD';

/** A simulator whose emitted transactions are collected (ticks drive it, as in the sandbox and the runner). */
function sim(): { sim: SimBroker; txs: Transaction[] } {
  const s = new SimBroker({
    instruments: instruments(),
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
  });
  const txs: Transaction[] = [];
  s.transactions$.subscribe((t) => txs.push(t));
  return { sim: s, txs };
}

const tick = (at: number, bid: number, spread = 0.00015) => ({
  kind: 'tick' as const,
  instrument: EU,
  at,
  bid,
  ask: Math.round((bid + spread) * 1e5) / 1e5,
});

/**
 * A sandbox account (the code behind `fxflow sandbox`'s REST interface) with a long trade carrying a
 * TP, an SL and client extensions, reduced once; a short trade with a trailing stop that has
 * ratcheted; and a pending limit order. `account` is GET /accounts/{id} as served, through JSON.
 */
function accountWithPositions(): {
  box: SandboxAccount;
  account: SimAccountState & Record<string, unknown>;
  at: number;
} {
  const box = new SandboxAccount({
    id: '101-001-0000001-001',
    currency: 'USD',
    balance: '100000',
    marginRate: '0.02',
    hedging: false,
    instruments: instruments(),
    start: T0,
  });
  let at = T0;
  const feed = (bid: number): void => {
    at += 1000;
    box.broker.onEvent(tick(at, bid));
  };
  feed(1.1);
  box.submit(
    {
      kind: 'order',
      id: 'long-1',
      request: {
        type: 'MARKET',
        instrument: EU,
        units: '3000',
        takeProfitOnFill: { price: '1.10400' },
        stopLossOnFill: { price: '1.09600' },
        tradeClientExtensions: { id: 'trade-long', tag: 'seeded' },
      } as never,
    },
    at,
  );
  feed(1.1001);
  box.submit({ kind: 'closeTrade', id: 'reduce-1', tradeSpecifier: '@trade-long', units: '1000' }, at);
  feed(1.1002);
  // A short trade in a hedging-free account would reduce the long: open it on another instrument.
  box.broker.onEvent({ kind: 'tick', instrument: 'EUR_GBP', at: at + 1, bid: 0.86, ask: 0.86012 });
  box.submit(
    {
      kind: 'order',
      id: 'short-1',
      request: {
        type: 'MARKET',
        instrument: 'EUR_GBP',
        units: '-2000',
        trailingStopLossOnFill: { distance: '0.00100' },
      } as never,
    },
    at + 2,
  );
  // The trailing stop ratchets down with the ask.
  box.broker.onEvent({ kind: 'tick', instrument: 'EUR_GBP', at: at + 3, bid: 0.8595, ask: 0.85962 });
  box.broker.onEvent({ kind: 'tick', instrument: 'EUR_GBP', at: at + 4, bid: 0.859, ask: 0.85912 });
  at += 10;
  box.submit(
    {
      kind: 'order',
      id: 'limit-1',
      request: {
        type: 'LIMIT',
        instrument: EU,
        units: '500',
        price: '1.09000',
        clientExtensions: { id: 'limit-1', comment: 'rests' },
      } as never,
    },
    at,
  );
  const account = JSON.parse(JSON.stringify(box.full())) as SimAccountState & Record<string, unknown>;
  return { box, account, at };
}

describe('SimBroker.seed: an existing account instead of an empty one', () => {
  it('the seeded state equals the account: trades (units, price, open time, P/L, extensions, dependent orders), pending orders, totals', () => {
    const { account } = accountWithPositions();
    const { sim: b } = sim();
    b.seed(account);
    const trades = account.trades as unknown as Record<string, unknown>[];
    expect(trades).toHaveLength(2);
    const l = b.ledger;
    expect([...l.trades.keys()]).toEqual(trades.map((t) => t.id).sort((x, y) => Number(x) - Number(y)));
    for (const t of trades) {
      const s = l.trades.get(t.id as string)!;
      expect({
        instrument: s.instrument,
        units: String(s.unitsNum),
        initial: s.initialUnits,
        price: s.price,
        open: s.openTime,
        pl: formatAmount(s.realizedPL),
        ext: s.clientExtensions,
      }).toEqual({
        instrument: t.instrument,
        units: t.currentUnits,
        initial: t.initialUnits,
        price: t.price,
        open: t.openTime,
        pl: t.realizedPL,
        ext: t.clientExtensions,
      });
      expect([s.takeProfitOrderID, s.stopLossOrderID, s.trailingStopLossOrderID]).toEqual([
        t.takeProfitOrderID,
        t.stopLossOrderID,
        t.trailingStopLossOrderID,
      ]);
    }
    // The reduced long: 3000 opened, 2000 left, with the realized P/L of the partial close.
    const long = [...l.trades.values()].find((t) => t.instrument === EU)!;
    expect([long.initialUnits, long.unitsNum, long.clientExtensions?.id]).toEqual([
      '3000',
      2000,
      'trade-long',
    ]);
    expect(long.realizedPL).not.toBe(0);
    const orders = account.orders as unknown as Record<string, unknown>[];
    expect([...l.pendingOrders.keys()].sort()).toEqual(orders.map((o) => o.id as string).sort());
    expect(orders.map((o) => o.type).sort()).toEqual([
      'LIMIT',
      'STOP_LOSS',
      'TAKE_PROFIT',
      'TRAILING_STOP_LOSS',
    ]);
    expect(formatAmount(l.balance)).toBe(account.balance);
    expect(formatAmount(l.pl)).toBe(account.pl);
    expect(l.lastTransactionID).toBe(account.lastTransactionID);
    // Read back in v20's form: the same trades and orders (the trailing stop at its ratcheted level).
    const snap = b.snapshot();
    const pick = (o: Record<string, unknown>, keys: string[]) =>
      Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
    const tradeKeys = [
      'id',
      'instrument',
      'price',
      'openTime',
      'initialUnits',
      'currentUnits',
      'realizedPL',
      'financing',
      'clientExtensions',
      'takeProfitOrderID',
      'stopLossOrderID',
      'trailingStopLossOrderID',
    ];
    const byID = (xs: readonly unknown[]) =>
      [...(xs as Record<string, unknown>[])].sort((x, y) => Number(x.id) - Number(y.id));
    expect(byID(snap.trades!).map((t) => pick(t, tradeKeys))).toEqual(
      byID(trades).map((t) => pick(t, tradeKeys)),
    );
    const orderKeys = [
      'id',
      'type',
      'createTime',
      'state',
      'instrument',
      'units',
      'price',
      'distance',
      'tradeID',
      'timeInForce',
      'triggerCondition',
      'positionFill',
      'clientExtensions',
      'trailingStopValue',
    ];
    expect(byID(snap.orders!).map((o) => pick(o, orderKeys))).toEqual(
      byID(orders).map((o) => pick(o, orderKeys)),
    );
    const tsl = orders.find((o) => o.type === 'TRAILING_STOP_LOSS')!;
    // Ratcheted from 0.86112 (ask 0.86012 + 0.001) down to 0.86012.
    expect(tsl.trailingStopValue).toBe('0.86012');
    expect(b.triggerLevel(tsl.id as string)).toBe(0.86012);
  });

  it("a seeded TP triggers and closes the seeded trade, its SL is cancelled LINKED_TRADE_CLOSED, and IDs continue after the account's last", () => {
    const { box, account, at } = accountWithPositions();
    const { sim: b, txs } = sim();
    b.seed(account);
    const live: Transaction[] = [];
    box.onTransaction((t) => live.push(t));
    b.start(at);
    // Both reach the TP (1.10400 on the bid for the long's sell).
    for (const bid of [1.1003, 1.1041]) {
      box.broker.onEvent(tick(at + 5000, bid));
      b.onEvent(tick(at + 5000, bid));
    }
    const long = (
      account.trades as unknown as {
        id: string;
        instrument: string;
        takeProfitOrderID: string;
        stopLossOrderID: string;
      }[]
    ).find((t) => t.instrument === EU)!;
    expect(txs.map((t) => [t.id, t.type, f(t, 'reason')])).toEqual([
      [String(Number(account.lastTransactionID) + 1), 'ORDER_FILL', 'TAKE_PROFIT_ORDER'],
      [String(Number(account.lastTransactionID) + 2), 'ORDER_CANCEL', 'LINKED_TRADE_CLOSED'],
    ]);
    expect(f(txs[0], 'orderID')).toBe(long.takeProfitOrderID);
    expect(f(txs[0], 'tradesClosed')).toMatchObject([{ tradeID: long.id, units: '-2000' }]);
    expect(f(txs[1], 'orderID')).toBe(long.stopLossOrderID);
    expect(b.ledger.trades.has(long.id)).toBe(false);
    // The sandbox account, which never was seeded, did the same, transaction for transaction.
    const strip = (t: Transaction) => ({ ...t, accountID: undefined, userID: undefined });
    expect(txs.map(strip)).toEqual(live.map(strip));
  });

  it('a pre-existing long is reduced by a REDUCE_FIRST (DEFAULT) sell, as at the account; an unseeded simulator opens a short instead', () => {
    const { account, at } = accountWithPositions();
    const seeded = sim();
    seeded.sim.seed(account);
    const empty = sim();
    for (const s of [seeded, empty]) {
      s.sim.start(at);
      s.sim.submit(market(EU, '-500'));
      s.sim.onEvent(tick(at + 1000, 1.1002));
    }
    const long = (account.trades as unknown as { id: string; instrument: string }[]).find(
      (t) => t.instrument === EU,
    )!;
    const fill = seeded.txs.find((t) => t.type === 'ORDER_FILL')!;
    expect(f(fill, 'tradeReduced')).toMatchObject({ tradeID: long.id, units: '-500' });
    expect(f(fill, 'tradeOpened')).toBeUndefined();
    expect(seeded.sim.ledger.trades.get(long.id)!.unitsNum).toBe(1500);
    expect(
      f(
        empty.txs.find((t) => t.type === 'ORDER_FILL'),
        'tradeOpened',
      ),
    ).toMatchObject({ units: '-500' });
  });

  it('orders are named by their account IDs and client IDs: cancel, replace, trade close and trade orders act on the seeded ones', () => {
    const { account, at } = accountWithPositions();
    const { sim: b, txs } = sim();
    b.seed(account);
    b.start(at);
    const orders = account.orders as unknown as { id: string; type: string }[];
    const limit = orders.find((o) => o.type === 'LIMIT')!;
    b.submit({ kind: 'cancel', id: 'c1', orderSpecifier: '@limit-1' });
    expect(txs.map((t) => [t.type, f(t, 'orderID'), f(t, 'reason'), f(t, 'clientOrderID')])).toEqual([
      ['ORDER_CANCEL', limit.id, 'CLIENT_REQUEST', 'limit-1'],
    ]);
    const long = [...b.ledger.trades.values()].find((t) => t.instrument === EU)!;
    b.submit({
      kind: 'tradeOrders',
      id: 'to1',
      tradeSpecifier: '@trade-long',
      takeProfit: { price: '1.10500' },
    });
    expect(
      txs.slice(1).map((t) => [t.type, f(t, 'reason'), f(t, 'replacesOrderID') ?? f(t, 'replacedByOrderID')]),
    ).toEqual([
      ['ORDER_CANCEL', 'CLIENT_REQUEST_REPLACED', String(Number(account.lastTransactionID) + 3)],
      [
        'TAKE_PROFIT_ORDER',
        'REPLACEMENT',
        long.takeProfitOrderID === undefined
          ? undefined
          : (account.trades as unknown as { takeProfitOrderID?: string }[]).find(
              (t) => t.takeProfitOrderID !== undefined,
            )!.takeProfitOrderID,
      ],
    ]);
    b.submit({ kind: 'closeTrade', id: 'ct1', tradeSpecifier: '@trade-long', units: 'ALL' });
    b.onEvent(tick(at + 1000, 1.1002));
    const fill = txs.find((t) => t.type === 'ORDER_FILL')!;
    expect(f(fill, 'reason')).toBe('MARKET_ORDER_TRADE_CLOSE');
    expect(f(fill, 'tradesClosed')).toMatchObject([{ tradeID: long.id, units: '-2000' }]);
    // Both of the trade's remaining dependent orders are cancelled with it.
    expect(txs.filter((t) => f(t, 'reason') === 'LINKED_TRADE_CLOSED')).toHaveLength(2);
    expect(txs.map((t) => Number(t.id))).toEqual(
      txs.map((_, i) => Number(account.lastTransactionID) + 1 + i),
    );
  });

  it('a seeded trailing stop keeps its ratcheted level and triggers there', () => {
    const { account, at } = accountWithPositions();
    const { sim: b, txs } = sim();
    b.seed(account);
    b.start(at);
    b.onEvent(tick(at + 500, 1.1002)); // EUR_USD: the GBP → USD conversion of the P/L (a cross)
    // The short's stop is at 0.86012 (ask): an ask of 0.86012 triggers it; from its open price it would sit at 0.86112.
    b.onEvent({ kind: 'tick', instrument: 'EUR_GBP', at: at + 999, bid: 0.8589, ask: 0.86011 });
    expect(txs).toEqual([]);
    b.onEvent({ kind: 'tick', instrument: 'EUR_GBP', at: at + 1000, bid: 0.859, ask: 0.86012 });
    const fill = txs.find((t) => t.type === 'ORDER_FILL')!;
    expect([f(fill, 'reason'), f(fill, 'price')]).toEqual(['TRAILING_STOP_LOSS_ORDER', '0.86012']);
  });

  it('a seed may carry the transactions that followed it: a fresh account plus a journal is the account they made', () => {
    const a = harness();
    a.submit(market(EU, '2000', { takeProfitOnFill: { price: '1.10500' } }));
    a.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    a.submit({
      kind: 'order',
      id: 'lim',
      request: {
        type: 'LIMIT',
        instrument: EU,
        units: '-700',
        price: '1.10300',
        clientExtensions: { id: 'lim' },
      } as never,
    });
    a.submit({
      kind: 'order',
      id: 'stp',
      request: {
        type: 'STOP',
        instrument: EU,
        units: '300',
        price: '1.11000',
        clientExtensions: { id: 'stp' },
      } as never,
    });
    a.submit({
      kind: 'clientExtensions',
      id: 'ce',
      orderSpecifier: '@stp',
      clientExtensions: { id: 'stp-renamed' },
    });
    const b = new SimBroker({
      instruments: instruments(),
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const out: Transaction[] = [];
    b.transactions$.subscribe((t) => out.push(t));
    b.seed({ lastTransactionID: '0', balance: '0' }, { transactions: a.txs });
    const { quotes: _q, ...restored } = b.snapshot();
    const { quotes: _a, ...original } = a.sim.snapshot();
    expect(restored).toEqual(original);
    b.start(a.sim.now);
    const mark = a.txs.length;
    const c2 = candle(EU, T0 + MINUTE, [1.1002, 1.1052, 1.1, 1.105]);
    a.feed(c2);
    b.onEvent(c2);
    expect(out).toEqual(a.txs.slice(mark));
    expect(out.map((t) => [t.id, t.type, f(t, 'reason')])).toEqual([
      // At the candle's high both trigger, in the order they were created (the TP first).
      [String(mark + 1), 'ORDER_FILL', 'TAKE_PROFIT_ORDER'],
      [String(mark + 2), 'ORDER_FILL', 'LIMIT_ORDER'],
    ]);
    // The order renamed by a client-extensions modify is known by its new client ID only.
    b.submit({ kind: 'cancel', id: 'x1', orderSpecifier: '@stp' });
    b.submit({ kind: 'cancel', id: 'x2', orderSpecifier: '@stp-renamed' });
    expect(out.slice(2).map((t) => [t.type, f(t, 'rejectReason') ?? f(t, 'clientOrderID')])).toEqual([
      ['ORDER_CANCEL_REJECT', 'ORDER_DOESNT_EXIST'],
      ['ORDER_CANCEL', 'stp-renamed'],
    ]);
  });

  it('a journaled MARKET order whose fill was never recorded (a crash between the two) is cancelled at start', () => {
    const a = harness();
    a.submit(market(EU, '1000'));
    a.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    const upToCreate = a.txs.slice(0, a.txs.findIndex((t) => t.type === 'MARKET_ORDER') + 1);
    const { sim: b, txs } = sim();
    b.seed({ lastTransactionID: '0', balance: '0' }, { transactions: upToCreate });
    expect(b.ledger.pendingOrders.size).toBe(1);
    b.start(T0 + MINUTE);
    expect(txs.map((t) => [t.id, t.type, f(t, 'orderID'), f(t, 'reason'), f(t, 'clientOrderID')])).toEqual([
      ['4', 'ORDER_CANCEL', '3', 'INTERNAL_SERVER_ERROR', undefined],
    ]);
    expect(b.ledger.pendingOrders.size).toBe(0);
  });

  it('names the broken field of a bad state, and refuses a second seed or a seed after start', () => {
    const { account } = accountWithPositions();
    const trades = account.trades as unknown as Record<string, unknown>[];
    const bad =
      (patch: (s: Record<string, unknown>) => void): (() => void) =>
      () => {
        const s = JSON.parse(JSON.stringify(account)) as Record<string, unknown>;
        patch(s);
        sim().sim.seed(s as unknown as SimAccountState);
      };
    expect(bad((s) => ((s.trades as Record<string, unknown>[])[0]!.instrument = 'XAU_XXX'))).toThrow(
      /trades\[0\] \(id \d+\)\.instrument: "XAU_XXX" is not a known instrument/,
    );
    expect(bad((s) => ((s.trades as Record<string, unknown>[])[1]!.currentUnits = 'lots'))).toThrow(
      /trades\[1\] \(id \d+\)\.currentUnits: "lots" is not a signed number of units/,
    );
    expect(bad((s) => (s.lastTransactionID = '3'))).toThrow(/the trade ID is above lastTransactionID 3/);
    expect(bad((s) => (s.balance = '1,000'))).toThrow(
      /account state\.balance: "1,000" is not a decimal amount/,
    );
    expect(
      bad((s) => (s.trades = (s.trades as Record<string, unknown>[]).filter((t) => t.instrument !== EU))),
    ).toThrow(/orders \(id \d+, (TAKE_PROFIT|STOP_LOSS)\)\.tradeID: "\d+" is not among the open trades/);
    expect(
      bad(
        (s) => (s.orders = (s.orders as Record<string, unknown>[]).filter((o) => o.type !== 'TAKE_PROFIT')),
      ),
    ).toThrow(
      /trades \(id \d+\)\.takeProfitOrderID: order \d+ is not among the pending orders of that trade/,
    );
    expect(
      bad(
        (s) =>
          ((s.orders as Record<string, unknown>[]).find((o) => o.type === 'LIMIT')!.createTime = 'yesterday'),
      ),
    ).toThrow(/createTime: "yesterday" is not a v20 time/);
    expect(trades.length).toBe(2);
    const { sim: b } = sim();
    b.seed(account);
    expect(() => b.seed(account)).toThrow(SimSeedError);
    const started = sim().sim;
    started.start(T0);
    expect(() => started.seed(account)).toThrow(
      /call it once, on a new simulator, before its first event or intent/,
    );
  });
});

// ------------------------------------------------------------------------------------------------
// seed(snapshot()) continues exactly where the simulator was (fast-check).

const candlesFrom = (start: number) =>
  fc
    .array(
      fc.record({
        move: fc.integer({ min: -30, max: 30 }),
        up: fc.integer({ min: 0, max: 25 }),
        down: fc.integer({ min: 0, max: 25 }),
        close: fc.integer({ min: 0, max: 100 }),
        spread: fc.integer({ min: 0, max: 5 }),
      }),
      { minLength: 6, maxLength: 40 },
    )
    .map((steps) => {
      let px = 110000;
      return steps.map((s, i) => {
        const open = px + s.move;
        const high = open + s.up;
        const low = open - s.down;
        const close = low + Math.round(((high - low) * s.close) / 100);
        px = close;
        return candle(
          EU,
          start + i * MINUTE,
          [open / 1e5, high / 1e5, low / 1e5, close / 1e5],
          s.spread / 1e5,
        );
      });
    });

type Action =
  | { kind: 'market'; units: number; tp?: number; sl?: number; trail?: number }
  | { kind: 'limit' | 'stop' | 'mit'; units: number; offset: number; tp?: number; gfd: boolean }
  | { kind: 'close' | 'cancelOldest' | 'reduceOldest' };

const actionArb = (trailing: boolean): fc.Arbitrary<Action> =>
  fc.oneof(
    fc.record({
      kind: fc.constant('market' as const),
      units: fc.integer({ min: -4000, max: 4000 }).filter((u) => u !== 0),
      tp: fc.option(fc.integer({ min: 5, max: 50 }), { nil: undefined }),
      sl: fc.option(fc.integer({ min: 5, max: 50 }), { nil: undefined }),
      trail: trailing
        ? fc.option(fc.integer({ min: 10, max: 60 }), { nil: undefined })
        : fc.constant(undefined),
    }),
    fc.record({
      kind: fc.constantFrom('limit' as const, 'stop' as const, 'mit' as const),
      units: fc.integer({ min: -4000, max: 4000 }).filter((u) => u !== 0),
      offset: fc.integer({ min: 1, max: 30 }),
      tp: fc.option(fc.integer({ min: 5, max: 50 }), { nil: undefined }),
      gfd: fc.boolean(),
    }),
    fc.record({ kind: fc.constantFrom('close' as const, 'cancelOldest' as const, 'reduceOldest' as const) }),
  );

function intentFor(a: Action, last: Candle, n: number, s: SimBroker): OrderIntent | undefined {
  const mid = (last.bc + last.ac) / 2;
  const p = (x: number): string => x.toFixed(5);
  const id = `p-${n}`;
  switch (a.kind) {
    case 'market': {
      const x: Record<string, unknown> = { clientExtensions: { id } };
      const dir = a.units > 0 ? 1 : -1;
      if (a.tp !== undefined) x.takeProfitOnFill = { price: p(mid + (dir * a.tp) / 1e5) };
      if (a.sl !== undefined) x.stopLossOnFill = { distance: p(a.sl / 1e5) };
      if (a.trail !== undefined) x.trailingStopLossOnFill = { distance: p(a.trail / 1e5) };
      return {
        kind: 'order',
        id,
        request: { type: 'MARKET', instrument: EU, units: String(a.units), ...x } as never,
      };
    }
    case 'limit':
    case 'stop':
    case 'mit': {
      const dir = a.units > 0 ? 1 : -1;
      const sign = a.kind === 'limit' ? -dir : a.kind === 'stop' ? dir : a.offset % 2 === 0 ? 1 : -1;
      const price = mid + (sign * a.offset) / 1e5;
      const type = a.kind === 'mit' ? 'MARKET_IF_TOUCHED' : a.kind.toUpperCase();
      const x: Record<string, unknown> = { clientExtensions: { id } };
      if (a.tp !== undefined) x.takeProfitOnFill = { price: p(price + (dir * a.tp) / 1e5) };
      if (a.gfd) x.timeInForce = 'GFD';
      return {
        kind: 'order',
        id,
        request: { type, instrument: EU, units: String(a.units), price: p(price), ...x } as never,
      };
    }
    case 'close':
      return { kind: 'closePosition', id, instrument: EU, longUnits: 'ALL', shortUnits: 'ALL' };
    case 'cancelOldest': {
      const o = [...s.ledger.pendingOrders.values()].find((x) => x.tradeID === undefined);
      return o ? { kind: 'cancel', id, orderSpecifier: o.id } : undefined;
    }
    case 'reduceOldest': {
      const t = [...s.ledger.trades.values()][0];
      return t && Math.abs(t.unitsNum) > 1
        ? {
            kind: 'closeTrade',
            id,
            tradeSpecifier: t.id,
            units: String(Math.floor(Math.abs(t.unitsNum) / 2)),
          }
        : undefined;
    }
  }
}

/**
 * Runs `actions` over `candles` on one simulator; after candle `at` (nothing queued: intents come after a candle) a
 * second simulator is started from the first: from its snapshot, or from a fresh account plus the
 * transactions so far. Both then get the same candles and intents. Returns what each emitted after
 * the split.
 */
function split(
  candles: readonly Candle[],
  actions: readonly (Action | undefined)[],
  at: number,
  how: 'snapshot' | 'journal',
  financing = false,
): { a: Transaction[]; b: Transaction[] } {
  const h = harness({ financing }, candles[0]!.time - MINUTE);
  let b: SimBroker | undefined;
  const bTxs: Transaction[] = [];
  let mark = 0;
  let n = 0;
  for (const [i, c] of candles.entries()) {
    h.feed(c);
    b?.onEvent(c);
    if (i === at) {
      expect(h.sim.queuedMarketOrders()).toBe(0);
      mark = h.txs.length;
      b = new SimBroker({
        instruments: instruments(),
        currency: 'USD',
        initialBalance: '100000',
        marginRate: '0.02',
        financing,
      });
      b.transactions$.subscribe((t) => bTxs.push(t));
      // Through JSON: what a journal or a file would hold.
      if (how === 'snapshot') b.seed(JSON.parse(JSON.stringify(h.sim.snapshot())) as SimAccountState);
      // (The latest prices are not in transactions: live, the simulator sees a price before any
      // intent. Neither are trailing stop levels: the runner journals them with its snapshots.)
      else {
        const trailing = h.sim.trailingStopValues();
        b.seed(
          { lastTransactionID: '0', balance: '0', quotes: h.sim.snapshot().quotes! },
          {
            transactions: JSON.parse(JSON.stringify(h.txs)) as Transaction[],
            ...(trailing ? { trailing } : {}),
          },
        );
      }
      b.start(h.sim.now);
    }
    const a = actions[i];
    const intent = a ? intentFor(a, c, n++, h.sim) : undefined;
    if (intent) {
      h.submit(intent);
      b?.submit(intent);
    }
  }
  return { a: h.txs.slice(mark), b: bTxs };
}

describe('seed(snapshot()) continues where the simulator was (fast-check)', () => {
  const scenario = (trailing: boolean, start = T0) =>
    fc
      .tuple(
        candlesFrom(start),
        fc.array(fc.option(actionArb(trailing), { freq: 2, nil: undefined }), {
          minLength: 40,
          maxLength: 40,
        }),
        fc.nat(),
      )
      .map(([c, a, k]) => ({ candles: c, actions: a, at: 1 + (k % (c.length - 1)) }));

  it('from a snapshot (v20 Account form, through JSON): the same transactions afterwards, IDs included, trailing stops too', () => {
    fc.assert(
      fc.property(scenario(true), ({ candles, actions, at }) => {
        const { a, b } = split(candles, actions, at, 'snapshot');
        expect(JSON.stringify(b)).toBe(JSON.stringify(a));
      }),
      { numRuns: 200 },
    );
  });

  it('from a fresh account and the transactions so far (a journal) with the trailing stop levels: the same transactions afterwards', () => {
    fc.assert(
      fc.property(scenario(true), ({ candles, actions, at }) => {
        const { a, b } = split(candles, actions, at, 'journal');
        expect(JSON.stringify(b)).toBe(JSON.stringify(a));
      }),
      { numRuns: 200 },
    );
  });

  it('a journaled MIT the price has moved towards (not onto) since it was created still faces the way it was created, and fills when touched', () => {
    // Found by the property above (seed 489209820): a buy MIT 29 points under the mid of 1.100015
    // (at 1.09973); the next candle's mid is 1.09973. Taken against that quote, the restored order faced
    // up (a buy stop at 1.09973, already beyond it) and never filled when the ask came down to 1.09972.
    const prices = [1.1, 1.1, 1.1, 1.09972, 1.09972, 1.09972, 1.09972, 1.09972];
    const spreads = [0, 0, 0.00003, 0.00002, 0, 0, 0, 0];
    const candles = prices.map((x, i) => candle(EU, T0 + i * MINUTE, [x, x, x, x], spreads[i]!));
    const actions: (Action | undefined)[] = candles.map(() => undefined);
    actions[2] = { kind: 'mit', units: 1, offset: 29, gfd: false };
    for (const how of ['journal', 'snapshot'] as const) {
      const { a, b } = split(candles, actions, 3, how);
      expect(a.map((t) => `${t.type} ${(t as { price?: string }).price}`)).toEqual(['ORDER_FILL 1.09972']);
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    }
  });

  it('across a 17:00 New York rollover, financing on: the restored simulator charges the same DAILY_FINANCING', () => {
    // 21:40 UTC on a Tuesday in January: the rollover (22:00 UTC) falls inside the 40 candles.
    const start = Date.UTC(2024, 0, 2, 21, 40);
    let rollovers = 0;
    fc.assert(
      fc.property(
        scenario(true, start),
        fc.constantFrom('snapshot' as const, 'journal' as const),
        ({ candles, actions, at }, how) => {
          const { a, b } = split(candles, actions, at, how, true);
          if (a.some((t) => t.type === 'DAILY_FINANCING')) rollovers++;
          expect(JSON.stringify(b)).toBe(JSON.stringify(a));
        },
      ),
      { numRuns: 150 },
    );
    // Not vacuous: some runs held a trade over the rollover after the split (about 1 in 12).
    expect(rollovers).toBeGreaterThan(3);
  });

  it('seeding adds no transaction and emits nothing until the first event', () => {
    const { account } = accountWithPositions();
    const { sim: b, txs } = sim();
    b.seed(account);
    expect(txs).toEqual([]);
    expect(b.ledger.lastTransactionID).toBe(account.lastTransactionID);
    b.start(T0 + 10 * MINUTE);
    expect(txs).toEqual([]);
    expect(formatTime(b.now)).toBe(formatTime(T0 + 10 * MINUTE));
  });
});
