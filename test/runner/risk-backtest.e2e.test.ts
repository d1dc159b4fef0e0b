import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import { runBacktest } from '../../src/app/backtest.ts';
import { loadConfig } from '../../src/app/config.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { limitsOf } from '../../src/cli/run.ts';
import { DEFAULT_RISK_LIMITS, type RiskLimits } from '../../src/engine/risk.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import smaCross from '../../strategies/sma-cross.ts';
import { accountTransactions, pricePath, rig, settle, startFxflowRun, until, type Rig } from './harness.ts';

/**
 * Issue 33, item 7: the risk gate sits in the backtest's order path as in a live run. One strategy
 * with one set of limits, a backtest of a period and the runner against the sandbox fed the same
 * prices (each candle's open, high, low and close as ticks), is refused at the same decisions.
 */
const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const FROM = '2024-01-02T10:00:00Z';
const TO = '2024-01-02T13:00:00Z';
const params = { ...smaCross.params, granularity: 'M1', fast: 3, slow: 8, units: 1000 };
const silent = { debug() {}, info() {}, warn() {}, error() {} };
/** A refusal as the strategy hears it: when, which intent (the run identity taken out), why. */
const refusal = (t: Transaction, runId = ''): string => {
  const x = t as unknown as {
    time: string;
    clientExtensions?: { id?: string };
    rejectReason?: string;
    units?: string;
  };
  return `${x.time} ${(x.clientExtensions?.id ?? '').replace(`-${runId}-`, '-')} ${x.rejectReason} ${x.units}`;
};
const isRefusal = (t: Transaction): boolean =>
  t.type.endsWith('_REJECT') && String((t as { rejectReason?: string }).rejectReason).startsWith('RISK_');

