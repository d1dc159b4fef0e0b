import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backtestRun, fxflow } from './cli.ts';

/**
 * account.portfolioNetting (--portfolio-netting): a portfolio backtest's simulated netting account
 * nets each strategy apart ("strategy", the default) or across strategies as a real netting account
 * does ("account"), where one strategy's order reduces the account's oldest opposite trade whoever
 * opened it. Either way the books add up to the account (docs/portfolios.md, "What adds up"): per
 * instrument the books' units, and the P/L at mid (config/classic.json: mid candles, zero spread,
 * no financing, so its closing prices are the mid), at the end and on every day of the equity curve.
 * And `fxflow backtest a.ts b.ts --json` lists each strategy's own trades, each with its `strategy`,
 * and the strategies' figures. Real CLI runs on the bundled sample.
 */

const STRATS = ['strategies/sma-cross.ts', 'strategies/breakout-tpsl.ts'];
const NAMES = ['sma-cross', 'breakout-tpsl'];
const DEPOSIT = 100_000;

interface Figures {
  netPL: number;
  trades: number;
  financing: number;
  strategies?: Record<string, { netPL: number; trades: number }>;
}

interface Tx {
  id: string;
  type: string;
  orderID?: string;
  tradeID?: string;
  instrument?: string;
  units?: string;
  clientExtensions?: { tag?: string };
  tradeOpened?: { tradeID: string };
  tradesClosed?: { tradeID: string }[];
  tradeReduced?: { tradeID: string };
}

/** Runs a backtest into a fresh runs folder; returns its summary and its folder. */
const run = (args: string[]) => backtestRun<Figures>(args, 'fxflow-netting-');

const lines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);

/**
 * The fills of one strategy's order that closed or reduced a trade another strategy opened, read
 * from the account's transactions: an order is the strategy's its tag names (a take profit or stop
 * loss: the owner of its trade); a trade, the owner of the order whose fill opened it.
 */
function crossFills(txs: readonly Tx[]): { fill: string; by: string; of: string }[] {
  const orderOwner = new Map<string, string>();
  const tradeOwner = new Map<string, string>();
  const out: { fill: string; by: string; of: string }[] = [];
  for (const t of txs) {
    if (t.type.endsWith('_ORDER')) {
      const owner =
        t.clientExtensions?.tag ?? (t.tradeID !== undefined ? tradeOwner.get(t.tradeID) : undefined);
      if (owner !== undefined) orderOwner.set(t.id, owner);
    }
    if (t.type !== 'ORDER_FILL') continue;
    const by = orderOwner.get(t.orderID!);
    for (const c of [...(t.tradesClosed ?? []), ...(t.tradeReduced ? [t.tradeReduced] : [])]) {
      const of = tradeOwner.get(c.tradeID);
      if (of !== by) out.push({ fill: t.id, by: by ?? '(nobody)', of: of ?? '(nobody)' });
    }
    if (t.tradeOpened && by !== undefined) tradeOwner.set(t.tradeOpened.tradeID, by);
  }
  return out;
}

/** Net units per instrument at the account at the end: the sum of its fills (a netting account). */
function accountUnits(txs: readonly Tx[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of txs)
    if (t.type === 'ORDER_FILL') out.set(t.instrument!, (out.get(t.instrument!) ?? 0) + Number(t.units));
  return out;
}

/** Net units per instrument each book holds at the end: its END_OF_RUN rows of trades.csv. */
function bookUnits(dir: string): Map<string, number> {
  const [head, ...rows] = readFileSync(join(dir, 'trades.csv'), 'utf8').trim().split('\n');
  const h = head!.split(',');
  const out = new Map<string, number>();
  for (const r of rows) {
    const c = r.split(',');
    if (c[h.indexOf('exitReason')] !== 'END_OF_RUN') continue;
    const inst = c[h.indexOf('instrument')]!;
    out.set(inst, (out.get(inst) ?? 0) + Number(c[h.indexOf('units')]));
  }
  for (const [k, v] of out) if (v === 0) out.delete(k);
  return out;
}

