import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/** The sandbox's clock jumps give the simulator's timed events in time order (src/adapters/sim/clock.test.ts has the property). */

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('timed events over HTTP', () => {
  it('POST /sandbox/time over a GTD due 12:00Z and the 22:00Z financing: the cancel is stamped 12:00Z, before the financing', async () => {
    sb = await startSandbox({ feed: false, start: '2024-01-03T10:00:00Z' });
    const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    expect(
      (
        await call('POST', `${A}/orders`, {
          order: { type: 'MARKET', instrument: 'EUR_USD', units: '10000' },
        })
      ).status,
    ).toBe(201);
    const limit = await call('POST', `${A}/orders`, {
      order: {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '100',
        price: '1.00000',
        timeInForce: 'GTD',
        gtdTime: '2024-01-03T12:00:00Z',
      },
    });
    expect(limit.status).toBe(201);
    const last = Number(limit.body.lastTransactionID);
    expect((await call('POST', `${sb.url}/sandbox/time`, { time: '2024-01-03T23:00:00Z' })).status).toBe(200);
    const txs = (await call('GET', `${A}/transactions/sinceid?id=${last}`)).body.transactions as {
      type: string;
      time: string;
      orderID?: string;
      reason?: string;
    }[];
    expect(txs.map((t) => [t.type, t.time])).toEqual([
      ['ORDER_CANCEL', '2024-01-03T12:00:00.000000000Z'],
      ['DAILY_FINANCING', '2024-01-03T22:00:00.000000000Z'],
    ]);
    expect(txs[0]).toMatchObject({
      orderID: limit.body.orderCreateTransaction.id,
      reason: 'TIME_IN_FORCE_EXPIRED',
    });
  });
});
