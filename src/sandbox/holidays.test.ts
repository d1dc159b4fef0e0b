import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/** The sandbox closes the market calendar's days (data/market-calendar.json) as the simulator does. */

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('holidays in the sandbox', () => {
  it('on Christmas Day (a Wednesday) prices are non-tradeable and a market order is MARKET_HALTED; at 17:00 New York it trades again', async () => {
    sb = await startSandbox({ feed: false, start: '2024-12-24T20:00:00Z', heartbeatMs: 50 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.04, ask: 1.0402 });
    const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    const eve = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect(eve.body.prices[0].tradeable).toBe(true);
    sb.setTime('2024-12-25T12:00:00Z');
    const day = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect([day.body.prices[0].tradeable, day.body.prices[0].status]).toEqual([false, 'non-tradeable']);
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(m.body.orderCancelTransaction.reason).toBe('MARKET_HALTED');
    expect(m.body.orderCreateTransaction.time).toMatch(/^2024-12-25T12:00:00/);
    sb.setTime('2024-12-25T22:00:00Z');
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.04, ask: 1.0402 });
    const after = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(after.status, JSON.stringify(after.body)).toBe(201);
    expect(after.body.orderFillTransaction).toBeDefined();
  });

  it('on an early close (24 December 2013, 14:00 New York) prices turn non-tradeable and a market order is MARKET_HALTED until the reopen on the 25th', async () => {
    sb = await startSandbox({ feed: false, start: '2013-12-24T18:30:00Z', heartbeatMs: 50 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.3701, ask: 1.3703 });
    const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    const before = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect(before.body.prices[0].tradeable).toBe(true);
    sb.setTime('2013-12-24T19:30:00Z');
    const after = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect(after.body.prices[0].tradeable).toBe(false);
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(m.body.orderCancelTransaction.reason).toBe('MARKET_HALTED');
    sb.setTime('2013-12-25T22:00:00Z');
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.3701, ask: 1.3703 });
    const reopen = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(reopen.status, JSON.stringify(reopen.body)).toBe(201);
    expect(reopen.body.orderFillTransaction).toBeDefined();
  });
});
