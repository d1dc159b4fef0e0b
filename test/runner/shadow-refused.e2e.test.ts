// The --shadow simulator hears only what the risk gate lets through: an intent the gate refuses
// reaches neither the account nor the simulator beside it (issue 33, item 9: the shadow got every
// intent before the gate, so a refused order filled in the simulator and the comparison reported a
// divergence that no order of the run had).
import { afterEach, describe, expect, it } from 'vitest';
import { accountTransactions, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const orders = (txs: readonly { type: string }[]): number =>
  txs.filter((t) => t.type === 'MARKET_ORDER').length;

describe('--shadow behind the risk gate', () => {
  it('an intent the risk gate refuses never reaches the shadow simulator', async () => {
    r = await rig();
    const before = (await r.rest.summary(r.accountID)).lastTransactionID;
    // ping-pong trades 1000 units: every opening order is past a 500-unit limit and refused.
    const runner = r.runner({ shadow: true, limits: { maxUnits: 500 } });
    await runner.start();
    for (const p of pricePath(12)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('end');
    // The strategy decided orders, the gate refused them all, and nothing reached the account.
    expect(res.intents).toBe(4);
    expect(res.risk.byLimit.maxUnits).toBe(4);
    expect(orders(await accountTransactions(r, before))).toBe(0);
    // Nor the simulator beside it: it placed no order, and the comparison has nothing to compare.
    expect(orders(runner.shadowBook!.txs)).toBe(0);
    expect(res.shadow).toMatch(/^Shadow comparison: 0 intents/);
  });

  it('an intent the gate lets through reaches both, once', async () => {
    r = await rig();
    const runner = r.runner({ shadow: true, limits: { maxUnits: 1000 } });
    await runner.start();
    for (const p of pricePath(12)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('end');
    expect(res.intents).toBe(4);
    expect(res.risk.breaches).toBe(0);
    // Every one reached the simulator (the last still waits there for a next price, as a backtest's would).
    expect(res.shadow).toMatch(/^Shadow comparison: 4 intents/);
    expect(orders(runner.shadowBook!.txs)).toBe(3);
  });
});
