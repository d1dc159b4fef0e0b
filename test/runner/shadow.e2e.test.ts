import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { divergences, outcomesOf } from '../../src/runner/recording/shadow.ts';
import { accountTransactions, pricePath, rig, settle, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('shadow mode and --broker sim', () => {
  it('--shadow: every intent also goes to a simulator on the same prices, and each fill that differs is reported', async () => {
    r = await rig();
    const runner = r.runner({ shadow: true });
    await runner.start();
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('end');
    console.log(`[shadow] ${res.shadow}`);
    // The sandbox fills a market order at the price current when it arrives; the simulator, like a
    // backtest, fills it at the next price after the tick that prompted it. So the 9 orders followed
    // by another price differ in price only (by exactly one tick's move), and the last is still
    // pending in the simulator: the divergence a trader should see.
    expect(res.shadow).toMatch(/^Shadow comparison: 10 intents, 10 differ \(outcome 1, price 9, time 0\)/);
    const path = pricePath(30);
    const first = /sim FILLED @([\d.]+)/.exec(res.shadow!)!;
    const live1 = /live FILLED @([\d.]+)/.exec(res.shadow!)!;
    // The first order comes on the 3rd price (a buy: ask); live fills at it, the simulator at the 4th.
    expect(Number(live1[1])).toBeCloseTo(path[2]!.ask, 5);
    expect(Number(first[1])).toBeCloseTo(path[3]!.ask, 5);
    // The comparison itself: a live fill at another price and a live reject are both flagged.
    const live = await accountTransactions(r, '0');
    const changed = live.map((t) =>
      t.type === 'ORDER_FILL' && t.id === live.find((x) => x.type === 'ORDER_FILL')!.id
        ? { ...t, price: '1.20000' }
        : t,
    );
    const sim = outcomesOf(live);
    const d = divergences(outcomesOf(changed as never), sim).filter((x) => x.differs.length > 0);
    expect(d).toHaveLength(1);
    expect(d[0]!.differs).toEqual(['price']);
  });

  it('--broker sim: live prices, simulated fills; nothing reaches the account', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const runner = r.runner({ broker: 'sim' });
    await runner.start();
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      const t0 = Date.now();
      while (runner.ticks < 1 || (runner.tickReceivedAt !== runner.tickReceivedAt && Date.now() - t0 < 2000))
        await new Promise((res) => setTimeout(res, 5));
      await new Promise((res) => setTimeout(res, 10));
    }
    const res = await runner.stop('end');
    const after = (await r.rest.summary(r.accountID)).lastTransactionID;
    console.log(
      `[broker sim] ${res.intents} intents filled by the simulator; account transactions unchanged (${start} → ${after}); closed trades ${res.summary.trades ?? ''}`,
    );
    expect(res.intents).toBeGreaterThan(5);
    expect(after).toBe(start);
    expect(runner.portfolio.closedTrades.length).toBeGreaterThan(2);
  });
});

describe('fxflow run (command line)', () => {
  it('--env live refuses to start without --i-understand-this-is-live, and says so plainly', () => {
    const out = spawnSync(
      process.execPath,
      ['bin/fxflow.js', 'run', 'strategies/sma-cross.ts', '--env', 'live'],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FXFLOW_TOKEN: 'secret-token-never-printed' } },
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(
      /--env live trades real money and needs an explicit confirmation: add --i-understand-this-is-live/,
    );
    expect(out.stderr + out.stdout).not.toMatch(/secret-token-never-printed/);
  });

  it('a bad risk flag is named', () => {
    const out = spawnSync(
      process.execPath,
      ['bin/fxflow.js', 'run', 'strategies/sma-cross.ts', '--env', 'sandbox', '--max-units', '-5'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(
      /--max-units \(risk\.maxUnits\) must be a number >= 0 \(0 turns the limit off\) \(got -5\)/,
    );
  });

  it('a bad --journal-rebase-every is named', () => {
    const out = spawnSync(
      process.execPath,
      [
        'bin/fxflow.js',
        'run',
        'strategies/sma-cross.ts',
        '--env',
        'sandbox',
        '--journal-rebase-every',
        '2.5',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(
      /--journal-rebase-every must be a whole number of transactions, 0 for never \(got 2.5\)/,
    );
  });
});
