import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Issue 37, item 4: `fxflow optimize --portfolio file.json --member <name>` sweeps one member's
 * params while the other keeps its params from the file; each trial is a whole portfolio backtest
 * on one account. Real CLI runs on the bundled sample: every trial's figures (the member's own, and
 * with --objective-of account the account's) equal a `backtest --portfolio` run with those params,
 * which holds only if the other member ran with its params from the file.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);
const fxflow = (...args: string[]) =>
  exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], { cwd: ROOT, maxBuffer: 64 << 20 });

interface Figures {
  netPL: number;
  trades: number;
  finalNAV: number;
  maxDrawdown: number;
}

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-optimize-'));
/** The portfolio: sma-cross (swept) and breakout-tpsl with a lookback away from its default (held). */
function portfolioFile(name: string, fast: number): string {
  const file = join(tmp, name);
  writeFileSync(
    file,
    JSON.stringify({
      strategies: [
        { module: join(ROOT, 'strategies/sma-cross.ts'), name: 'sma', params: { fast, slow: 30 } },
        { module: join(ROOT, 'strategies/breakout-tpsl.ts'), name: 'brk', params: { lookback: 36 } },
      ],
    }),
  );
  return file;
}
const PORTFOLIO = portfolioFile('portfolio.json', 10);
const FLAGS = ['--config', 'config/classic.json'];

