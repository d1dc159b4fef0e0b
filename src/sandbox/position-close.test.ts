import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/**
 * PUT /positions/{instrument}/close over real HTTP, every request side (longUnits / shortUnits,
 * ALL / a number of units within or beyond the side) against every position (long 5000, short
 * 5000, none): a refused side is answered under its own key (`longOrderRejectTransaction` /
 * `shortOrderRejectTransaction`) with the reason v20 defines, and nothing is closed.
 */

const WEDNESDAY = '2024-01-03T10:00:00Z';
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ feed: false, start: WEDNESDAY });
  sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
});
afterAll(async () => {
  await sb.close();
});

type Have = 'long' | 'short' | 'none';
type Ask = { longUnits?: string; shortUnits?: string };
let n = 0;

/** A fresh account per case: the sandbox has one, so each case flattens it first. */
async function withPosition(have: Have): Promise<string> {
  const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  const p = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
  if (Number(p.long.units) !== 0) await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
  if (Number(p.short.units) !== 0) await call('PUT', `${A}/positions/EUR_USD/close`, { shortUnits: 'ALL' });
  if (have !== 'none') {
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: have === 'long' ? '5000' : '-5000' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  n++;
  return A;
}

// [asked, position, expected: 200 with the filled side(s), or 400 with the refused side and reason]
const cases: [Ask, Have, { ok: ('long' | 'short')[] } | { side: 'long' | 'short'; reason: string }][] = [
  [{ longUnits: 'ALL' }, 'long', { ok: ['long'] }],
  [{ longUnits: 'ALL' }, 'short', { side: 'long', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ longUnits: 'ALL' }, 'none', { side: 'long', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ longUnits: '1000' }, 'long', { ok: ['long'] }],
  [{ longUnits: '99999' }, 'long', { side: 'long', reason: 'CLOSEOUT_POSITION_UNITS_EXCEED_POSITION_SIZE' }],
  [{ longUnits: '1000' }, 'short', { side: 'long', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ longUnits: '1000' }, 'none', { side: 'long', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ shortUnits: 'ALL' }, 'short', { ok: ['short'] }],
  [{ shortUnits: 'ALL' }, 'long', { side: 'short', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ shortUnits: 'ALL' }, 'none', { side: 'short', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ shortUnits: '1000' }, 'short', { ok: ['short'] }],
  [
    { shortUnits: '99999' },
    'short',
    { side: 'short', reason: 'CLOSEOUT_POSITION_UNITS_EXCEED_POSITION_SIZE' },
  ],
  [{ shortUnits: '1000' }, 'long', { side: 'short', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ shortUnits: '1000' }, 'none', { side: 'short', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [{ longUnits: 'ALL', shortUnits: 'NONE' }, 'long', { ok: ['long'] }],
  [
    { longUnits: 'NONE', shortUnits: 'ALL' },
    'long',
    { side: 'short', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' },
  ],
  // Neither side named: each defaults to ALL (service-specification.md), the sides held are closed.
  [{}, 'long', { ok: ['long'] }],
  [{}, 'short', { ok: ['short'] }],
  [{}, 'none', { side: 'long', reason: 'CLOSEOUT_POSITION_DOESNT_EXIST' }],
  [
    { longUnits: 'NONE', shortUnits: 'NONE' },
    'long',
    { side: 'long', reason: 'CLOSEOUT_POSITION_INCOMPLETE_SPECIFICATION' },
  ],
];

describe('position close: each side answered under its own name, with the right reason', () => {
  it.each(cases)('%j against %s', async (ask, have, want) => {
    const A = await withPosition(have);
    const before = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    const r = await call('PUT', `${A}/positions/EUR_USD/close`, ask);
    if ('ok' in want) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      for (const side of want.ok) expect(r.body[`${side}OrderFillTransaction`]?.type).toBe('ORDER_FILL');
      return;
    }
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    const other = want.side === 'long' ? 'short' : 'long';
    expect(r.body[`${want.side}OrderRejectTransaction`]?.rejectReason).toBe(want.reason);
    expect(r.body[`${other}OrderRejectTransaction`]).toBeUndefined();
    expect(r.body.errorCode).toBe(want.reason);
    // Nothing closed.
    const after = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    expect([after.long.units, after.short.units]).toEqual([before.long.units, before.short.units]);
  });

  it('both sides asked, both refused: each under its own key', async () => {
    const A = await withPosition('none');
    const r = await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL', shortUnits: '10' });
    expect(r.status).toBe(400);
    expect(r.body.longOrderRejectTransaction.rejectReason).toBe('CLOSEOUT_POSITION_DOESNT_EXIST');
    expect(r.body.shortOrderRejectTransaction.rejectReason).toBe('CLOSEOUT_POSITION_DOESNT_EXIST');
    expect(r.body.shortOrderRejectTransaction.shortPositionCloseout).toEqual({
      instrument: 'EUR_USD',
      units: '10',
    });
    expect(n).toBeGreaterThan(cases.length);
  });
});