const cents = (x: number): number => Math.round(x * 100);

/** The books add up to the account: units per instrument at the end, net P/L, and NAV on every day at mid. */
function expectBooksAddUp(r: { summary: Figures; dir: string }, txs: readonly Tx[]): void {
  const acct = accountUnits(txs);
  for (const [k, v] of acct) if (v === 0) acct.delete(k);
  expect(bookUnits(r.dir)).toEqual(acct);
  const s = r.summary.strategies!;
  expect(cents(r.summary.netPL)).toBe(cents(NAMES.reduce((a, n) => a + s[n]!.netPL, 0)));
  // Each day's NAV (strategies.json, equity.csv): the books' less the deposit each got in full.
  const doc = JSON.parse(readFileSync(join(r.dir, 'strategies.json'), 'utf8')) as {
    strategies: { name: string; equity: [number, number, number][] }[];
  };
  const account = new Map(
    readFileSync(join(r.dir, 'equity.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','))
      .map((c) => [Number(c[3]), Number(c[2])] as const),
  );
  const [a, b] = doc.strategies.map((x) => x.equity);
  expect(a!.length).toBeGreaterThan(200);
  for (let i = 0; i < a!.length; i++) {
    expect(b![i]![0]).toBe(a![i]![0]);
    const nav = account.get(a![i]![0]);
    expect(nav, `equity.csv at ${a![i]![0]}`).toBeDefined();
    // Each curve is rounded to the cent: three roundings.
    expect(Math.abs(a![i]![2] + b![i]![2] - DEPOSIT - nav!)).toBeLessThanOrEqual(0.015 + 1e-9);
  }
}

describe('--portfolio-netting on a netting account (sma-cross + breakout-tpsl, config/classic.json)', () => {
  it('account: a strategy order closes a trade the other opened; strategy (the default): never; the books add up to the account either way', async () => {
    const flags = [...STRATS, '--config', 'config/classic.json'];
    const [byAccount, byStrategy] = await Promise.all([
      run([...flags, '--portfolio-netting', 'account']),
      run(flags),
    ]);
    const accountTx = lines<Tx>(join(byAccount.dir, 'transactions.jsonl'));
    const strategyTx = lines<Tx>(join(byStrategy.dir, 'transactions.jsonl'));
    const across = crossFills(accountTx);
    expect(across.length).toBeGreaterThan(0);
    for (const f of across) {
      expect(NAMES).toContain(f.by);
      expect(NAMES).toContain(f.of);
    }
    expect(crossFills(strategyTx)).toEqual([]);
    // The strategies did trade, and their orders carry their tags.
    expect(byStrategy.summary.strategies!['breakout-tpsl']!.trades).toBeGreaterThan(100);
    expect(byAccount.summary.strategies!['sma-cross']!.trades).toBeGreaterThan(100);
    expectBooksAddUp(byAccount, accountTx);
    expectBooksAddUp(byStrategy, strategyTx);
    // The run folder's config says which.
    const cfg = (dir: string): unknown =>
      JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).account.portfolioNetting;
    expect(cfg(byAccount.dir)).toBe('account');
    expect(cfg(byStrategy.dir)).toBe('strategy');
  }, 60_000);

  it('is ignored for one strategy and on a hedging account', async () => {
    const hedging = [...STRATS, '--config', 'config/classic.json', '--hedging', '--balance', '100000000'];
    const solo = ['strategies/sma-cross.ts', '--config', 'config/classic.json'];
    const [h1, h2, s1, s2] = await Promise.all([
      run([...hedging, '--portfolio-netting', 'account']),
      run(hedging),
      run([...solo, '--portfolio-netting', 'account']),
      run(solo),
    ]);
    expect(h1.summary.strategies).toEqual(h2.summary.strategies);
    expect(cents(h1.summary.netPL)).toBe(cents(h2.summary.netPL));
    expect(crossFills(lines<Tx>(join(h1.dir, 'transactions.jsonl')))).toEqual([]);
    expect(s1.summary.trades).toBe(s2.summary.trades);
    expect(cents(s1.summary.netPL)).toBe(cents(s2.summary.netPL));
  }, 60_000);

  it.each([['backtest'], ['optimize'], ['walkforward']])(
    '%s: a wrong --portfolio-netting (or account.portfolioNetting) is refused, naming the flag, the field and the values',
    async (cmd) => {
      const rest =
        cmd === 'backtest'
          ? [...STRATS, '--no-save']
          : [
              'strategies/sma-cross.ts',
              '--param',
              'fast=5,10',
              ...(cmd === 'walkforward' ? ['--train', '6mo', '--test', '1mo'] : []),
            ];
      const fail = (args: string[]) =>
        fxflow(cmd, ...args).then(
          () => undefined,
          (e: { code: number; stderr: string }) => e,
        );
      const byFlag = await fail([...rest, '--portfolio-netting', 'shared']);
      expect(byFlag?.code).not.toBe(0);
      expect(byFlag!.stderr).toMatch(
        /--portfolio-netting \(account\.portfolioNetting\) must be one of "strategy", "account" \(got "shared"\)/,
      );
      const dir = mkdtempSync(join(tmpdir(), 'fxflow-netting-config-'));
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ account: { portfolioNetting: 'Account' } }));
      const byFile = await fail([...rest, '--config', file]);
      expect(byFile?.code).not.toBe(0);
      expect(byFile!.stderr).toMatch(
        /c\.json: account\.portfolioNetting must be one of "strategy", "account" \(got "Account"\)/,
      );
    },
    60_000,
  );
});

