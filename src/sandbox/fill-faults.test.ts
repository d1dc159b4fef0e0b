import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInstruments } from '../domain/instrument.ts';
import { formatTime } from '../domain/time.ts';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

// The simulator's fill models in the sandbox (SandboxOptions.fill, POST /sandbox/faults): real HTTP
// against a running sandbox on a manual clock. Nothing here waits on wall time: a test that needs the
// sandbox to have taken a request waits for the sandbox to say so (stats().delayedOrders).

const instruments = loadInstruments();

type Tx = Record<string, any>;

/** Polls `pred` until it holds (an event the sandbox reports, not a duration); fails after `what` never happens. */
async function until(pred: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await pred()) return;
    await new Promise((done) => setTimeout(done, 5));
  }
  throw new Error(`never happened: ${what}`);
}

/** The price a fill of `side` gets at `bid`/`ask` under the slippage model `spec`, as the instrument writes it. */
function slipped(spec: string, instrument: string, side: 1 | -1, bid: number, ask: number): string {
  const inst = instruments.get(instrument);
  const [kind, value] = spec.split(':') as [string, string];
  const px = side === 1 ? ask : bid;
  const by = kind === 'fixed' ? Number(value) * inst.pip : Number(value) * (ask - bid);
  return inst.price(px + side * by);
}

/** An instrument, a quote on its price grid and a spread of 0..50 of its smallest steps. */
const quoteArb = fc
  .record({
    instrument: fc.constantFrom('EUR_USD', 'USD_JPY', 'GBP_USD'),
    steps: fc.integer({ min: 80_000, max: 160_000 }),
    spread: fc.integer({ min: 0, max: 50 }),
    side: fc.constantFrom(1 as const, -1 as const),
  })
  .map((q) => {
    const inst = instruments.get(q.instrument);
    const tick = 10 ** -inst.displayPrecision;
    const bid = inst.snap(q.steps * tick);
    return { ...q, tick, bid, ask: inst.snap(bid + q.spread * tick) };
  });

const slippageArb = fc.oneof(
  fc.integer({ min: 1, max: 50 }).map((n) => `fixed:${n / 10}`),
  fc.integer({ min: 1, max: 200 }).map((n) => `spread:${n / 100}`),
);

