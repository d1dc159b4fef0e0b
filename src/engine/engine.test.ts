import { describe, expect, it } from 'vitest';
import { SimBroker } from '../adapters/sim/broker.ts';
import { candle, instruments, MINUTE, T0 } from '../adapters/sim/testkit.ts';
import type { MarketEvent } from '../domain/events.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { VirtualClock } from '../ports/clock.ts';
import { defineStrategy, type Strategy } from '../strategy/api.ts';
import { Engine, StrategyError, subscriptionsOf } from './engine.ts';
import { fromBatches } from './merge.ts';
import { driveSources } from './drive.testkit.ts';
import { Portfolio } from './portfolio.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Runs a strategy over events through the real engine, simulated broker and portfolio. */
async function backtest<P extends Record<string, number | string | boolean>, S>(
  strategy: Strategy<P, S>,
  sources: MarketEvent[][],
): Promise<{ engine: Engine<P, S>; txs: Transaction[]; portfolio: Portfolio; sim: SimBroker }> {
  const inst = instruments();
  const sim = new SimBroker({
    instruments: inst,
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
  });
  const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
  const txs: Transaction[] = [];
  sim.transactions$.subscribe((t) => txs.push(t));
  const engine = new Engine({
    strategy,
    name: 'test',
    params: strategy.params,
    execution: sim,
    portfolio,
    instruments: inst,
    clock: new VirtualClock(),
    log: silent,
    marginRate: 0.02,
  });
  // The account opens on the first event, after the engine subscribed to its transactions.
  await driveSources(
    engine,
    sources.map((s) => fromBatches([s])),
    (e) => sim.onEvent(e),
  );
  return { engine, txs, portfolio, sim };
}

const m1 = (i: number, px = 1.1, instrument = 'EUR_USD') =>
  candle(instrument, T0 + i * MINUTE, [px, px + 0.0005, px - 0.0005, px + 0.0001]);

