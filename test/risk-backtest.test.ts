import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/catalog.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import type { Transaction } from '../src/domain/v20/index.ts';
import { DEFAULT_RISK_LIMITS } from '../src/engine/risk.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * Issue 33, items 6 and 7: backtests take the risk limits `run` takes (the same flags and config
 * fields), refuse what they would refuse live, and report the refusals by limit; every run has a
 * default orders-per-minute limit and a cap on intents per event.
 */
const ROOT = resolve(import.meta.dirname, '..');
const exec = promisify(execFile);
const fxflow = (...args: string[]) =>
  exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], { cwd: ROOT, maxBuffer: 64 << 20 });
const catalog = new Catalog(resolve(ROOT, 'data/catalog'));

/** The one run folder under `runs`. */
const runFolder = (runs: string): string => {
  const dirs = readdirSync(runs);
  expect(dirs).toHaveLength(1);
  return join(runs, dirs[0]!);
};

describe('fxflow backtest with risk limits', () => {
  it('--max-daily-loss 10 runs, places fewer orders than without it, and reports the refusals by limit', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'fxflow-risk-'));
    const limited = mkdtempSync(join(tmpdir(), 'fxflow-risk-'));
    await fxflow('backtest', 'strategies/sma-cross.ts', '--runs-dir', plain);
    const r = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--max-daily-loss',
      '10',
      '--runs-dir',
      limited,
    );
    const read = (dir: string) =>
      JSON.parse(readFileSync(join(runFolder(dir), 'summary.json'), 'utf8')).summary as {
        orders: { placed: number };
        riskRefusals: number;
        risk: { limits: Record<string, number>; refused: Record<string, number> };
      };
    const before = read(plain);
    const after = read(limited);
    expect(after.orders.placed).toBeLessThan(before.orders.placed);
    expect(before.riskRefusals).toBe(0);
    expect(after.riskRefusals).toBeGreaterThan(0);
    expect(after.risk.refused).toEqual({ maxDailyLoss: after.riskRefusals });
    expect(after.risk.limits).toEqual({ ...DEFAULT_RISK_LIMITS, maxDailyLoss: 10 });
    const text = readFileSync(join(runFolder(limited), 'report.txt'), 'utf8');
    expect(text).toMatch(
      /Risk limits\s+max-orders-per-minute 60, max-daily-loss 10, max-intents-per-event 50/,
    );
    expect(text).toMatch(
      new RegExp(
        `Risk refusals\\s+${after.riskRefusals} intents refused, never sent \\(maxDailyLoss ${after.riskRefusals}\\)`,
      ),
    );
    expect(r.stdout).toMatch(/Risk refusals/);
    expect(readFileSync(join(runFolder(limited), 'report.html'), 'utf8')).toMatch(/Risk refusals/);
    console.log(
      `[risk backtest] sma-cross EUR_USD H1 2024: ${before.orders.placed} orders placed without a daily-loss limit, ${after.orders.placed} with --max-daily-loss 10 (${after.riskRefusals} refused)`,
    );
  }, 120_000);

  it("optimize applies them in every trial, and reports the refusals in each trial's figures", async () => {
    const runs = mkdtempSync(join(tmpdir(), 'fxflow-risk-'));
    await fxflow(
      'optimize',
      'strategies/sma-cross.ts',
      '--param',
      'fast=10,12',
      '--max-daily-loss',
      '10',
      '--runs-dir',
      runs,
    );
    const sweep = join(runs, 'sweeps', readdirSync(join(runs, 'sweeps'))[0]!);
    const trials = readFileSync(join(sweep, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { metrics: { riskRefusals: number; risk: { refused: Record<string, number> } } },
      );
    expect(trials).toHaveLength(2);
    for (const t of trials) {
      expect(t.metrics.riskRefusals).toBeGreaterThan(0);
      expect(t.metrics.risk.refused).toEqual({ maxDailyLoss: t.metrics.riskRefusals });
    }
  }, 120_000);

  it('optimize and walkforward take the limit flags: a bad value is named by its flag', async () => {
    for (const cmd of ['optimize', 'walkforward']) {
      const e = await fxflow(
        cmd,
        'strategies/sma-cross.ts',
        '--max-orders-per-minute',
        '2.5',
        ...(cmd === 'walkforward' ? ['--train', '6mo', '--test', '1mo'] : []),
      ).then(
        () => undefined,
        (x: { stderr: string }) => x,
      );
      expect(e?.stderr, cmd).toMatch(
        /--max-orders-per-minute \(risk\.maxOrdersPerMinute\) must be a whole number >= 0/,
      );
    }
  }, 60_000);
});

