/**
 * One account, two generations: random mixes of legacy (/v1) and current (/v3) calls against a real
 * sandbox over HTTP. After every step both views agree: balance, P/L, open trades (IDs, units, prices,
 * take profit and stop loss), pending orders, and every new transaction has its counterpart.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../server.ts';
import { LEGACY_TX_SOURCES } from './shapes.ts';

type Obj = Record<string, any>;

async function json(
  method: string,
  url: string,
  body?: unknown,
  form = false,
): Promise<{ status: number; body: Obj }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { 'Content-Type': form ? 'application/x-www-form-urlencoded' : 'application/json' };
    init.body = form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
  }
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, body: text === '' ? {} : (JSON.parse(text) as Obj) };
}

type Step =
  | { g: 'v1' | 'v3'; op: 'market'; units: number; tp: boolean; sl: boolean }
  | { g: 'v1' | 'v3'; op: 'limit'; units: number }
  | { g: 'v1' | 'v3'; op: 'close'; pick: number }
  | { g: 'v1' | 'v3'; op: 'cancel'; pick: number }
  | { g: 'v1' | 'v3'; op: 'protect'; pick: number; remove: boolean }
  | { g: 'v1'; op: 'patchOrder'; pick: number; units: number }
  | { op: 'move'; pips: number };

const gen = fc.constantFrom<'v1' | 'v3'>('v1', 'v3');
const signed = fc.integer({ min: 1, max: 20 }).chain((u) => fc.constantFrom(u * 100, -u * 100));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    g: gen,
    op: fc.constant('market' as const),
    units: signed,
    tp: fc.boolean(),
    sl: fc.boolean(),
  }),
  fc.record({ g: gen, op: fc.constant('limit' as const), units: signed }),
  fc.record({ g: gen, op: fc.constant('close' as const), pick: fc.nat(5) }),
  fc.record({ g: gen, op: fc.constant('cancel' as const), pick: fc.nat(5) }),
  fc.record({ g: gen, op: fc.constant('protect' as const), pick: fc.nat(5), remove: fc.boolean() }),
  fc.record({
    g: fc.constant('v1' as const),
    op: fc.constant('patchOrder' as const),
    pick: fc.nat(5),
    units: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({ op: fc.constant('move' as const), pips: fc.integer({ min: -40, max: 40 }) }),
);

const fixed = (x: number): string => x.toFixed(5);

describe('one account, two generations', () => {
  it('balances, open trades, pending orders and transactions agree in /v1 and /v3 at every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
        const sb: Sandbox = await startSandbox({ feed: false });
        try {
          await run(sb, steps);
        } finally {
          await sb.close();
        }
      }),
      { numRuns: 15 },
    );
  }, 120_000);
});

async function run(sb: Sandbox, steps: readonly Step[]): Promise<void> {
  const v3 = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  const accounts = await json('GET', `${sb.url}/v1/accounts`);
  const v1 = `${sb.url}/v1/accounts/${accounts.body.accounts[0].accountId}`;
  let mid = 1.1;
  sb.pushPrice({ instrument: 'EUR_USD', bid: mid - 0.0001, ask: mid + 0.0001 });
  let checked = (await json('GET', `${v3}/summary`)).body.lastTransactionID as string;

  for (const s of steps) {
    const trades = (await json('GET', `${v3}/openTrades`)).body.trades as Obj[];
    const pending = ((await json('GET', `${v3}/pendingOrders`)).body.orders as Obj[]).filter(
      (o) => o.type === 'LIMIT',
    );
    const legacyOrders = (await json('GET', `${v1}/orders`)).body.orders as Obj[];
    switch (s.op) {
      case 'move':
        mid += s.pips * 0.0001;
        sb.pushPrice({ instrument: 'EUR_USD', bid: mid - 0.0001, ask: mid + 0.0001 });
        break;
      case 'market': {
        const tp = fixed(mid + Math.sign(s.units) * 0.005);
        const sl = fixed(mid - Math.sign(s.units) * 0.005);
        if (s.g === 'v1') {
          const f: Record<string, string> = {
            instrument: 'EUR_USD',
            units: String(Math.abs(s.units)),
            side: s.units > 0 ? 'buy' : 'sell',
            type: 'market',
          };
          if (s.tp) f.takeProfit = tp;
          if (s.sl) f.stopLoss = sl;
          expect((await json('POST', `${v1}/orders`, f, true)).status).toBe(200);
        } else {
          const order: Obj = { type: 'MARKET', instrument: 'EUR_USD', units: String(s.units) };
          if (s.tp) order.takeProfitOnFill = { price: tp };
          if (s.sl) order.stopLossOnFill = { price: sl };
          expect((await json('POST', `${v3}/orders`, { order })).status).toBe(201);
        }
        break;
      }
      case 'limit': {
        // Far from the market, so it stays pending.
        const price = fixed(mid - Math.sign(s.units) * 0.02);
        if (s.g === 'v1') {
          const r = await json(
            'POST',
            `${v1}/orders`,
            {
              instrument: 'EUR_USD',
              units: String(Math.abs(s.units)),
              side: s.units > 0 ? 'buy' : 'sell',
              type: 'limit',
              price,
              expiry: '2030-01-01T00:00:00Z',
            },
            true,
          );
          expect(r.status).toBe(201);
        } else {
          expect(
            (
              await json('POST', `${v3}/orders`, {
                order: { type: 'LIMIT', instrument: 'EUR_USD', units: String(s.units), price },
              })
            ).status,
          ).toBe(201);
        }
        break;
      }
      case 'close': {
        const t = trades[s.pick % Math.max(trades.length, 1)];
        if (!t) break;
        const r =
          s.g === 'v1'
            ? await json('DELETE', `${v1}/trades/${t.id}`)
            : await json('PUT', `${v3}/trades/${t.id}/close`, {});
        expect(r.status).toBe(200);
        break;
      }
      case 'cancel': {
        if (s.g === 'v1') {
          const o = legacyOrders[s.pick % Math.max(legacyOrders.length, 1)];
          if (o) expect((await json('DELETE', `${v1}/orders/${o.id}`)).status).toBe(200);
        } else {
          const o = pending[s.pick % Math.max(pending.length, 1)];
          if (o) expect((await json('PUT', `${v3}/orders/${o.id}/cancel`)).status).toBe(200);
        }
        break;
      }
      case 'protect': {
        const t = trades[s.pick % Math.max(trades.length, 1)];
        if (!t) break;
        const long = Number(t.currentUnits) > 0;
        const tp = fixed(mid + (long ? 0.01 : -0.01));
        if (s.g === 'v1') {
          expect(
            (await json('PATCH', `${v1}/trades/${t.id}`, { takeProfit: s.remove ? '0' : tp }, true)).status,
          ).toBe(200);
        } else if (!s.remove || t.takeProfitOrder) {
          expect(
            (
              await json('PUT', `${v3}/trades/${t.id}/orders`, {
                takeProfit: s.remove ? null : { price: tp },
              })
            ).status,
          ).toBe(200);
        }
        break;
      }
      case 'patchOrder': {
        const o = legacyOrders[s.pick % Math.max(legacyOrders.length, 1)];
        if (!o) break;
        const r = await json('PATCH', `${v1}/orders/${o.id}`, { units: String(s.units * 100) }, true);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ id: o.id, units: s.units * 100, price: o.price, side: o.side });
        break;
      }
    }
    checked = await agree(v1, v3, checked);
  }
}

/** Both views agree; every transaction after `since` has its counterpart. Returns the last ID. */
async function agree(v1: string, v3: string, since: string): Promise<string> {
  const a1 = (await json('GET', v1)).body;
  const a3 = (await json('GET', `${v3}/summary`)).body.account as Obj;
  expect(a1.balance).toBe(Number(a3.balance));
  expect(a1.realizedPl).toBe(Number(a3.pl));
  expect(a1.unrealizedPl).toBe(Number(a3.unrealizedPL));
  expect(a1.openTrades).toBe(a3.openTradeCount);

  const t1 = (await json('GET', `${v1}/trades`)).body.trades as Obj[];
  const t3 = (await json('GET', `${v3}/openTrades`)).body.trades as Obj[];
  expect(
    t1.map((t) => ({
      id: t.id,
      units: t.side === 'sell' ? -t.units : t.units,
      price: t.price,
      takeProfit: t.takeProfit,
      stopLoss: t.stopLoss,
    })),
  ).toEqual(
    t3.map((t) => ({
      id: Number(t.id),
      units: Number(t.currentUnits),
      price: Number(t.price),
      takeProfit: Number(t.takeProfitOrder?.price ?? 0),
      stopLoss: Number(t.stopLossOrder?.price ?? 0),
    })),
  );

  const o1 = (await json('GET', `${v1}/orders`)).body.orders as Obj[];
  const o3 = ((await json('GET', `${v3}/pendingOrders`)).body.orders as Obj[]).filter(
    (o) => o.type === 'LIMIT',
  );
  const key = (units: number, price: number): string => `${units}@${price}`;
  expect(o1.map((o) => key(o.side === 'sell' ? -o.units : o.units, o.price)).sort()).toEqual(
    o3.map((o) => key(Number(o.units), Number(o.price))).sort(),
  );
  expect(a1.openOrders).toBe(o3.length);

  const last = a3.lastTransactionID as string;
  if (Number(last) > Number(since)) {
    const x3 = (await json('GET', `${v3}/transactions/idrange?from=${Number(since) + 1}&to=${last}`)).body
      .transactions as Obj[];
    const x1 = (await json('GET', `${v1}/transactions?minId=${Number(since) + 1}`)).body
      .transactions as Obj[];
    const byID = new Map(x3.map((t) => [Number(t.id), t]));
    for (const t of x1) {
      const v = byID.get(t.id);
      expect(v, `legacy transaction ${t.id} ${t.type} has a v20 counterpart`).toBeDefined();
      expect(LEGACY_TX_SOURCES[t.type], `${t.type} comes from ${v!.type}`).toContain(v!.type);
      if (t.accountBalance !== undefined && v!.accountBalance !== undefined)
        expect(t.accountBalance).toBe(Number(v!.accountBalance));
    }
    // And the reverse: every fill and every client order or cancel made through either generation is in /v1.
    const legacyIDs = new Set(x1.map((t) => t.id));
    for (const t of x3) {
      const counted =
        t.type === 'ORDER_FILL' ||
        t.type === 'LIMIT_ORDER' ||
        (t.type === 'ORDER_CANCEL' && t.reason === 'CLIENT_REQUEST');
      if (counted)
        expect(legacyIDs.has(Number(t.id)), `v20 ${t.type} ${t.id} (${t.reason}) shows in /v1`).toBe(true);
    }
  }
  return last;
}
