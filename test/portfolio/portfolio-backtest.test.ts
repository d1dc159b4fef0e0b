import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backtestRun, fxflow, ROOT } from './cli.ts';

/**
 * Issue 37, items 1 and 2: `fxflow backtest a.ts b.ts` runs both strategies on one simulated
 * account, each with its own book. With no spread, no financing and a margin that never binds
 * (config/classic.json; on a hedging account a deposit large enough for sma-cross's piled-up
 * hedges), each strategy's net P/L in the portfolio equals its solo backtest's to the cent, and the
 * account's equals their sum. Real CLI runs on the bundled sample.
 */

interface Figures {
  netPL: number;
  trades: number;
  strategies?: Record<string, { netPL: number; trades: number }>;
}

/** Runs a backtest into a fresh runs folder; returns its summary and its folder. */
const run = (args: string[]) => backtestRun<Figures>(args, 'fxflow-portfolio-');

const cents = (x: number): number => Math.round(x * 100);
const STRATS = ['strategies/sma-cross.ts', 'strategies/breakout-tpsl.ts'];

describe.each([
  ['netting', ['--config', 'config/classic.json']],
  ['hedging', ['--config', 'config/classic.json', '--hedging', '--balance', '100000000']],
])('fxflow backtest sma-cross + breakout-tpsl on a %s account', (_kind, flags) => {
  it('exits 0; each strategy nets its solo P/L to the cent; the account nets their sum', async () => {
    const both = await run([...STRATS, ...flags]);
    const solo = await Promise.all(STRATS.map((s) => run([s, ...flags])));
    const s = both.summary.strategies!;
    expect(Object.keys(s)).toEqual(['sma-cross', 'breakout-tpsl']);
    expect(cents(s['sma-cross']!.netPL)).toBe(cents(solo[0]!.summary.netPL));
    expect(cents(s['breakout-tpsl']!.netPL)).toBe(cents(solo[1]!.summary.netPL));
    expect(s['breakout-tpsl']!.trades).toBe(solo[1]!.summary.trades);
    expect(cents(both.summary.netPL)).toBe(cents(s['sma-cross']!.netPL + s['breakout-tpsl']!.netPL));
    expect(solo[1]!.summary.trades).toBeGreaterThan(100); // the strategies did trade
    // trades.csv names the strategy of every trade; single runs keep their columns.
    const rows = readFileSync(join(both.dir, 'trades.csv'), 'utf8').trim().split('\n');
    expect(rows[0]).toMatch(/,strategy$/);
    const byStrategy = new Map<string, number>();
    for (const r of rows.slice(1)) {
      const name = r.slice(r.lastIndexOf(',') + 1);
      byStrategy.set(name, (byStrategy.get(name) ?? 0) + 1);
    }
    expect(byStrategy.get('breakout-tpsl')).toBe(solo[1]!.summary.trades);
    expect(readFileSync(join(solo[0]!.dir, 'trades.csv'), 'utf8').split('\n')[0]).not.toMatch(/strategy/);
    // Every order at the account carries its strategy's tag.
    const tx = readFileSync(join(both.dir, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const entries = tx.filter((t) => t.type === 'MARKET_ORDER' && t.reason === 'CLIENT_ORDER');
    expect(entries.length).toBeGreaterThan(0);
    for (const t of entries) expect(['sma-cross', 'breakout-tpsl']).toContain(t.clientExtensions.tag);
    // The report has both curves and their correlation.
    const doc = JSON.parse(readFileSync(join(both.dir, 'strategies.json'), 'utf8'));
    expect(doc.strategies.map((x: { name: string }) => x.name)).toEqual(['sma-cross', 'breakout-tpsl']);
    expect(doc.correlation.dailyReturns[0][0]).toBe(1);
    expect(both.stdout).toMatch(/Strategies \(each its own book/);
  }, 240_000);
});

describe('fxflow backtest --portfolio', () => {
  it('runs the same module twice with other params under two names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-file-'));
    const file = join(dir, 'p.json');
    writeFileSync(
      file,
      JSON.stringify({
        strategies: [
          { module: join(ROOT, 'strategies/sma-cross.ts'), name: 'sma-fast', params: { fast: 5, slow: 20 } },
          { module: join(ROOT, 'strategies/sma-cross.ts'), name: 'sma-slow', params: { fast: 20, slow: 50 } },
        ],
      }),
    );
    const both = await run(['--portfolio', file, '--config', 'config/classic.json']);
    const fast = await run([
      'strategies/sma-cross.ts',
      '--param',
      'fast=5',
      '--param',
      'slow=20',
      '--config',
      'config/classic.json',
    ]);
    const s = both.summary.strategies!;
    expect(Object.keys(s)).toEqual(['sma-fast', 'sma-slow']);
    expect(cents(s['sma-fast']!.netPL)).toBe(cents(fast.summary.netPL));
    expect(cents(both.summary.netPL)).toBe(cents(s['sma-fast']!.netPL + s['sma-slow']!.netPL));
  }, 240_000);

  it("an entry's own risk limits refuse its orders on its book, and not the other's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-risk-'));
    const file = join(dir, 'p.json');
    const sma = join(ROOT, 'strategies/sma-cross.ts');
    writeFileSync(
      file,
      JSON.stringify({
        strategies: [
          { module: sma, name: 'capped', params: { units: 10000 }, risk: { maxUnits: 5000 } },
          { module: sma, name: 'free', params: { fast: 20, slow: 50 } },
        ],
      }),
    );
    const r = await run(['--portfolio', file, '--config', 'config/classic.json']);
    const s = r.summary.strategies as unknown as Record<
      string,
      { trades: number; netPL: number; risk?: { refused: Record<string, number> } }
    >;
    expect(s.capped!.risk!.refused.maxUnits).toBeGreaterThan(0);
    expect(s.capped!.netPL).toBe(0);
    expect(s.free!.trades).toBeGreaterThan(0);
    expect(s.free!.risk).toBeUndefined();
  }, 120_000);

  it.each([
    [{ strategies: [] }, /p\.json: strategies must be a non-empty list/],
    [
      { strategies: [{ name: 'x' }] },
      /p\.json: strategies\[0\]\.module must be the path of a strategy module/,
    ],
    [{ strategies: [{ module: 'nope.ts' }] }, /p\.json: strategies\[0\]\.module 'nope\.ts' not found/],
    [
      { strategies: [{ module: 'S', params: { fast: [1] } }] },
      /p\.json: strategies\[0\]\.params must be an object of param values/,
    ],
    [
      { strategies: [{ module: 'S', risk: { maxLots: 1 } }] },
      /p\.json: strategies\[0\]\.risk\.maxLots is not a risk limit/,
    ],
    [
      { strategies: [{ module: 'S', size: 1 }] },
      /p\.json: strategies\[0\]\.size is not a portfolio entry field/,
    ],
    [
      { strategies: [{ module: 'S' }, { module: 'S' }] },
      /strategies\[1\]\.name 'sma-cross' is the name of strategies\[0\] too: give each entry its own "name"/,
    ],
  ])(
    'a bad portfolio file is one line naming the file, the entry and the field (%j)',
    async (doc, message) => {
      const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-bad-'));
      const file = join(dir, 'p.json');
      writeFileSync(
        file,
        JSON.stringify(doc).replaceAll('"S"', JSON.stringify(join(ROOT, 'strategies/sma-cross.ts'))),
      );
      const err = await fxflow('backtest', '--portfolio', file, '--no-save').then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(err?.code).toBe(1);
      expect(err!.stderr.trim().split('\n')).toHaveLength(1);
      expect(err!.stderr).toMatch(message);
    },
    60_000,
  );
});