describe('the risk gate in a backtest and in a run', () => {
  it('sma-cross under a daily-loss limit is refused at the same decisions in a backtest and against the sandbox', async () => {
    const limits: RiskLimits = { maxDailyLoss: 2 };
    const catalog = new Catalog(resolve(ROOT, 'data/catalog'));
    const instruments = loadInstruments();
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'M1', from: FROM, to: TO },
      costs: { financing: false },
      fill: { marketHours: false },
      risk: limits,
    } as never);
    const loaded = {
      strategy: smaCross as never,
      name: 'sma-cross',
      params,
      file: resolve(ROOT, 'strategies/sma-cross.ts'),
    } as never;
    const bt = await runBacktest({
      loaded,
      config,
      instruments,
      candles: (q) => catalog.candles(q),
      available: (i, g) => catalog.has(i, g),
      log: silent,
      keepTransactions: true,
    });
    const backtest = bt.transactions.filter(isRefusal).map((t) => refusal(t));

    const candles: Candle[] = [];
    for await (const b of catalog.candles({
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: Date.parse(FROM),
      to: Date.parse(TO),
    }))
      candles.push(...b);
    r = await rig();
    const live: Transaction[] = [];
    const runner = r.runner({
      strategy: smaCross as never,
      name: 'sma-cross',
      params,
      limits,
      onTransaction: (t) => live.push(t),
    });
    await runner.start();
    let pushed = 0;
    const push = async (time: number, bid: number, ask: number): Promise<void> => {
      pushed++;
      r!.sandbox.setTime(time);
      r!.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time });
      const t0 = Date.now();
      while (runner.ticks < pushed || runner.candles.pending > 0) {
        if (Date.now() - t0 > 10_000) throw new Error('price not seen');
        await new Promise((res) => setTimeout(res, 2));
      }
      await settle(r!, runner);
    };
    for (const c of candles)
      for (const [t, b, a] of [
        [c.time, c.bo, c.ao],
        [c.time + 15_000, c.bh, c.ah],
        [c.time + 30_000, c.bl, c.al],
        [c.time + 59_000, c.bc, c.ac],
      ] as const)
        await push(t, b, a);
    await push(Date.parse(TO), candles.at(-1)!.bc, candles.at(-1)!.ac);
    const res = await runner.stop('end');
    const run = live.filter(isRefusal).map((t) => refusal(t, runner.runId));
    console.log(
      `[risk in backtest and run] ${limits.maxDailyLoss} a day: backtest ${bt.intents} intents, ${backtest.length} refused (summary: ${JSON.stringify(bt.summary.risk?.refused)}); run ${res.intents} intents, ${run.length} refused (${JSON.stringify(res.risk.byLimit)}); first: ${backtest[0] ?? '-'}`,
    );
    expect(backtest.length).toBeGreaterThan(0);
    expect(backtest.length).toBeLessThan(bt.intents);
    expect(bt.summary.riskRefusals).toBe(backtest.length);
    expect(run).toEqual(backtest);
    expect(res.risk.byLimit).toEqual({ maxDailyLoss: run.length });
  }, 240_000);

  it('a run with the default limits (no flag given) sends at most the cap of a strategy that returns 10,000 intents at one tick', async () => {
    const limits = limitsOf({});
    expect(limits).toEqual(DEFAULT_RISK_LIMITS);
    const heard: Transaction[] = [];
    const flood = defineStrategy({
      params: {},
      subscribe: { ticks: ['EUR_USD'] },
      init: () => ({ done: false }),
      onTick(ctx, st) {
        if (st.done) return;
        return {
          state: { done: true },
          intents: Array.from({ length: 10_000 }, () => ctx.market('EUR_USD', 1)),
        };
      },
    });
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const runner = r.runner({
      strategy: flood as never,
      name: 'flood',
      params: {},
      limits,
      onTransaction: (t) => heard.push(t),
    });
    await runner.start();
    const t0 = Date.now();
    const p = pricePath(1)[0]!;
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    const refusals = () =>
      heard.filter((t) => (t as { rejectReason?: string }).rejectReason === 'RISK_INTENTS_PER_EVENT_EXCEEDED')
        .length;
    await until(
      () => refusals() >= 10_000 - DEFAULT_RISK_LIMITS.maxIntentsPerEvent,
      'every refusal reported to the strategy',
      180_000,
    );
    await settle(r, runner, 60_000);
    const took = Date.now() - t0;
    const res = await runner.stop('end');
    const orders = (await accountTransactions(r, start)).filter((t) => t.type === 'MARKET_ORDER').length;
    const refused = heard.filter(
      (t) => (t as { rejectReason?: string }).rejectReason === 'RISK_INTENTS_PER_EVENT_EXCEEDED',
    ).length;
    console.log(
      `[intents per event] 10,000 intents at one tick: ${orders} orders reached the sandbox, ${refused} refused and reported to the strategy (${took} ms)`,
    );
    expect(res.intents).toBe(10_000);
    expect(orders).toBe(DEFAULT_RISK_LIMITS.maxIntentsPerEvent);
    expect(refused).toBe(10_000 - DEFAULT_RISK_LIMITS.maxIntentsPerEvent);
    expect(res.risk.byLimit).toEqual({ maxIntentsPerEvent: refused });
  }, 240_000);

  it('a Runner built without `limits` (a library caller) has the defaults `fxflow run` has', async () => {
    const cap = DEFAULT_RISK_LIMITS.maxIntentsPerEvent;
    const heard: Transaction[] = [];
    const flood = defineStrategy({
      params: {},
      subscribe: { ticks: ['EUR_USD'] },
      init: () => ({ done: false }),
      onTick(ctx, st) {
        if (st.done) return;
        return {
          state: { done: true },
          intents: Array.from({ length: cap + 10 }, () => ctx.market('EUR_USD', 1)),
        };
      },
    });
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    // No `limits` at all (the harness gives none either).
    const runner = r.runner({
      strategy: flood as never,
      name: 'flood',
      params: {},
      onTransaction: (t) => heard.push(t),
    });
    expect(runner.o.limits).toBeUndefined();
    expect(runner.limits).toEqual(DEFAULT_RISK_LIMITS);
    await runner.start();
    const p = pricePath(1)[0]!;
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    await until(
      () =>
        heard.filter(
          (t) => (t as { rejectReason?: string }).rejectReason === 'RISK_INTENTS_PER_EVENT_EXCEEDED',
        ).length >= 10,
      'the refusals past the default cap',
    );
    await settle(r, runner, 60_000);
    const res = await runner.stop('end');
    expect((await accountTransactions(r, start)).filter((t) => t.type === 'MARKET_ORDER')).toHaveLength(cap);
    expect(res.risk.byLimit).toEqual({ maxIntentsPerEvent: 10 });
    expect(res.summary.risk?.limits).toEqual(DEFAULT_RISK_LIMITS);
  }, 120_000);

  it('`fxflow run` shows its limits in the start banner: the defaults, a flag and a --config risk field', async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-limits-'));
    const config = join(dir, 'limits.json');
    writeFileSync(config, JSON.stringify({ risk: { maxIntentsPerEvent: 7 } }));
    for (const [args, banner] of [
      [[], 'risk limits: max-orders-per-minute 60, max-intents-per-event 50;'],
      [
        ['--max-daily-loss', '25', '--config', config],
        'risk limits: max-orders-per-minute 60, max-daily-loss 25, max-intents-per-event 7;',
      ],
      [['--max-orders-per-minute', '0', '--max-intents-per-event', '0'], 'risk limits: none;'],
    ] as const) {
      const run = await startFxflowRun(
        r.sandbox,
        'test/runner/ping-pong-strategy.ts',
        ['--broker', 'sim', '--journal', mkdtempSync(join(dir, 'j-')), ...args],
        1,
      );
      run.proc.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.out(), args.join(' ')).toContain(banner);
    }
  }, 120_000);
});