/** A sweep of sma's fast over 5 and 8 (two slots: one trial on a worker thread); its trials.jsonl. */
async function sweep(objectiveOf: string): Promise<{ params: { fast: number }; metrics: Figures }[]> {
  const out = join(tmp, `sweep-${objectiveOf}`);
  await fxflow(
    'optimize',
    '--portfolio',
    PORTFOLIO,
    '--member',
    'sma',
    '--objective-of',
    objectiveOf,
    '--param',
    'fast=5,8',
    ...FLAGS,
    '--objective',
    'netPL',
    '--workers',
    '2',
    '--out',
    out,
    '--json',
  );
  const meta = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8'));
  // The held member's params are the file's, as the sweep recorded them.
  expect(meta.portfolio.members[1].params.lookback).toBe(36);
  return readFileSync(join(out, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** A portfolio backtest with sma's fast set; its summary (the account's, with strategies.<name>). */
async function backtest(
  fast: number,
  period: string[] = [],
): Promise<Figures & { strategies: Record<string, Figures> }> {
  const runs = mkdtempSync(join(tmp, 'runs-'));
  await fxflow(
    'backtest',
    '--portfolio',
    portfolioFile(`fast-${fast}.json`, fast),
    ...FLAGS,
    ...period,
    '--no-typecheck',
    '--runs-dir',
    runs,
  );
  const dirs = readdirSync(runs);
  return JSON.parse(readFileSync(join(runs, dirs[0]!, 'summary.json'), 'utf8')).summary;
}

const cents = (x: number): number => Math.round(x * 100);
const same = (a: Figures, b: Figures): void => {
  expect(cents(a.netPL)).toBe(cents(b.netPL));
  expect(cents(a.finalNAV)).toBe(cents(b.finalNAV));
  expect(cents(a.maxDrawdown)).toBe(cents(b.maxDrawdown));
  expect(a.trades).toBe(b.trades);
};

describe('fxflow optimize --portfolio --member', () => {
  it("each trial's member figures, and account figures, equal a portfolio backtest with its params", async () => {
    const member = await sweep('member');
    const account = await sweep('account');
    const direct = new Map([
      [5, await backtest(5)],
      [8, await backtest(8)],
    ]);
    expect(member.map((t) => t.params.fast).sort()).toEqual([5, 8]);
    expect(account.map((t) => t.params.fast).sort()).toEqual([5, 8]);
    for (const t of member) same(t.metrics, direct.get(t.params.fast)!.strategies.sma!);
    // The account's figures add the held member's: they match only if brk kept lookback 36.
    for (const t of account) same(t.metrics, direct.get(t.params.fast)!);
    // The sweep did move the member: its two points trade differently, and the account is not the member.
    expect(member[0]!.metrics.trades).not.toBe(member[1]!.metrics.trades);
    expect(direct.get(5)!.strategies.brk!.trades).toBeGreaterThan(0);
    expect(cents(account[0]!.metrics.netPL)).not.toBe(cents(member[0]!.metrics.netPL));
  }, 300_000);

  it("walkforward: a window's out-of-sample figures are the member's in a portfolio backtest of the test period", async () => {
    const out = join(tmp, 'walkforward');
    await fxflow(
      'walkforward',
      '--portfolio',
      PORTFOLIO,
      '--member',
      'sma',
      '--param',
      'fast=5,8',
      ...FLAGS,
      '--objective',
      'netPL',
      '--from',
      '2024-01-01',
      '--to',
      '2024-10-01',
      '--train',
      '6mo',
      '--test',
      '3mo',
      '--workers',
      '2',
      '--out',
      out,
    );
    const [head, row] = readFileSync(join(out, 'windows.csv'), 'utf8').trim().split('\n');
    const cols = head!.split(',');
    const cell = (name: string): string => row!.split(',')[cols.indexOf(name)]!;
    const fast = Number(cell('fast'));
    expect([5, 8]).toContain(fast);
    const direct = await backtest(fast, ['--from', cell('testFrom'), '--to', cell('testTo')]);
    expect(cents(Number(cell('oosNetPL')))).toBe(cents(direct.strategies.sma!.netPL));
    expect(direct.strategies.sma!.trades).toBeGreaterThan(0);
    // The member's, not the account's (brk traded in the test period too).
    expect(cents(direct.netPL)).not.toBe(cents(direct.strategies.sma!.netPL));
  }, 300_000);

  it("resumes a finished sweep in its folder, and reruns it when a held member's params or code change", async () => {
    const out = join(tmp, 'resume');
    // The held member from a copy of its module, so that its code can change.
    const module = join(tmp, 'breakout-copy.ts');
    writeFileSync(module, readFileSync(join(ROOT, 'strategies/breakout-tpsl.ts')));
    const once = async (lookback: number): Promise<{ ran: number; resumed: number }> => {
      const file = join(tmp, 'resume.json');
      writeFileSync(
        file,
        JSON.stringify({
          strategies: [
            { module: join(ROOT, 'strategies/sma-cross.ts'), name: 'sma' },
            { module, name: 'brk', params: { lookback } },
          ],
        }),
      );
      const r = await fxflow(
        'optimize',
        '--portfolio',
        file,
        '--member',
        'sma',
        '--param',
        'fast=5,8',
        ...FLAGS,
        '--workers',
        '1',
        '--out',
        out,
        '--json',
      );
      return JSON.parse(r.stdout);
    };
    expect(await once(36)).toMatchObject({ ran: 2, resumed: 0 });
    expect(await once(36)).toMatchObject({ ran: 0, resumed: 2 });
    // Its trials are a portfolio's: brk at another lookback, or brk's code edited, makes them other trials.
    expect(await once(48)).toMatchObject({ ran: 2, resumed: 0 });
    writeFileSync(module, `${readFileSync(module, 'utf8')}\n// edited\n`);
    expect(await once(48)).toMatchObject({ ran: 2, resumed: 0 });
  }, 300_000);

  it.each([
    [
      'an unknown member, naming the members',
      ['--portfolio', PORTFOLIO, '--member', 'nope', '--param', 'fast=5,8'],
      /--member 'nope' is not in .*portfolio\.json; its members are: sma, brk/,
    ],
    [
      '--portfolio without --member',
      ['--portfolio', PORTFOLIO, '--param', 'fast=5,8'],
      /--portfolio needs --member <name>.*its members are: sma, brk/,
    ],
    [
      '--member without --portfolio',
      ['strategies/sma-cross.ts', '--member', 'sma', '--param', 'fast=5,8'],
      /--member sma needs --portfolio <file>/,
    ],
    [
      '--objective-of without --portfolio',
      ['strategies/sma-cross.ts', '--objective-of', 'account', '--param', 'fast=5,8'],
      /--objective-of account is for a member sweep: give --portfolio <file> --member <name>/,
    ],
    [
      "a --param the member's strategy does not have",
      ['--portfolio', PORTFOLIO, '--member', 'brk', '--param', 'fast=5,8'],
      /unknown param 'fast'; the strategy declares: instrument, granularity, lookback/,
    ],
  ])(
    'refuses %s in one line',
    async (_what, args, message) => {
      const e = (await fxflow('optimize', ...args, ...FLAGS).then(
        () => null,
        (x: unknown) => x,
      )) as { code: number; stderr: string } | null;
      expect(e).not.toBeNull();
      expect(e!.code).not.toBe(0);
      expect(e!.stderr).toMatch(message);
      expect(e!.stderr).not.toMatch(/\n\s+at /); // no stack trace
    },
    60_000,
  );
});