describe('the default cap on intents per event', () => {
  // Decides `n` one-unit market orders at its first candle, and counts what it hears back.
  const flood = (n: number, heard: Transaction[]) =>
    defineStrategy({
      name: 'flood',
      params: {},
      subscribe: () => ({ candles: ['EUR_USD:H1:M'] }),
      init: () => ({ done: false }),
      onCandle(ctx, s) {
        if (s.done) return;
        return { state: { done: true }, intents: Array.from({ length: n }, () => ctx.market('EUR_USD', 1)) };
      },
      onTransaction(ctx) {
        heard.push(ctx.transaction!);
      },
    });
  const run = async (n: number, risk: Record<string, number> = {}) => {
    const heard: Transaction[] = [];
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, warn: (_o: object, m: string) => void warnings.push(m), error() {} };
    const config = loadConfig(undefined, { run: { from: '2024-01-02', to: '2024-01-03' }, risk } as never);
    const loaded = { strategy: flood(n, heard), name: 'flood', params: {}, file: 'flood.ts' } as never;
    const res = await runBacktest({
      loaded,
      config,
      instruments: loadInstruments(),
      candles: (q) => catalog.candles(q),
      available: (i, g) => catalog.has(i, g),
      log,
    });
    return { res, heard, warnings };
  };

  it('a strategy returning 10,000 intents in one event sends at most the cap; the rest reach it as rejects, and the log says so once', async () => {
    const { res, heard, warnings } = await run(10_000);
    const cap = DEFAULT_RISK_LIMITS.maxIntentsPerEvent;
    expect(res.intents).toBe(10_000);
    expect(res.summary.orders!.placed).toBe(cap);
    const refused = heard.filter(
      (t) => (t as { rejectReason?: string }).rejectReason === 'RISK_INTENTS_PER_EVENT_EXCEEDED',
    );
    expect(refused).toHaveLength(10_000 - cap);
    expect(refused.every((t) => t.type === 'MARKET_ORDER_REJECT')).toBe(true);
    expect(res.summary.risk!.refused).toEqual({ maxIntentsPerEvent: 10_000 - cap });
    expect(warnings.filter((m) => m.includes('maxIntentsPerEvent') || m.includes('per event'))).toHaveLength(
      1,
    );
  }, 60_000);

  it('is overridable: at 0 (off) every intent goes, up to the orders-per-minute limit, also off at 0', async () => {
    const { res } = await run(200, { maxIntentsPerEvent: 0, maxOrdersPerMinute: 0 });
    expect(res.summary.orders!.placed).toBe(200);
    expect(res.summary.riskRefusals).toBe(0);
    // The orders-per-minute default alone: 60 opening orders in the minute.
    const perMinute = await run(200, { maxIntentsPerEvent: 0 });
    expect(perMinute.res.summary.orders!.placed).toBe(DEFAULT_RISK_LIMITS.maxOrdersPerMinute);
    expect(perMinute.res.summary.risk!.refused).toEqual({
      maxOrdersPerMinute: 200 - DEFAULT_RISK_LIMITS.maxOrdersPerMinute,
    });
  }, 60_000);
});