describe('sandbox slippage fault', () => {
  let sb: Sandbox;
  let A: string;
  beforeAll(async () => {
    sb = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      accounts: [{ balance: '10000000', hedging: true }],
    });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  });
  afterAll(() => sb.close());

  const faults = async (body: unknown): Promise<void> => {
    const r = await call('POST', `${sb.url}/sandbox/faults`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const price = async (instrument: string, bid: number, ask: number): Promise<void> => {
    const r = await call('POST', `${sb.url}/sandbox/prices`, { instrument, bid, ask });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const fillOf = async (orderID: string): Promise<Tx | undefined> => {
    const o = await call('GET', `${A}/orders/${orderID}`);
    const fillID = o.body.order.fillingTransactionID as string | undefined;
    return fillID === undefined
      ? undefined
      : (await call('GET', `${A}/transactions/${fillID}`)).body.transaction;
  };

  it('a market order fills at the quote worsened by the model, never better (property over quotes, sides, models)', async () => {
    await fc.assert(
      fc.asyncProperty(quoteArb, slippageArb, async (q, spec) => {
        await faults({ slippage: spec });
        await price(q.instrument, q.bid, q.ask);
        const r = await call('POST', `${A}/orders`, {
          order: { type: 'MARKET', instrument: q.instrument, units: String(q.side * 100) },
        });
        expect(r.status).toBe(201);
        const fill = r.body.orderFillTransaction as Tx;
        expect(fill.price).toBe(slipped(spec, q.instrument, q.side, q.bid, q.ask));
        if (q.side === 1) expect(Number(fill.price)).toBeGreaterThanOrEqual(q.ask);
        else expect(Number(fill.price)).toBeLessThanOrEqual(q.bid);
      }),
      { numRuns: 60 },
    );
  });

  it('a stop fills at the triggering price worsened by the model (property)', async () => {
    await fc.assert(
      fc.asyncProperty(quoteArb, slippageArb, fc.integer({ min: 0, max: 30 }), async (q, spec, gap) => {
        await faults({ slippage: spec });
        await price(q.instrument, q.bid, q.ask);
        // A buy stop 20 steps above the ask (a sell stop 20 below the bid), then a price through it.
        const inst = instruments.get(q.instrument);
        const level = inst.snap(q.side === 1 ? q.ask + 20 * q.tick : q.bid - 20 * q.tick);
        const r = await call('POST', `${A}/orders`, {
          order: {
            type: 'STOP',
            instrument: q.instrument,
            units: String(q.side * 100),
            price: inst.price(level),
          },
        });
        expect(r.status).toBe(201);
        const bid =
          q.side === 1 ? inst.snap(level + gap * q.tick) : inst.snap(level - gap * q.tick - (q.ask - q.bid));
        const ask = inst.snap(bid + (q.ask - q.bid));
        await price(q.instrument, bid, ask);
        const fill = await fillOf(r.body.orderCreateTransaction.id);
        expect(fill, `stop ${level} not filled by ${bid}/${ask}`).toBeDefined();
        expect(fill!.price).toBe(slipped(spec, q.instrument, q.side, bid, ask));
        if (q.side === 1) expect(Number(fill!.price)).toBeGreaterThanOrEqual(ask);
        else expect(Number(fill!.price)).toBeLessThanOrEqual(bid);
      }),
      { numRuns: 40 },
    );
  });

  it('limits and take profits never slip: they fill at the price that triggered them (property)', async () => {
    await fc.assert(
      fc.asyncProperty(quoteArb, slippageArb, fc.integer({ min: 0, max: 30 }), async (q, spec, gap) => {
        await faults({ slippage: spec });
        await price(q.instrument, q.bid, q.ask);
        const inst = instruments.get(q.instrument);
        const spread = q.ask - q.bid;
        // A buy limit 20 steps below the ask with a take profit 40 above it (mirrored for a sell).
        const level = inst.snap(q.side === 1 ? q.ask - 20 * q.tick : q.bid + 20 * q.tick);
        const tp = inst.snap(level + q.side * 40 * q.tick);
        const r = await call('POST', `${A}/orders`, {
          order: {
            type: 'LIMIT',
            instrument: q.instrument,
            units: String(q.side * 100),
            price: inst.price(level),
            takeProfitOnFill: { price: inst.price(tp) },
          },
        });
        expect(r.status).toBe(201);
        // A price through the limit: it fills at that price (better than its level), not worsened.
        const ask1 =
          q.side === 1 ? inst.snap(level - gap * q.tick) : inst.snap(level + gap * q.tick + spread);
        const bid1 = inst.snap(ask1 - spread);
        await price(q.instrument, bid1, ask1);
        const fill = await fillOf(r.body.orderCreateTransaction.id);
        expect(fill, `limit ${level} not filled by ${bid1}/${ask1}`).toBeDefined();
        expect(fill!.price).toBe(inst.price(q.side === 1 ? ask1 : bid1));
        const tradeID = fill!.tradeOpened.tradeID as string;
        const tpID = (await call('GET', `${A}/trades/${tradeID}`)).body.trade.takeProfitOrder.id as string;
        // A price through the take profit: the trade closes at that price, not worsened.
        const bid2 = q.side === 1 ? inst.snap(tp + gap * q.tick) : inst.snap(tp - gap * q.tick - spread);
        const ask2 = inst.snap(bid2 + spread);
        await price(q.instrument, bid2, ask2);
        expect((await call('GET', `${A}/trades/${tradeID}`)).body.trade.state).toBe('CLOSED');
        const tpFill = await fillOf(tpID);
        expect(tpFill!.reason).toBe('TAKE_PROFIT_ORDER');
        expect(tpFill!.price).toBe(inst.price(q.side === 1 ? bid2 : ask2));
      }),
      { numRuns: 40 },
    );
  });

  it('POST /sandbox/faults switches slippage on and off; bad values are 400 naming the field and change nothing', async () => {
    await price('EUR_USD', 1.1, 1.1002);
    await faults({ slippage: 'fixed:2' });
    const on = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(on.body.orderFillTransaction.price).toBe('1.10040');
    for (const [body, field] of [
      [{ slippage: 'fixed:lots' }, 'faults.slippage'],
      [{ slippage: 'sometimes' }, 'faults.slippage'],
      [{ slippage: 2 }, 'faults.slippage'],
      [{ latency: 'fixed:-5' }, 'faults.latency'],
      [{ latency: 'slow' }, 'faults.latency'],
      [{ latency: 'file:/nonexistent/delays.txt' }, 'faults.latency'],
      [{ slippage: 'none', latency: true }, 'faults.latency'],
    ] as const) {
      const r = await call('POST', `${sb.url}/sandbox/faults`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errorMessage).toContain(field);
    }
    // The refused sets changed nothing: still fixed:2.
    const still = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '-100' },
    });
    expect(still.body.orderFillTransaction.price).toBe('1.09980');
    // A fault set without slippage is the sandbox's own (none here).
    const off = await call('POST', `${sb.url}/sandbox/faults`, {});
    expect(off.body.faults).toEqual({});
    const plain = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(plain.body.orderFillTransaction.price).toBe('1.10020');
  });
});

