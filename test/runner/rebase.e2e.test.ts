import { afterEach, describe, expect, it } from 'vitest';
import { amount } from '../../src/domain/money.ts';
import { accountTransactions, duplicateOrders, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('journal rebase', () => {
  it('a long run keeps its journal bounded; a restart after rebases restores the account and the strategy state exactly', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const path = pricePath(150);
    const rebaseEvery = 12;
    let checked = 0;
    const push = async (runner: ReturnType<Rig['runner']>, from: number, to: number): Promise<number> => {
      let most = 0;
      for (let i = from; i < to; i++) {
        r!.sandbox.setTime(path[i]!.time);
        r!.sandbox.pushPrice(path[i]!);
        await settle(r!, runner);
        most = Math.max(most, runner.journal.transactionCount);
        await new Promise((res) => setTimeout(res, 30)); // a rebase under way finishes
        // What a crash right now would restart from: the journal's snapshot must account for every
        // fill up to the transaction it says it handled, and cover the baseline.
        const c = runner.journal.contents();
        if (c.state !== undefined) {
          const handled = Number(c.state.handledTransactionID);
          const fillsUpTo = (await accountTransactions(r!, start)).filter(
            (t) => t.type === 'ORDER_FILL' && Number(t.id) <= handled,
          ).length;
          expect(handled).toBeGreaterThanOrEqual(
            Number((c.baseline as { lastTransactionID: string }).lastTransactionID),
          );
          expect((c.state.state as { fills: number }).fills).toBe(fillsUpTo);
          checked++;
        }
      }
      return most;
    };
    const first = r.runner({ rebaseEvery });
    await first.start();
    const mostFirst = await push(first, 0, 100);
    // Let a rebase that is under way finish, then stop.
    await new Promise((res) => setTimeout(res, 200));
    const baselineFirst = (first.journal.contents().baseline as { lastTransactionID: string })
      .lastTransactionID;
    await first.stop('restart');

    const second = r.runner({ rebaseEvery });
    await second.start();
    const mostSecond = await push(second, 100, 150);
    const res = await second.stop('end');

    const txs = await accountTransactions(r, start);
    const fills = txs.filter((t) => t.type === 'ORDER_FILL').length;
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER').length;
    const state = second.state as { orders: number; fills: number; ticks: number };
    const summary = await r.rest.summary(r.accountID);
    console.log(
      `[journal rebase] ${txs.length} transactions over 150 prices and a restart; journal held at most ${Math.max(mostFirst, mostSecond)} (rebase every ${rebaseEvery}); ` +
        `baseline moved from ${start} to ${baselineFirst}; strategy counted ${state.fills} fills / ${state.orders} orders, the account has ${fills} / ${orders}`,
    );
    expect(txs.length).toBeGreaterThan(rebaseEvery * 5);
    expect(Number(baselineFirst)).toBeGreaterThan(Number(start));
    expect(Math.max(mostFirst, mostSecond)).toBeLessThan(rebaseEvery + 6);
    // Nothing lost or counted twice across rebases and the restart.
    expect(state.fills).toBe(fills);
    expect(state.orders).toBe(orders);
    expect(state.ticks).toBe(150);
    expect(duplicateOrders(txs)).toBe(0);
    // The restarted portfolio (rebased baseline + the journal's tail) is the account.
    expect(second.portfolio.ledger.balance).toBe(amount(summary.account.balance));
    expect(second.portfolio.ledger.trades.size).toBe(summary.account.openTradeCount);
    expect(res.recovered.restoredState).toBe(true);
    expect(checked).toBeGreaterThan(100);
  }, 90_000);
});
