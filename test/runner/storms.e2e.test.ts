import { afterEach, describe, expect, it } from 'vitest';
import { accountTransactions, duplicateOrders, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('storms', () => {
  it('a 5xx storm then a 429 burst: the runner degrades, duplicates nothing, loses nothing, and recovers', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const runner = r.runner();
    await runner.start();
    const path = pricePath(120);
    const phase = (i: number): string => (i < 30 ? 'calm' : i < 60 ? '5xx' : i < 75 ? '429' : 'after');
    for (let i = 0; i < path.length; i++) {
      const p = path[i]!;
      if (i === 30) r.sandbox.setFaults({ errorRate: 0.4, seed: 3 });
      if (i === 60) r.sandbox.setFaults({ rateLimitBurst: 25 });
      if (i === 75) r.sandbox.setFaults({});
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await new Promise((res) => setTimeout(res, 15));
      if (phase(i) === 'calm' || phase(i) === 'after') await settle(r, runner, 30_000);
    }
    await settle(r, runner, 30_000);
    const ex = runner.execution!.stats;
    const res = await runner.stop('end');
    const txs = await accountTransactions(r, start);
    const journaled = runner.journal.contents();
    const dup = duplicateOrders(txs);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER').length;
    console.log(
      `[storms] ${r.sandbox.stats().requests} requests; ${res.intents} intents, ${orders} orders reached the account, ${txs.length} transactions; ` +
        `ambiguous submissions ${ex.ambiguous}, found after failure ${ex.foundAfterFailure}, resubmitted ${ex.resubmitted}; duplicates ${dup}; ` +
        `journal == account: ${journaled.transactions.length === txs.length}; unconfirmed intents left ${journaled.intents.length}`,
    );
    expect(dup).toBe(0);
    expect(journaled.transactions.map((t) => t.id)).toEqual(txs.map((t) => t.id));
    expect(ex.ambiguous).toBeGreaterThan(0);
    // Every intent's outcome is known at the end: at most the ones whose outcome stayed unknown are unconfirmed.
    expect(orders + journaled.intents.length).toBeGreaterThanOrEqual(res.intents - journaled.intents.length);
    // Recovery: the last calm phase trades normally (one order per 3 prices).
    expect(txs.filter((t) => t.type === 'ORDER_FILL').length).toBe(orders);
  }, 120_000);
});