describe('engine', () => {
  it('delivers candles at their close, in time order across instruments and granularities, finer first on ties', async () => {
    const seen: string[] = [];
    const h1 = { ...candle('EUR_USD', T0, [1.1, 1.11, 1.09, 1.105], 0.0002, 'H1', 60 * MINUTE) };
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1', 'EUR_USD:H1', 'GBP_USD:M1'] },
      onCandle(ctx) {
        seen.push(`${ctx.series!.key}@${(ctx.now - T0) / MINUTE}`);
        expect(ctx.now).toBe(ctx.candle!.at);
      },
    });
    const eu = Array.from({ length: 60 }, (_, i) => m1(i));
    const gb = [m1(0, 1.27, 'GBP_USD'), m1(59, 1.27, 'GBP_USD')];
    await backtest(s, [eu, [h1], gb]);
    expect(seen.slice(0, 2)).toEqual(['EUR_USD:M1:M@1', 'GBP_USD:M1:M@1']);
    expect(seen.slice(-3)).toEqual(['EUR_USD:M1:M@60', 'EUR_USD:H1:M@60', 'GBP_USD:M1:M@60']);
    expect(seen).toHaveLength(63);
  });

  it('does not deliver incomplete candles', async () => {
    let n = 0;
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onCandle: () => void n++,
    });
    await backtest(s, [[m1(0), { ...m1(1), complete: false }, m1(2)]]);
    expect(n).toBe(2);
  });

  it('submits returned intents, folds the transactions, and tells the strategy about its fills', async () => {
    const fills: string[] = [];
    const s = defineStrategy({
      params: { units: 1000 },
      subscribe: { candles: ['EUR_USD:M1'] },
      init: () => ({ bought: false, seen: 0 }),
      onCandle(ctx, st) {
        if (st.bought) return { state: { ...st, seen: st.seen + 1 } };
        return {
          state: { bought: true, seen: 1 },
          intents: [ctx.market('EUR_USD', ctx.params.units, { sl: { distance: 0.005 } })],
        };
      },
      onTransaction(ctx) {
        const t = ctx.transaction!;
        if (t.type === 'ORDER_FILL') fills.push(`${t.units}@${t.price}`);
        // The portfolio has already applied the transaction.
        if (t.type === 'ORDER_FILL') expect(ctx.position('EUR_USD').net).toBe(1000);
      },
    });
    const { engine, portfolio, txs } = await backtest(s, [[m1(0), m1(1), m1(2)]]);
    expect(fills).toEqual(['1000@1.10020']);
    expect(engine.state).toEqual({ bought: true, seen: 3 });
    expect(txs.map((t) => t.type)).toEqual([
      'CREATE',
      'TRANSFER_FUNDS',
      'MARKET_ORDER',
      'ORDER_FILL',
      'STOP_LOSS_ORDER',
    ]);
    expect(portfolio.ledger.trades.size).toBe(1);
    expect(portfolio.ledger.lastTransactionID).toBe('5');
  });

  it('reports rejects to the strategy as transactions, without re-entering the handler', async () => {
    let depth = 0;
    const rejects: string[] = [];
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onCandle(ctx) {
        depth++;
        expect(depth).toBe(1);
        const out = [ctx.market('EUR_USD', '10.5')];
        depth--;
        return out;
      },
      onTransaction(ctx) {
        expect(depth).toBe(0);
        const t = ctx.transaction!;
        if (t.type === 'MARKET_ORDER_REJECT') rejects.push(String(t.rejectReason));
      },
    });
    await backtest(s, [[m1(0), m1(1)]]);
    expect(rejects).toEqual(['UNITS_PRECISION_EXCEEDED', 'UNITS_PRECISION_EXCEEDED']);
  });

  it('fires timers on the virtual clock and delivers ticks and signals', async () => {
    const log: string[] = [];
    const s = defineStrategy({
      params: {},
      subscribe: { ticks: ['EUR_USD'], signals: ['EUR_USD'], timers: [{ name: 'q', everyMs: 15 * MINUTE }] },
      onTick: (ctx) => void log.push(`tick@${(ctx.now - T0) / MINUTE}`),
      onSignal: (ctx) => void log.push(`signal:${ctx.signal!.direction}@${(ctx.now - T0) / MINUTE}`),
      onTimer: (ctx) => void log.push(`timer@${(ctx.now - T0) / MINUTE}`),
    });
    const ticks: MarketEvent[] = [0, 10, 20, 31].map((m) => ({
      kind: 'tick',
      instrument: 'EUR_USD',
      at: T0 + m * MINUTE,
      bid: 1.1,
      ask: 1.1002,
    }));
    const signals: MarketEvent[] = [
      {
        kind: 'signal',
        at: T0 + 16 * MINUTE,
        instrument: 'EUR_USD',
        source: 'test',
        direction: 'up',
        horizonMs: 0,
      },
    ];
    await backtest(s, [ticks, signals]);
    expect(log).toEqual(['tick@0', 'tick@10', 'timer@15', 'signal:up@16', 'tick@20', 'timer@30', 'tick@31']);
  });

  it('warms indicators created on first use from the kept history', async () => {
    const values: (number | undefined)[] = [];
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1:B'] },
      onCandle(ctx) {
        // First asked for on the 5th candle: already warm for a 3-period SMA.
        if (ctx.now >= T0 + 5 * MINUTE) values.push(ctx.sma(3));
      },
    });
    await backtest(s, [[0, 1, 2, 3, 4].map((i) => m1(i, 1.1 + i * 0.001))]);
    // Bid closes: 1.1001, 1.1011, ..., 1.1041 -> SMA(3) of the last three.
    expect(values[0]).toBeCloseTo((1.1021 + 1.1031 + 1.1041) / 3, 10);
  });

  it('names an unknown instrument or a malformed subscription', () => {
    const mk = (candles: string[]) => () =>
      new Engine({
        strategy: defineStrategy({ params: {}, subscribe: { candles } }),
        name: 'x',
        params: {},
        execution: new SimBroker({
          instruments: instruments(),
          currency: 'USD',
          initialBalance: '1',
          marginRate: '0.02',
        }),
        portfolio: new Portfolio({ currency: 'USD', instruments: instruments(), initialBalance: '1' }),
        instruments: instruments(),
        clock: new VirtualClock(),
        log: silent,
        marginRate: 0.02,
      });
    expect(mk(['EUR_USD'])).toThrow(/must look like 'EUR_USD:H1'/);
    expect(mk(['EUR_USD:H7'])).toThrow(/unknown granularity 'H7'/);
    expect(mk(['EUR_USD:H1:X'])).toThrow(/price component 'X'/);
    expect(mk(['EUR_UDS:H1'])).toThrow(/unknown instrument 'EUR_UDS'/);
  });
});

