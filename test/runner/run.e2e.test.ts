import { afterEach, describe, expect, it } from 'vitest';
import { accountTransactions, duplicateOrders, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('runner against the sandbox', () => {
  it('reconciles, trades on live ticks, journals every transaction and stops with a report', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const runner = r.runner();
    await runner.start();
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('test end');
    const txs = await accountTransactions(r, start);
    const journaled = runner.journal.contents().transactions.map((t) => t.id);
    expect(journaled).toEqual(txs.map((t) => t.id));
    expect(duplicateOrders(txs)).toBe(0);
    expect(res.intents).toBe(10);
    expect(txs.filter((t) => t.type === 'ORDER_FILL')).toHaveLength(10);
    expect(res.report).toMatch(/ping-pong/);
    console.log(`[run] ${res.intents} intents, ${txs.length} transactions, all journaled; latency p50 ${res.latency.p50.toFixed(3)} ms p99 ${res.latency.p99.toFixed(3)} ms`);
    console.log(res.report);
  });
});
