import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../domain/v20/index.ts';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';
import { FinishedCache, TransactionLog } from './transaction-log.ts';

const tx = (id: number, timeMs = id * 1000): Transaction =>
  ({
    id: String(id),
    time: new Date(timeMs).toISOString(),
    type: 'DAILY_FINANCING',
  }) as unknown as Transaction;

describe('TransactionLog', () => {
  it('keeps exactly the newest `capacity` transactions, by ID', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 200 }), (cap, n) => {
        const log = new TransactionLog(cap);
        for (let i = 1; i <= n; i++) log.push(tx(i));
        const oldest = Math.max(1, n - cap + 1);
        expect(log.lastID).toBe(n);
        expect(log.oldestID).toBe(oldest);
        expect(log.length).toBe(n - oldest + 1);
        for (let id = 0; id <= n + 1; id++) {
          const t = log.get(id);
          if (id >= oldest && id <= n) expect(t?.id).toBe(String(id));
          else expect(t).toBeUndefined();
        }
        // range clamps to what is kept and stays in ID order.
        expect(log.range(1, n).map((t) => Number(t.id))).toEqual(
          Array.from({ length: n - oldest + 1 }, (_, i) => oldest + i),
        );
      }),
    );
  });

  it('finds the first transaction at or after a time by binary search', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: -5, max: 300 }),
        (steps, cap, probe) => {
          const log = new TransactionLog(cap);
          let t = 0;
          const times: number[] = [];
          steps.forEach((d, i) => {
            t += d;
            times.push(t);
            log.push(tx(i + 1, t));
          });
          const timeOf = (x: Transaction): number => Date.parse(x.time);
          let want = log.lastID + 1;
          for (let id = log.oldestID; id <= log.lastID; id++) {
            if (times[id - 1]! >= probe) {
              want = id;
              break;
            }
          }
          expect(log.firstAtOrAfter(probe, timeOf)).toBe(want);
        },
      ),
    );
  });

  it('refuses IDs that do not follow', () => {
    const log = new TransactionLog(4);
    log.push(tx(1));
    expect(() => log.push(tx(3))).toThrow(/does not follow 1/);
    expect(() => new TransactionLog(0)).toThrow(/>= 1/);
  });
});

describe('FinishedCache', () => {
  it('holds at most `capacity` items, forgetting the oldest first and saying which', () => {
    const evicted: string[] = [];
    const c = new FinishedCache<number>(3, (id) => evicted.push(id));
    for (let i = 1; i <= 5; i++) c.set(String(i), i);
    expect([...c.values()]).toEqual([3, 4, 5]);
    expect(evicted).toEqual(['1', '2']);
    c.set('3', 33); // set again: now the newest
    c.set('6', 6);
    expect([...c.values()]).toEqual([5, 33, 6]);
  });
});

describe('sandbox: a capped transaction log (keepTransactions: 10)', () => {
  let sb: Sandbox;
  let A: string;
  let limitID: string;
  beforeAll(async () => {
    sb = await startSandbox({ keepTransactions: 10 });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    const limit = await call('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '100', price: '0.5' },
    });
    limitID = limit.body.orderCreateTransaction.id;
    // 12 market orders: 24 more transactions (create + fill), opening and closing trades.
    for (let i = 0; i < 12; i++) {
      const r = await call('POST', `${A}/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: i % 2 === 0 ? '100' : '-100' },
      });
      expect(r.status).toBe(201);
    }
  });
  afterAll(() => sb.close());

  it('serves the newest transactions and answers 416 for ranges it forgot', async () => {
    const acc = await call('GET', A);
    const last = Number(acc.body.lastTransactionID);
    const oldest = last - 9;
    const kept = await call('GET', `${A}/transactions/sinceid?id=${oldest - 1}`);
    expect(kept.status).toBe(200);
    expect(kept.body.transactions.map((t: { id: string }) => Number(t.id))).toEqual(
      Array.from({ length: 10 }, (_, i) => oldest + i),
    );
    for (const path of [
      `/transactions/sinceid?id=1`,
      `/transactions/idrange?from=1&to=5`,
      `/changes?sinceTransactionID=1`,
      `/transactions?type=ORDER_FILL`,
    ]) {
      const r = await call('GET', `${A}${path}`);
      expect(r.status, path).toBe(416);
      expect(r.body.errorMessage).toMatch(/no longer available.*keeps the newest 10/);
    }
    const one = await call('GET', `${A}/transactions/1`);
    expect(one.status).toBe(404);
    expect(one.body.errorMessage).toMatch(/older than the oldest this sandbox keeps/);
    const changes = await call('GET', `${A}/changes?sinceTransactionID=${oldest - 1}`);
    expect(changes.status).toBe(200);
    expect(changes.body.changes.transactions).toHaveLength(10);
    // The page list still covers the whole history; the forgotten pages answer 416.
    const pages = await call('GET', `${A}/transactions?pageSize=5`);
    expect(pages.status).toBe(200);
    expect(pages.body.count).toBe(last);
    const first = await call('GET', pages.body.pages[0]);
    expect(first.status).toBe(416);
    const newest = await call('GET', pages.body.pages[pages.body.pages.length - 1]);
    expect(newest.status).toBe(200);
  });

  it('keeps every pending order, and at most 10 finished orders and closed trades', async () => {
    expect((await call('GET', `${A}/orders/${limitID}`)).body.order.state).toBe('PENDING');
    const all = await call('GET', `${A}/orders?state=ALL&count=500`);
    const finished = all.body.orders.filter((o: { state: string }) => o.state !== 'PENDING');
    expect(finished).toHaveLength(10);
    const closed = await call('GET', `${A}/trades?state=CLOSED&count=500`);
    expect(closed.body.trades.length).toBeLessThanOrEqual(10);
    expect(closed.body.trades.length).toBeGreaterThan(0);
  });
});

describe('sandbox: /changes more than 500 transactions back', () => {
  it('is a 416 telling the client to re-read the account, and never a huge answer', async () => {
    const sb = await startSandbox();
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      const batch = Array.from({ length: 10 }, () => null);
      for (let i = 0; i < 26; i++) {
        await Promise.all(
          batch.map((_, k) =>
            call('POST', `${A}/orders`, {
              order: { type: 'MARKET', instrument: 'EUR_USD', units: k % 2 === 0 ? '1' : '-1' },
            }),
          ),
        );
      }
      const last = Number((await call('GET', A)).body.lastTransactionID);
      expect(last).toBeGreaterThan(501);
      const r = await call('GET', `${A}/changes?sinceTransactionID=1`);
      expect(r.status).toBe(416);
      expect(r.body.errorMessage).toMatch(/serves at most 500.*GET \/v3\/accounts\//);
      expect((await call('GET', `${A}/changes?sinceTransactionID=${last - 500}`)).status).toBe(200);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
