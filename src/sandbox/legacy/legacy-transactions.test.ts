/**
 * Legacy transaction types the market and the clock make (not the client): margin closeout, daily
 * interest, the opening deposit, set margin rate; and the rate limit's injectable clock.
 */
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../server.ts';
import { call } from '../testkit.ts';
import { LEGACY_TX_SOURCES } from './shapes.ts';

type Tx = { id: number; type: string; [k: string]: unknown };

describe('legacy transactions the simulator makes', () => {
  it('TRANSFER_FUNDS, SET_MARGIN_RATE, DAILY_INTEREST and MARGIN_CLOSEOUT, each the view of its v20 transaction', async () => {
    const sb = await startSandbox({
      feed: false,
      accounts: [{ balance: '1000', marginRate: '0.02' }],
      marketHours: false,
    });
    try {
      const v3 = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      const acct = (await call('GET', `${sb.url}/v1/accounts`)).body.accounts[0].accountId as number;
      const v1 = `${sb.url}/v1/accounts/${acct}`;
      sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
      expect((await call('PATCH', `${v3}/configuration`, { marginRate: '0.05' })).status).toBe(200);
      expect((await call('PATCH', `${v3}/configuration`, { marginRate: '0.02' })).status).toBe(200);
      // 10,000 units need 550 USD of margin of the 1,000 (EUR_USD's rate, 5%, is above the account's).
      const buy = await fetch(`${v1}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'instrument=EUR_USD&units=10000&side=buy&type=market',
      });
      expect(buy.status).toBe(200);
      // Past 17:00 New York: daily financing on the open trade.
      sb.setTime('2024-01-02T23:00:00Z');
      // Down 8 cents: a loss of 800 USD puts the closeout value below half the margin used.
      sb.pushPrice({ instrument: 'EUR_USD', bid: 1.02, ask: 1.0202 });
      const txs = (await call('GET', `${v1}/transactions`)).body.transactions as Tx[];
      const types = txs.map((t) => t.type);
      expect(types).toContain('TRANSFER_FUNDS');
      expect(txs.find((t) => t.type === 'TRANSFER_FUNDS')).toMatchObject({
        amount: 1000,
        accountBalance: 1000,
        reason: 'CLIENT_REQUEST',
      });
      expect(txs.filter((t) => t.type === 'SET_MARGIN_RATE').map((t) => t.marginRate)).toEqual([0.02, 0.05]);
      expect(txs.find((t) => t.type === 'SET_MARGIN_RATE')!.rate).toBe(0.02);
      const interest = txs.find((t) => t.type === 'DAILY_INTEREST');
      expect(interest, `types: ${types.join(', ')}`).toMatchObject({ instrument: 'EUR_USD' });
      expect(typeof interest!.interest).toBe('number');
      const closeout = txs.find((t) => t.type === 'MARGIN_CLOSEOUT');
      expect(closeout, `types: ${types.join(', ')}`).toMatchObject({
        instrument: 'EUR_USD',
        side: 'sell',
        units: 10000,
        price: 1.02,
      });
      expect(closeout!.pl as number).toBeCloseTo((1.02 - 1.1002) * 10000, 4);
      expect(closeout!.tradeId).toBe(
        (txs.find((t) => t.type === 'MARKET_ORDER_CREATE')!.tradeOpened as { id: number }).id,
      );
      expect((await call('GET', `${v1}/trades`)).body.trades).toEqual([]);
      // Each is the view of the v20 transaction with the same ID.
      for (const t of txs) {
        const v = (await call('GET', `${v3}/transactions/${t.id}`)).body.transaction as { type: string };
        expect(LEGACY_TX_SOURCES[t.type], `${t.type} ${t.id}`).toContain(v.type);
      }
    } finally {
      await sb.close();
    }
  });

  it('an order for an instrument without a price yet is refused, not left in flight', async () => {
    const sb = await startSandbox({ feed: false });
    try {
      const r = await fetch(`${sb.url}/v1/accounts/${sb.accountIDs[0]}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'instrument=EUR_USD&units=100&side=buy&type=market',
      });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { message: string }).message).toMatch(/No price for EUR_USD yet/);
      sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
      // Nothing was queued: the price fills nothing.
      expect((await call('GET', `${sb.url}/v1/accounts/${sb.accountIDs[0]}/trades`)).body.trades).toEqual([]);
    } finally {
      await sb.close();
    }
  });

  it('a filter that matches rarely answers a short page with a Link to go on (bounded scan); following it finds every match', async () => {
    const sb = await startSandbox({ feed: false, marketHours: false, legacyMaxScan: 10 });
    try {
      sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
      sb.pushPrice({ instrument: 'USD_JPY', bid: 140, ask: 140.02 });
      const v1 = `${sb.url}/v1/accounts/${sb.accountIDs[0]}`;
      const order = (instrument: string): Promise<Response> =>
        fetch(`${v1}/orders`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `instrument=${instrument}&units=1&side=buy&type=market`,
        });
      expect((await order('USD_JPY')).status).toBe(200);
      for (let i = 0; i < 15; i++) expect((await order('EUR_USD')).status).toBe(200);
      // 32 transactions after the one USD_JPY fill: the first page looks at 10 and finds nothing.
      let url: string | undefined = `${v1}/transactions?instrument=USD_JPY`;
      const found: number[] = [];
      let pages = 0;
      while (url !== undefined) {
        const r: { headers: Headers; body: { transactions: { id: number }[] } } = await call('GET', url);
        pages++;
        found.push(...r.body.transactions.map((t) => t.id));
        const link: string | null = r.headers.get('link');
        url = link === null ? undefined : /^<([^>]+)>/.exec(link)![1];
      }
      expect(pages).toBeGreaterThan(3);
      expect(found).toHaveLength(1);
      const all = (await call('GET', `${v1}/transactions?ids=${found[0]}`)).body.transactions;
      expect(all[0]).toMatchObject({ type: 'MARKET_ORDER_CREATE', instrument: 'USD_JPY' });
    } finally {
      await sb.close();
    }
  });

  it('one transaction listing with count per 60 s, on an injectable clock', async () => {
    let clock = 0;
    const sb = await startSandbox({ feed: false, legacyRateClock: () => clock });
    try {
      const url = `${sb.url}/v1/accounts/${sb.accountIDs[0]}/transactions`;
      expect((await call('GET', `${url}?count=1`)).status).toBe(200);
      clock += 59_999;
      const limited = await call('GET', `${url}?count=1`);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      expect(limited.body.message).toMatch(/one transaction listing with 'count' per 60 seconds/);
      // Without count: not limited.
      expect((await call('GET', url)).status).toBe(200);
      clock += 1;
      expect((await call('GET', `${url}?count=1`)).status).toBe(200);
      expect((await call('GET', `${url}?count=1`)).status).toBe(429);
    } finally {
      await sb.close();
    }
  });
});