describe('a strategy that throws', () => {
  // Without the engine's own handling, rxjs rethrows an error thrown inside a subscriber from a
  // timer: an uncaught exception (which vitest reports as a failure of the run) instead of a
  // rejected run, and the events after it would still be handled.
  it('in onCandle: the run rejects with a StrategyError naming the strategy, the handler and the time; nothing is handled after it', async () => {
    let calls = 0;
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onCandle(ctx) {
        calls++;
        if (calls === 2) throw new TypeError(`no price at ${ctx.candle!.bc}`);
      },
    });
    const err = await backtest(s, [[m1(0), m1(1), m1(2), m1(3)]]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StrategyError);
    const e = err as StrategyError;
    expect(e.code).toBe('STRATEGY');
    expect([e.strategy, e.handler, e.at]).toEqual(['test', 'onCandle', T0 + 2 * MINUTE]);
    expect(e.message).toBe(
      `strategy 'test' threw in onCandle at ${new Date(T0 + 2 * MINUTE).toISOString()}: no price at 1.1001`,
    );
    expect(e.cause).toBeInstanceOf(TypeError);
    expect(calls).toBe(2);
  });

  it('in onTransaction: the run rejects with a StrategyError, the fill that reached the handler is in the account', async () => {
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      init: () => ({ sent: false }),
      onCandle(ctx, st) {
        if (st.sent) return;
        return { state: { sent: true }, intents: [ctx.market('EUR_USD', 1000)] };
      },
      onTransaction(ctx) {
        if (ctx.transaction!.type === 'ORDER_FILL') throw new Error('cannot book the fill');
      },
    });
    const inst = instruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
    const engine = new Engine({
      strategy: s,
      name: 'booker',
      params: s.params,
      execution: sim,
      portfolio,
      instruments: inst,
      clock: new VirtualClock(),
      log: silent,
      marginRate: 0.02,
    });
    const err = await driveSources(engine, [fromBatches([[m1(0), m1(1), m1(2)]])], (e) =>
      sim.onEvent(e),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StrategyError);
    expect((err as StrategyError).handler).toBe('onTransaction');
    expect((err as StrategyError).message).toMatch(
      /^strategy 'booker' threw in onTransaction at .+: cannot book the fill$/,
    );
    expect(portfolio.ledger.trades.size).toBe(1);
  });

  it('in init or subscribe: a StrategyError naming the step, before anything runs', () => {
    const inst = instruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
    const bad = defineStrategy({
      params: { n: 1 },
      subscribe: { candles: ['EUR_USD:M1'] },
      init: (p) => (p.n > 0 ? (JSON.parse('{') as never) : {}),
      onCandle() {},
    });
    expect(
      () =>
        new Engine({
          strategy: bad,
          name: 'starter',
          params: bad.params,
          execution: sim,
          portfolio,
          instruments: inst,
          clock: new VirtualClock(),
          log: silent,
          marginRate: 0.02,
        }),
    ).toThrow(/^strategy 'starter' threw in init: .*JSON/);
    const picky = defineStrategy({
      name: 'picky',
      params: { pair: '' },
      subscribe: (p) => {
        if (p.pair === '') throw new Error('give a pair');
        return { candles: [`${p.pair}:M1`] };
      },
      onCandle() {},
    });
    const err = (() => {
      try {
        subscriptionsOf(picky, picky.params);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(StrategyError);
    expect((err as StrategyError).message).toBe("strategy 'picky' threw in subscribe: give a pair");
    expect(subscriptionsOf(picky, { pair: 'EUR_USD' })).toEqual({ candles: ['EUR_USD:M1'] });
  });

  it('returns something that is not a step, or an intent not made by ctx: a StrategyError before anything of the step is taken', async () => {
    const cases: [unknown, string][] = [
      [42, 'returned 42: a handler returns nothing, a list of intents, or { state, intents }'],
      [
        [{ kind: 'buy', units: 100 }],
        'returned intent {"kind":"buy","units":100}: make intents with the ctx helpers',
      ],
      [{ state: { n: 9 }, intents: 'buy' }, 'returned intents "buy": intents must be a list'],
      [{ state: { n: 9 }, intents: [null] }, 'returned intent null: make intents with the ctx helpers'],
      [
        [{ kind: 'order', id: 'o1', request: null }],
        'returned intent {"kind":"order","id":"o1","request":null}: make intents with the ctx helpers',
      ],
    ];
    for (const [step, says] of cases) {
      const submitted: unknown[] = [];
      const s = defineStrategy({
        params: {},
        subscribe: { candles: ['EUR_USD:M1'] },
        init: () => ({ n: 0 }),
        onCandle: () => step as never,
      });
      const inst = instruments();
      const sim = new SimBroker({
        instruments: inst,
        currency: 'USD',
        initialBalance: '100000',
        marginRate: '0.02',
        financing: false,
      });
      const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
      const engine = new Engine({
        strategy: s,
        name: 'sloppy',
        params: s.params,
        execution: sim,
        portfolio,
        instruments: inst,
        clock: new VirtualClock(),
        log: silent,
        marginRate: 0.02,
        onIntent: (i) => submitted.push(i),
      });
      const detach = engine.attach();
      let err: unknown;
      try {
        engine.feed([m1(0), m1(1)], (ev) => sim.onEvent(ev));
      } catch (e) {
        err = e;
      }
      detach();
      expect(err).toBeInstanceOf(StrategyError);
      expect((err as StrategyError).message).toContain(
        `strategy 'sloppy': onCandle at ${new Date(T0 + MINUTE).toISOString()} ${says}`,
      );
      expect(engine.state).toEqual({ n: 0 });
      expect(submitted).toEqual([]);
    }
  });

  it('in onStop, after batches fed through attach/feed (the simulator heard through listen): stop throws the StrategyError', () => {
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onStart() {},
      onCandle() {},
      onStop() {
        throw new Error('report failed');
      },
    });
    const inst = instruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
    const engine = new Engine({
      strategy: s,
      name: 'closer',
      params: s.params,
      execution: sim,
      portfolio,
      instruments: inst,
      clock: new VirtualClock(),
      log: silent,
      marginRate: 0.02,
    });
    const detach = engine.attach();
    engine.feed([m1(0), m1(1)], (ev) => sim.onEvent(ev));
    expect(() => engine.stop()).toThrow(/^strategy 'closer' threw in onStop at .+: report failed$/);
    detach();
  });
});
