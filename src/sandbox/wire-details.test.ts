import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/**
 * The smaller deviations of issue 26, each decided from the documentation (docs/sandbox.md, the
 * differences tables): the Bearer scheme in any case, bodies read as JSON whatever their
 * Content-Type, units checked by value ("1000.0"), the /v1 trade close's side, a REDUCE_ONLY FOK
 * larger than the position, and resettablePLTime as the live service sends it.
 */

const WEDNESDAY = '2024-01-03T10:00:00Z';
let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function open(opts: Parameters<typeof startSandbox>[0] = {}): Promise<{ sb: Sandbox; A: string }> {
  sb = await startSandbox({ feed: false, start: WEDNESDAY, ...opts });
  sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  return { sb, A: `${sb.url}/v3/accounts/${sb.accountIDs[0]}` };
}

describe('issue 26, the smaller items', () => {
  it('the authorization scheme is case-insensitive: bearer, BEARER and Bearer all carry the token', async () => {
    const { sb: s } = await open({ requireToken: 'tok-123' });
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'beArer']) {
      const r = await call('GET', `${s.url}/v3/accounts`, undefined, { Authorization: `${scheme} tok-123` });
      expect(r.status, scheme).toBe(200);
    }
    expect(
      (await call('GET', `${s.url}/v3/accounts`, undefined, { Authorization: 'bearer wrong' })).status,
    ).toBe(401);
    expect(
      (await call('GET', `${s.url}/v3/accounts`, undefined, { Authorization: 'Basic tok-123' })).status,
    ).toBe(401);
  });

  it('a JSON body is read as JSON whatever its Content-Type (curl -d labels it a form); a body that is not JSON says what to send', async () => {
    const { A } = await open();
    const order = JSON.stringify({ order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' } });
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const r = await fetch(`${A}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': type },
        body: order,
      });
      expect(r.status, type).toBe(201);
    }
    const bad = await fetch(`${A}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'type=MARKET&units=100',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errorMessage: string }).errorMessage).toMatch(
      /read as JSON whatever its Content-Type \(it was 'application\/x-www-form-urlencoded'\): send a JSON object, with Content-Type: application\/json/,
    );
  });

  it('units are checked by value: "1000.0" is 1000 units of EUR_USD; "1000.5" is refused', async () => {
    const { A } = await open();
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '1000.0' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.orderFillTransaction.units).toBe('1000');
    const frac = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '1000.5' },
    });
    expect(frac.status).toBe(400);
    expect(frac.body.errorCode).toBe('UNITS_PRECISION_EXCEEDED');
  });

  it('a REDUCE_ONLY FOK sell of 5000 against a long 2000 is killed, not filled in part', async () => {
    const { A } = await open();
    expect(
      (await call('POST', `${A}/orders`, { order: { type: 'MARKET', instrument: 'EUR_USD', units: '2000' } }))
        .status,
    ).toBe(201);
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '-5000', positionFill: 'REDUCE_ONLY' },
    });
    expect(r.status).toBe(201);
    expect(r.body.orderFillTransaction).toBeUndefined();
    expect(r.body.orderCancelTransaction.reason).toBe('POSITION_CLOSEOUT_FAILED');
    expect((await call('GET', `${A}/positions/EUR_USD`)).body.position.long.units).toBe('2000');
  });

  it('/v1: closing a short trade answers side "buy", as its TRADE_CLOSE in the history', async () => {
    const { sb: s } = await open();
    const acct = (await call('GET', `${s.url}/v1/accounts`)).body.accounts[0].accountId as number;
    const v1 = `${s.url}/v1/accounts/${acct}`;
    const sell = await fetch(`${v1}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'instrument=EUR_USD&units=100&side=sell&type=market',
    });
    expect(sell.status).toBe(200);
    const tradeID = ((await sell.json()) as { tradeOpened: { id: number } }).tradeOpened.id;
    const closed = await call('DELETE', `${v1}/trades/${tradeID}`);
    expect(closed.status).toBe(200);
    expect(closed.body.side).toBe('buy');
    const txs = (await call('GET', `${v1}/transactions`)).body.transactions as {
      id: number;
      type: string;
      side: string;
    }[];
    expect(txs.find((t) => t.id === closed.body.id)).toMatchObject({ type: 'TRADE_CLOSE', side: 'buy' });
  });

  it('resettablePLTime is "0" as the live service sends it (a never-reset account), in both time formats', async () => {
    const { A } = await open();
    expect((await call('GET', A)).body.account.resettablePLTime).toBe('0');
    expect(
      (await call('GET', A, undefined, { 'Accept-Datetime-Format': 'UNIX' })).body.account.resettablePLTime,
    ).toBe('0');
  });
});
