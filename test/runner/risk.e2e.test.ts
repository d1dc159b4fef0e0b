import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { accountTransactions, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const orderTxs = (txs: readonly { type: string }[]) => txs.filter((t) => t.type === 'MARKET_ORDER').length;

describe('risk limits through the runner', () => {
  it('each limit holds against a live account: units, open trades, orders per minute, daily loss, spread', async () => {
    const figures: string[] = [];
    const cases = [
      { name: 'maxUnits', limits: { maxUnits: 500 }, expectOrders: 0 },
      {
        name: 'maxOpenTrades',
        limits: { maxOpenTrades: 1 },
        params: { every: 1, units: '1000' },
        hedging: true,
      },
      { name: 'maxOrdersPerMinute', limits: { maxOrdersPerMinute: 4 } },
      // One entry a minute: each exit comes while the minute is full, and must pass.
      { name: 'maxOrdersPerMinute', limits: { maxOrdersPerMinute: 1 } },
      { name: 'maxDailyLoss', limits: { maxDailyLoss: 0.5 } },
      { name: 'maxSpreadPips', limits: { maxSpreadPips: 1 }, expectOrders: 0 },
    ] as const;
    for (const c of cases) {
      r = await rig('hedging' in c ? { accounts: [{ hedging: true }] } : {});
      const start = (await r.rest.summary(r.accountID)).lastTransactionID;
      const runner = r.runner({ limits: c.limits, ...('params' in c ? { params: c.params } : {}) });
      await runner.start();
      for (const p of pricePath(90)) {
        r.sandbox.setTime(p.time);
        r.sandbox.pushPrice(p);
        await settle(r, runner);
      }
      const res = await runner.stop('end');
      const txs = await accountTransactions(r, start);
      const orders = orderTxs(txs);
      const breaches = runner.risk!.breaches;
      figures.push(`${c.name}: ${res.intents} intents, ${orders} orders sent, ${breaches.length} refused`);
      expect(breaches.length, figures.join('; ')).toBeGreaterThan(0);
      expect(breaches.every((b) => b.limit === c.name)).toBe(true);
      expect(orders + breaches.length).toBe(res.intents);
      if ('expectOrders' in c) expect(orders).toBe(c.expectOrders);
      if (c.name === 'maxOpenTrades')
        expect((await r.rest.openTrades(r.accountID)).length).toBeLessThanOrEqual(1);
      if (c.name === 'maxOrdersPerMinute') {
        // Ping-pong buys from flat (an entry) and sells a long (an exit). Entries are limited to 4
        // per sliding minute; exits always pass (the README's promise: a limit never traps a position).
        const units = (t: { units?: string }): number => Number(t.units);
        const market = txs.filter((t) => t.type === 'MARKET_ORDER') as unknown as {
          time: string;
          units: string;
        }[];
        const entries = market.filter((t) => units(t) > 0).map((t) => Date.parse(t.time));
        const exits = market.filter((t) => units(t) < 0).length;
        const max = c.limits.maxOrdersPerMinute;
        for (const t of entries)
          expect(entries.filter((u) => u > t - 60_000 && u <= t).length).toBeLessThanOrEqual(max);
        const refusedExits = breaches.filter(
          (b) => b.intent.kind === 'order' && Number((b.intent.request as { units: string }).units) < 0,
        ).length;
        figures.push(
          `(${max} per minute: ${entries.length} entries, ${exits} exits sent, ${refusedExits} exits refused)`,
        );
        expect(refusedExits).toBe(0);
        expect(exits).toBe(entries.length); // every entry's exit went out
        expect(market.length).toBeGreaterThan(max);
      }
      await r.close();
      r = undefined;
    }
    console.log(`[risk e2e] ${figures.join('; ')}`);
  }, 120_000);

  it('the kill switch file cancels pending orders, flattens and stops the run', async () => {
    r = await rig();
    const kill = join(r.journalDir, 'KILL');
    const runner = r.runner({ killFile: kill });
    await runner.start();
    const path = pricePath(40);
    let i = 0;
    for (; i < 4; i++) {
      r.sandbox.setTime(path[i]!.time);
      r.sandbox.pushPrice(path[i]!);
      await settle(r, runner);
    }
    await r.rest.createOrder(r.accountID, {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '1000',
      price: '1.05000',
      timeInForce: 'GTC',
    } as never);
    await settle(r, runner);
    const before = {
      trades: (await r.rest.openTrades(r.accountID)).length,
      pending: (await r.rest.pendingOrders(r.accountID)).length,
    };
    writeFileSync(kill, '');
    expect(existsSync(kill)).toBe(true);
    await runner.done;
    const after = {
      trades: (await r.rest.openTrades(r.accountID)).length,
      pending: (await r.rest.pendingOrders(r.accountID)).length,
    };
    const res = await runner.stop();
    console.log(
      `[kill switch] before: ${before.trades} open trades, ${before.pending} pending orders; after: ${after.trades}, ${after.pending}; run ended: ${res.reason}`,
    );
    expect(before.trades).toBe(1);
    expect(before.pending).toBe(1);
    expect(after).toEqual({ trades: 0, pending: 0 });
    expect(res.reason).toMatch(/kill switch/);
  }, 60_000);

  it('a restart within the trading day keeps the daily loss: the limit still holds after stop and start', async () => {
    r = await rig();
    const limits = { maxDailyLoss: 0.5 };
    const path = pricePath(150);
    const first = r.runner({ limits });
    await first.start();
    let i = 0;
    for (; i < path.length && first.risk!.breaches.length === 0; i++) {
      r.sandbox.setTime(path[i]!.time);
      r.sandbox.pushPrice(path[i]!);
      await settle(r, first);
    }
    expect(first.risk!.breaches.length).toBeGreaterThan(0);
    const lostBefore = first.risk!.dailyLoss();
    await first.stop('restart');
    const second = r.runner({ limits });
    await second.start();
    const from = i;
    for (; i < from + 12; i++) {
      r.sandbox.setTime(path[i]!.time);
      r.sandbox.pushPrice(path[i]!);
      await settle(r, second);
    }
    const breaches = second.risk!.breaches;
    console.log(
      `[daily loss restart] lost ${lostBefore.toFixed(4)} before the restart, ${second.risk!.dailyLoss().toFixed(4)} counted after it; ${breaches.length} entries refused after the restart`,
    );
    // Counted from the day's journaled opening NAV, not from the NAV at the restart.
    expect(second.risk!.dailyLoss()).toBeGreaterThan(limits.maxDailyLoss - 0.2);
    expect(breaches.length).toBeGreaterThan(0);
    expect(breaches.every((b) => b.limit === 'maxDailyLoss')).toBe(true);
    await second.stop('end');
  }, 60_000);
});