describe('fxflow backtest a.ts b.ts --json', () => {
  it.each([['strategy'], ['account']])(
    "lists each strategy's own trades with its strategy, and each strategy's figures (--portfolio-netting %s)",
    async (netting) => {
      const [json, folder] = await Promise.all([
        fxflow(
          ...['backtest', ...STRATS, '--config', 'config/classic.json'],
          '--portfolio-netting',
          netting,
          '--json',
          '--no-save',
          '--no-typecheck',
        ),
        run([...STRATS, '--config', 'config/classic.json', '--portfolio-netting', netting]),
      ]);
      const doc = JSON.parse(json.stdout) as {
        params: Record<string, { module: string; params: Record<string, unknown> }>;
        summary: Figures;
        trades: { id: string; strategy: string; closeTime: string; exitReason: string }[];
        openAtEnd: { id: string; strategy: string; exitReason: string }[];
      };
      expect(Object.keys(doc.summary.strategies!)).toEqual(NAMES);
      expect(doc.summary.strategies).toEqual(folder.summary.strategies);
      expect(Object.keys(doc.params)).toEqual(NAMES);
      expect(doc.params['sma-cross']!.params.fast).toBe(10);
      // The same trades as trades.csv, in its order, each with its strategy.
      const rows = readFileSync(join(folder.dir, 'trades.csv'), 'utf8').trim().split('\n').slice(1);
      const all = [...doc.trades, ...doc.openAtEnd];
      expect(all.map((t) => `${t.id},${t.strategy}`)).toEqual(
        rows.map((r) => `${r.slice(0, r.indexOf(','))},${r.slice(r.lastIndexOf(',') + 1)}`),
      );
      for (const t of all) expect(NAMES).toContain(t.strategy);
      for (const n of NAMES) {
        const closed = doc.trades.filter((t) => t.strategy === n).length;
        expect(closed, n).toBe(doc.summary.strategies![n]!.trades);
      }
      for (const t of doc.openAtEnd) expect(t.exitReason).toBe('END_OF_RUN');
    },
    60_000,
  );
});