describe('sandbox latency fault', () => {
  let sb: Sandbox;
  let A: string;
  beforeAll(async () => {
    sb = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      fill: { latencyTimeoutMs: 60_000 },
    });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  });
  afterAll(() => sb.close());

  /** Sends a market order without waiting for its answer (`answer`); resolves once the sandbox holds it back. */
  const marketOrder = async (
    units: string,
    instrument = 'EUR_USD',
  ): Promise<{ answer: Promise<{ status: number; body: Record<string, any> }> }> => {
    const before = sb.stats().delayedOrders;
    const answer = call('POST', `${A}/orders`, { order: { type: 'MARKET', instrument, units } });
    await until(() => sb.stats().delayedOrders > before, 'the sandbox holds the order back');
    return { answer };
  };

  it('a market order arriving at T fills at the price in force at T + delay, stamped T + delay; the answer waits for the clock', async () => {
    await call('POST', `${sb.url}/sandbox/faults`, { latency: 'fixed:500' });
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
    const T = sb.time();
    const { answer } = await marketOrder('1000');
    // Prices before the arrival do not fill it; the one in force at T + 500 does.
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10100', ask: '1.10120', time: T + 200 });
    expect(sb.stats().delayedOrders).toBe(1);
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10200', ask: '1.10220', time: T + 499 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10300', ask: '1.10320', time: T + 800 });
    const r = await answer;
    expect(r.status).toBe(201);
    expect(r.body.orderCreateTransaction.type).toBe('MARKET_ORDER');
    expect(r.body.orderFillTransaction.price).toBe('1.10220');
    expect(r.body.orderFillTransaction.time).toBe(formatTime(T + 500));
    expect(r.body.orderCreateTransaction.time).toBe(formatTime(T + 500));
    expect(r.body.relatedTransactionIDs).toEqual([
      r.body.orderCreateTransaction.id,
      r.body.orderFillTransaction.id,
    ]);
    expect(sb.stats().delayedOrders).toBe(0);
  });

  it('a price exactly at the arrival fills it; moving the clock without a price fills at the quote then', async () => {
    const T = sb.time();
    const { answer: first } = await marketOrder('-1000');
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10400', ask: '1.10420', time: T + 500 });
    const a = await first;
    expect(a.body.orderFillTransaction.price).toBe('1.10400');
    expect(a.body.orderFillTransaction.time).toBe(formatTime(T + 500));

    const T2 = sb.time();
    const { answer: second } = await marketOrder('1000');
    const moved = await call('POST', `${sb.url}/sandbox/advance`, { ms: 10_000 });
    expect(moved.status).toBe(200);
    const b = await second;
    expect(b.body.orderFillTransaction.price).toBe('1.10420');
    expect(b.body.orderFillTransaction.time).toBe(formatTime(T2 + 500));
  });

  it('a trade close waits for its latency too, and the take profit of a delayed fill is set from its fill', async () => {
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
    const T = sb.time();
    const before = sb.stats().delayedOrders;
    const opening = call('POST', `${A}/orders`, {
      order: {
        type: 'MARKET',
        instrument: 'EUR_USD',
        units: '2000',
        takeProfitOnFill: { distance: '0.00500' },
      },
    });
    await until(() => sb.stats().delayedOrders > before, 'the sandbox holds the order back');
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10050', ask: '1.10070', time: T + 500 });
    const open = await opening;
    expect(open.body.orderFillTransaction.price).toBe('1.10070');
    const tp = (await call('GET', `${A}/trades/${open.body.orderFillTransaction.tradeOpened.tradeID}`)).body
      .trade.takeProfitOrder;
    expect(tp.price).toBe('1.10570');
    const T2 = sb.time();
    const closing = call(
      'PUT',
      `${A}/trades/${open.body.orderFillTransaction.tradeOpened.tradeID}/close`,
      {},
    );
    await until(() => sb.stats().delayedOrders > 0, 'the sandbox holds the close back');
    // The price in force when the close arrives (T2 + 500) is the one pushed at T2 + 200.
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10010', ask: '1.10030', time: T2 + 200 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.09000', ask: '1.09020', time: T2 + 900 });
    const closed = await closing;
    expect(closed.status).toBe(200);
    expect(closed.body.orderFillTransaction.price).toBe('1.10010');
    expect(closed.body.orderFillTransaction.time).toBe(formatTime(T2 + 500));
    expect(closed.body.orderFillTransaction.tradesClosed[0].tradeID).toBe(
      open.body.orderFillTransaction.tradeOpened.tradeID,
    );
  });

  it('two orders in flight at once each get their own fill', async () => {
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
    const T = sb.time();
    const { answer: one } = await marketOrder('100');
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10010', ask: '1.10030', time: T + 100 });
    const { answer: two } = await marketOrder('-300');
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10500', ask: '1.10520', time: T + 500 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10600', ask: '1.10620', time: T + 600 });
    const [a, b] = await Promise.all([one, two]);
    expect([
      a.body.orderFillTransaction.units,
      a.body.orderFillTransaction.price,
      a.body.orderFillTransaction.time,
    ]).toEqual(['100', '1.10520', formatTime(T + 500)]);
    expect([
      b.body.orderFillTransaction.units,
      b.body.orderFillTransaction.price,
      b.body.orderFillTransaction.time,
    ]).toEqual(['-300', '1.10600', formatTime(T + 600)]);
  });

  it('switched off, a market order is answered at once with its fill', async () => {
    await until(() => sb.stats().delayedOrders === 0, 'the earlier close has filled');
    const off = await call('POST', `${sb.url}/sandbox/faults`, {});
    expect(off.status).toBe(200);
    sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(r.body.orderFillTransaction.price).toBe('1.10020');
    expect(r.body.orderFillTransaction.time).toBe(formatTime(sb.time()));
  });
});

describe('sandbox latency fault: recorded delays, limits and timeouts', () => {
  it('recorded delays that overtake: the later order arrives first and each answer carries its own fill', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-latency-'));
    writeFileSync(join(dir, 'delays.txt'), '# ms\n800\n100\n');
    const sb = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      fill: { latency: `file:${join(dir, 'delays.txt')}`, latencyTimeoutMs: 60_000 },
    });
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
      const T = sb.time();
      const slow = call('POST', `${A}/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
      });
      await until(() => sb.stats().delayedOrders === 1, 'the first order held back');
      const fast = call('POST', `${A}/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: '200' },
      });
      await until(() => sb.stats().delayedOrders === 2, 'the second order held back');
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10100', ask: '1.10120', time: T + 100 });
      const f = await fast;
      expect([
        f.body.orderFillTransaction.units,
        f.body.orderFillTransaction.price,
        f.body.orderFillTransaction.time,
      ]).toEqual(['200', '1.10120', formatTime(T + 100)]);
      expect(sb.stats().delayedOrders).toBe(1);
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10200', ask: '1.10220', time: T + 800 });
      const s = await slow;
      expect([
        s.body.orderFillTransaction.units,
        s.body.orderFillTransaction.price,
        s.body.orderFillTransaction.time,
      ]).toEqual(['100', '1.10220', formatTime(T + 800)]);
      expect(Number(s.body.orderCreateTransaction.id)).toBeGreaterThan(
        Number(f.body.orderFillTransaction.id),
      );
    } finally {
      await sb.close();
    }
  });

  it('a limit is created at once and acts only on prices from its arrival on', async () => {
    const sb = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      fill: { latency: 'fixed:1000' },
    });
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
      const T = sb.time();
      const r = await call('POST', `${A}/orders`, {
        order: { type: 'LIMIT', instrument: 'EUR_USD', units: '100', price: '1.09900' },
      });
      expect(r.status).toBe(201);
      expect(r.body.orderCreateTransaction.time).toBe(formatTime(T));
      // Through its level before it arrives: no fill.
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.09850', ask: '1.09870', time: T + 400 });
      expect((await call('GET', `${A}/orders/${r.body.orderCreateTransaction.id}`)).body.order.state).toBe(
        'PENDING',
      );
      // The clock passes its arrival with that price in force: it fills then, at that price.
      sb.advance(2000);
      const o = (await call('GET', `${A}/orders/${r.body.orderCreateTransaction.id}`)).body.order;
      expect(o.state).toBe('FILLED');
      const fill = (await call('GET', `${A}/transactions/${o.fillingTransactionID}`)).body.transaction;
      expect([fill.price, fill.time]).toEqual(['1.09870', formatTime(T + 1000)]);
    } finally {
      await sb.close();
    }
  });

  it('an answer the clock does not reach in time is a 504 that says so; the order still fills when it gets there', async () => {
    const sb = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      fill: { latency: 'fixed:1000', latencyTimeoutMs: 50 },
    });
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
      const T = sb.time();
      // The manual clock never moves while the request waits: it times out whatever the machine's speed.
      const r = await call('POST', `${A}/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
      });
      expect(r.status).toBe(504);
      expect(r.body.errorMessage).toContain(formatTime(T + 1000));
      expect(r.body.errorMessage).toContain('latencyTimeoutMs');
      sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10100', ask: '1.10120', time: T + 1500 });
      const txs = (await call('GET', `${A}/transactions/sinceid?id=2`)).body.transactions as Tx[];
      expect(txs.map((t) => t.type)).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
      expect([txs[1]!.price, txs[1]!.time]).toEqual(['1.10020', formatTime(T + 1000)]);
    } finally {
      await sb.close();
    }
  });

  it('a bad fill option stops the start with the field named', async () => {
    await expect(startSandbox({ fill: { slippage: 'fixed:x' } })).rejects.toThrow(/fill\.slippage/);
    await expect(startSandbox({ fill: { latency: 'file:/nonexistent/delays.txt' } })).rejects.toThrow(
      /fill\.latency file \/nonexistent\/delays\.txt/,
    );
    await expect(startSandbox({ fill: { latencyTimeoutMs: 0 } })).rejects.toThrow(/fill\.latencyTimeoutMs/);
  });
});
