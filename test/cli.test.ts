import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** Runs the real `fxflow` command; never throws, returns the exit code and both streams. */
async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-cli-'));

describe('fxflow backtest', () => {
  it('a data file that does not exist: one line naming it, no log-file warning, no stack trace, and no runs folder left behind', async () => {
    // Reported at stop 31: the run folder was removed while pino was still opening log.jsonl in it,
    // so the refusal was followed by "cannot write the log file" and a bare sonic-boom stack trace.
    const runs = join(tmp, 'never-made', 'runs');
    const r = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--data',
      join(tmp, 'nope.csv'),
      '--runs-dir',
      runs,
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${join(tmp, 'nope.csv')}: no such file or folder`);
    expect(r.stderr).not.toMatch(/log file|sonic|\n\s+at /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(tmp, 'never-made'))).toBe(false);
  });

  it('--json prints one JSON document with the summary, every transaction, the closed trades and the equity curve', async () => {
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--json', '--runs-dir', tmp);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      summary: { trades: number; finalBalance: number; realizedPL: number };
      transactions: {
        type: string;
        id: string;
        time: string;
        tradesClosed?: { tradeID: string; realizedPL: string; price: string }[];
      }[];
      trades: { id: string; closeTime: string; closePrice: number; realizedPL: number }[];
      equity: { time: string; nav: number }[];
      runDir: string;
    };
    expect(doc.summary.trades).toBeGreaterThan(0);
    // The trade list is the fills' tradesClosed, in order, with the same prices, times and P/L.
    const closings = doc.transactions.flatMap((t) =>
      (t.tradesClosed ?? []).map((c) => ({
        id: c.tradeID,
        time: t.time,
        price: Number(c.price),
        pl: Number(c.realizedPL),
      })),
    );
    expect(doc.trades.map((t) => t.id)).toEqual(closings.map((c) => c.id));
    expect(doc.trades.map((t) => t.closePrice)).toEqual(closings.map((c) => c.price));
    expect(doc.trades.map((t) => Date.parse(t.closeTime))).toEqual(closings.map((c) => Date.parse(c.time)));
    expect(doc.trades.length).toBe(doc.summary.trades);
    expect(doc.transactions.filter((t) => t.type === 'ORDER_FILL').length).toBeGreaterThan(
      doc.summary.trades,
    );
    expect(doc.transactions.map((t) => Number(t.id))).toEqual(doc.transactions.map((_, i) => i + 1));
    expect(doc.equity.length).toBeGreaterThan(200);
    expect(doc.runDir.startsWith(tmp)).toBe(true);
  });

  it('prints a readable report and saves a run folder', async () => {
    const r = await fxflow(
      'backtest',
      'strategies/breakout-tpsl.ts',
      '--instrument',
      'USD_JPY',
      '--param',
      'units=5000',
      '--runs-dir',
      tmp,
    );
    expect(r.code).toBe(0);
    for (const label of [
      'Trades (closed)',
      'Win rate',
      'Net P/L',
      'Max drawdown',
      'Sharpe',
      'Exposure',
      'Spread cost',
      'Financing',
    ]) {
      expect(r.stdout).toContain(label);
    }
    expect(r.stdout).toContain('units=5000');
    const dir = /Run saved in (.+)/.exec(r.stdout)?.[1];
    expect(dir).toBeDefined();
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir!).sort()).toEqual([
      'chart-candles.json',
      'config.json',
      'equity.csv',
      'intents.jsonl',
      'log.jsonl',
      'report.html',
      'report.txt',
      'summary.json',
      'trades.csv',
      'transactions.jsonl',
    ]);
    const { readFileSync } = await import('node:fs');
    // trades.csv gained the side, spread cost, commission, exit reason and epoch columns (issue 13);
    // the trades still open at the end follow the closed ones, as END_OF_RUN; MAE, MFE and run-up last (issue 29).
    const rows = readFileSync(join(dir!, 'trades.csv'), 'utf8').trim().split('\n');
    expect(rows[0]).toBe(
      'id,instrument,side,units,openTime,closeTime,openPrice,closePrice,realizedPL,financing,spreadCost,commission,exitReason,openEpochMs,closeEpochMs,mae,mfe,runUpPct',
    );
    const trades = Number(/Trades \(closed\)\s+(\d+)/.exec(r.stdout)?.[1]);
    const open = Number(/open at end: (\d+)/.exec(r.stdout)?.[1]);
    expect(rows.length - 1).toBe(trades + open);
    const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    for (const row of rows.slice(1)) {
      const [
        ,
        instrument,
        side,
        units,
        openTime,
        closeTime,
        ,
        ,
        ,
        ,
        spread,
        ,
        exitReason,
        openEpoch,
        closeEpoch,
      ] = row.split(',');
      expect(instrument).toBe('USD_JPY');
      expect(side).toBe(Number(units) > 0 ? 'long' : 'short');
      expect(openTime).toMatch(RFC3339);
      expect(closeTime).toMatch(RFC3339);
      expect(Date.parse(openTime!)).toBe(Number(openEpoch));
      expect(Date.parse(closeTime!)).toBe(Number(closeEpoch));
      expect(Number(spread)).toBeGreaterThan(0);
      expect([
        'TAKE_PROFIT',
        'STOP_LOSS',
        'TRAILING_STOP',
        'STRATEGY_CLOSE',
        'STRATEGY_ORDER',
        'MARGIN_CLOSEOUT',
        'END_OF_RUN',
      ]).toContain(exitReason);
    }
    // equity.csv: RFC 3339, money rounded to the account currency (USD: cents), epoch column.
    const equity = readFileSync(join(dir!, 'equity.csv'), 'utf8').trim().split('\n');
    expect(equity[0]).toBe('time,balance,nav,epochMs');
    for (const row of equity.slice(1)) {
      const [time, balance, nav, epoch] = row.split(',');
      expect(time).toMatch(RFC3339);
      expect(Date.parse(time!)).toBe(Number(epoch));
      expect(balance).toMatch(/^-?\d+\.\d\d$/);
      expect(nav).toMatch(/^-?\d+\.\d\d$/);
    }
    const intent = JSON.parse(readFileSync(join(dir!, 'intents.jsonl'), 'utf8').split('\n')[0]!) as {
      time: string;
      at: number;
    };
    expect(intent.time).toMatch(RFC3339);
    expect(Date.parse(intent.time)).toBe(intent.at);
    // summary.json carries the orders, the splits and the exit reasons; the report shows them at the top.
    const summary = JSON.parse(readFileSync(join(dir!, 'summary.json'), 'utf8')) as {
      summary: {
        trades: number;
        orders: { placed: number; filled: number };
        long: { trades: number };
        short: { trades: number };
        byInstrument: Record<string, { trades: number }>;
        exitReasons: Record<string, number>;
      };
    };
    const s = summary.summary;
    expect(s.long.trades + s.short.trades).toBe(trades);
    expect(s.byInstrument.USD_JPY!.trades).toBe(trades);
    expect(Object.values(s.exitReasons).reduce((a, b) => a + b, 0)).toBe(trades);
    expect(r.stdout.split('\n')[2]).toMatch(
      new RegExp(`^Orders\\s+${s.orders.placed} placed, ${s.orders.filled} filled`),
    );
    expect(r.stdout).toMatch(/\nLong\s+\d+ trades/);
    expect(r.stdout).toMatch(/\nShort\s+\d+ trades/);
  });

  it('a strategy that throws stops the backtest with one message naming the strategy, the handler, the time and the file', async () => {
    const file = join(tmp, 'throws-on-fill.ts');
    writeFileSync(
      file,
      `import { defineStrategy } from ${JSON.stringify(join(ROOT, 'src/strategy/api.ts'))};
export default defineStrategy({
  name: 'throws-on-fill',
  params: {},
  subscribe: { candles: ['EUR_USD:H1'] },
  init: () => ({ sent: false }),
  onCandle(ctx, s) {
    if (s.sent) return;
    return { state: { sent: true }, intents: [ctx.market('EUR_USD', 1000)] };
  },
  onTransaction(ctx) {
    if (ctx.transaction?.type === 'ORDER_FILL') throw new Error('cannot book fill ' + ctx.transaction.id);
  },
});
`,
    );
    // From 2 January: the sample's first day, New Year's Day, is closed (its orders are halted, nothing fills).
    const r = await fxflow('backtest', file, '--no-save', '--from', '2024-01-02');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /^fxflow: strategy 'throws-on-fill' threw in onTransaction at 2024-01-02T\d\d:00:00\.000Z: cannot book fill \d+$/,
    );
    // From the build, the strategy runs from the compiled-strategy cache with its source map: the
    // frame has the line and column in the strategy's file (tsx's, from the sources, has the file).
    expect(lines[1]).toMatch(new RegExp(`^  at onTransaction \\(${file}(:12:\\d+)?\\)$`));
    expect(lines[2]).toMatch(/the strategy has to be fixed; FXFLOW_DEBUG=1 prints the whole stack/);
    expect(lines).toHaveLength(3); // no stack trace, no "internal error"
  });

  it('--slippage, --latency and --commission oanda-core choose the fill models; report.txt and config.json name them', async () => {
    const r = await fxflow(
      'backtest',
      'strategies/breakout-tpsl.ts',
      '--instrument',
      'USD_JPY',
      '--slippage',
      'fixed:0.5',
      '--latency',
      'fixed:500',
      '--commission',
      'oanda-core',
      '--runs-dir',
      tmp,
    );
    expect(r.code).toBe(0);
    const line =
      'fill models: path adaptive · slippage fixed:0.5 · latency fixed:500 · commission oanda-core';
    expect(r.stdout).toContain(line);
    const dir = /Run saved in (.+)/.exec(r.stdout)?.[1];
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(dir!, 'report.txt'), 'utf8')).toContain(line);
    const config = JSON.parse(readFileSync(join(dir!, 'config.json'), 'utf8')) as {
      fill: Record<string, unknown>;
      costs: Record<string, unknown>;
    };
    expect([config.fill.slippage, config.fill.latency, config.costs.commission]).toEqual([
      'fixed:0.5',
      'fixed:500',
      'oanda-core',
    ]);
    // The schedule's 70 USD per million on every fill of a currency pair.
    const fills = readFileSync(join(dir!, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>)
      .filter((t) => t.type === 'ORDER_FILL');
    expect(fills.length).toBeGreaterThan(0);
    for (const t of fills)
      expect(Number(t.commission)).toBeCloseTo((Math.abs(Number(t.units)) * 70) / 1e6, 4);
    const bad = await fxflow('backtest', 'strategies/sma-cross.ts', '--slippage', 'fast', '--no-save');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /command-line flags: fill\.slippage is wrong: slippage must be none, fixed:<pips>/,
    );
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('overrides config per run and says which field is wrong', async () => {
    const bad = await fxflow('backtest', 'strategies/sma-cross.ts', '--balance', 'lots', '--no-save');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /--balance \(account\.initialBalance\) must be a decimal string in \(0, 1,000,000,000,000\]/,
    );
    expect(bad.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const file = join(tmp, 'bad.json');
    writeFileSync(file, JSON.stringify({ acount: { currency: 'USD' } }));
    const typo = await fxflow('backtest', 'strategies/sma-cross.ts', '--config', file, '--no-save');
    expect(typo.stderr).toContain(file);
    expect(typo.stderr).toMatch(/acount is not a known section \(did you mean "account"\?\)/);
    writeFileSync(file, '{ "account": ');
    const broken = await fxflow('backtest', 'strategies/sma-cross.ts', '--config', file, '--no-save');
    expect(broken.stderr).toMatch(/is not valid JSON/);
  });

  it('rejects unknown params and strategy files with a clear message', async () => {
    const p = await fxflow('backtest', 'strategies/sma-cross.ts', '--param', 'fats=5', '--no-save');
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(
      /unknown param 'fats'; this strategy declares: instrument, granularity, component, fast, slow, units, longOnly/,
    );
    const n = await fxflow('backtest', 'strategies/sma-cross.ts', '--param', 'fast=quick', '--no-save');
    expect(n.stderr).toMatch(/param 'fast' must be a number \(got 'quick'\)/);
    const missing = await fxflow('backtest', 'strategies/nope.ts', '--no-save');
    expect(missing.stderr).toMatch(/strategies\/nope.ts: file not found/);
    const file = join(tmp, 'no-default.ts');
    writeFileSync(file, 'export const x = 1;\n');
    const nodefault = await fxflow('backtest', file, '--no-save');
    expect(nodefault.stderr).toMatch(/has no default export/);
    const unknownInstrument = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--instrument',
      'EUR_UDS',
      '--no-save',
    );
    expect(unknownInstrument.stderr).toMatch(/unknown instrument 'EUR_UDS'/);
  });

  it('a run folder that cannot be made is one message naming it, with no stack trace and no hang', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--runs-dir', join(file, 'runs'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `cannot write ${join(file, 'runs')}/\\S+ \\(ENOTDIR\\): choose another folder with --runs-dir, or pass --no-save`,
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at |node:events|Unhandled/);
    // procfs refuses the folder with ENOENT, on which Node's recursive mkdir used to loop for ever.
    if (process.platform === 'linux') {
      const p = await fxflow(
        'backtest',
        'strategies/sma-cross.ts',
        '--runs-dir',
        '/proc/fxflow-no-such-folder',
      );
      expect(p.code).toBe(1);
      expect(p.stderr).toMatch(/cannot write \/proc\/fxflow-no-such-folder\/\S+ \(ENOENT\)/);
    }
  });

  it('asks for --ticks when the strategy subscribes to ticks', async () => {
    const r = await fxflow('backtest', 'strategies/tick-momentum.ts', '--no-save');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/subscribes to ticks \(EUR_USD\): give a tick file with --ticks/);
    const exact = await fxflow('backtest', 'strategies/sma-cross.ts', '--path', 'exact', '--no-save');
    expect(exact.code).toBe(1);
    expect(exact.stderr).toMatch(
      /fill\.path "exact" replays the ticks inside each candle: give a tick file or folder with --ticks/,
    );
  });

  it('names the missing data and how to get it', async () => {
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--instrument', 'AUD_USD', '--no-save');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no AUD_USD H1 data in the catalog.*fxflow data import/s);
    // A period the catalog does not hold: one message with the months it holds, not an empty report.
    const outside = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--from',
      '2030-01-01',
      '--to',
      '2030-02-01',
      '--no-save',
    );
    expect(outside.code).toBe(1);
    expect(outside.stdout).toBe('');
    expect(outside.stderr.trim()).toBe(
      `fxflow: ${join(ROOT, 'data/catalog/EUR_USD/H1')}: no EUR_USD H1 candles between 2030-01-01 and 2030-02-01: the catalog holds 2024-01 to 2024-12. Choose --from/--to inside that, or get the period with \`fxflow data download --instrument EUR_USD --granularity H1 --from 2030-01-01 --to 2030-02-01\``,
    );
    // A data file with nothing in the period (or of another instrument): the same, naming the file.
    const csv = join(tmp, 'march.csv');
    writeFileSync(
      csv,
      [
        'time,o,h,l,c,volume',
        '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10',
        '2024-03-01T11:00:00Z,1.1005,1.102,1.1,1.101,12',
        '',
      ].join('\n'),
    );
    const empty = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--data',
      csv,
      '--side',
      'mid',
      '--from',
      '2024-04-01',
      '--to',
      '2024-05-01',
      '--no-save',
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr.trim()).toBe(
      `fxflow: ${csv}: no data for EUR_USD:H1:M between 2024-04-01 and 2024-05-01: check --instrument, --granularity, --from and --to (run.instrument, run.granularity, run.from, run.to) against what it holds`,
    );
    // A period that overlaps what is held runs on what is there.
    const overlap = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--from',
      '2023-12-20',
      '--to',
      '2024-01-10',
      '--no-save',
    );
    expect(overlap.code).toBe(0);
    expect(overlap.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
  });

  // Reported: --spread-pips 1e9 gave negative prices; --from 2024-02-30 became March 1.
  it('range-checks the options: an impossible value names the flag and the valid range', async () => {
    const cases: [string[], string][] = [
      [
        ['--spread-pips', '1e9'],
        'fxflow: command-line flags: --spread-pips (data.spreadPips) must be a number of pips in [0, 1000] (got 1000000000)',
      ],
      [
        ['--from', '2024-02-30'],
        'fxflow: command-line flags: --from (run.from) has day 30: 2024-02 has days 01 to 29 (got "2024-02-30")',
      ],
      [
        ['--to', '2024-03-08T27:00:00Z'],
        'fxflow: command-line flags: --to (run.to) has hour 27: hours are 00 to 23 (got "2024-03-08T27:00:00Z")',
      ],
      [
        ['--margin-rate', '0'],
        'fxflow: command-line flags: --margin-rate (account.marginRate) must be a decimal string in (0, 1], e.g. "0.02" for 50:1 leverage (got "0")',
      ],
      [
        ['--margin-rate', '2'],
        'fxflow: command-line flags: --margin-rate (account.marginRate) must be a decimal string in (0, 1], e.g. "0.02" for 50:1 leverage (got "2")',
      ],
      [
        ['--balance', '0'],
        'fxflow: command-line flags: --balance (account.initialBalance) must be a decimal string in (0, 1,000,000,000,000], like "100000" (got "0")',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--no-save', ...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim()).toBe(message);
    }
  });

  // Reported: a syntax error said only "Transform failed with 1 error:".
  it('a syntax error or a type error in a strategy names the file, line and column, with the line shown', async () => {
    const file = join(tmp, 'syntax.ts');
    writeFileSync(
      file,
      `import { defineStrategy } from 'fxflow';\n\nexport default defineStrategy({\n  params: {},\n  subscribe: { candles: ['EUR_USD:H1'] },\n  onCandle(ctx) {\n    const x y = 1;\n  },\n});\n`,
    );
    // As the loader (tsx, esbuild) finds it, and as the type check before the run finds it.
    const loader = await fxflow('backtest', file, '--no-save', '--no-typecheck');
    expect(loader.code).toBe(1);
    expect(loader.stderr.trim()).toBe(
      `fxflow: ${file}: syntax error: Expected ";" but found "y"\n  at ${file}:7:13\n  7 |     const x y = 1;\n    |             ^`,
    );
    const checked = await fxflow('backtest', file, '--no-save');
    expect(checked.code).toBe(1);
    expect(checked.stderr.trim()).toBe(
      `fxflow: ${file}: syntax error: ',' expected.\n  at ${file}:7:13\n  7 |     const x y = 1;\n    |             ^`,
    );
    // A type error is shown with its place before the run (which goes on, as tsx would run it).
    const typed = join(tmp, 'typed.ts');
    writeFileSync(
      typed,
      `import { defineStrategy } from 'fxflow';\n\nexport default defineStrategy({\n  params: { period: 14 },\n  subscribe: { candles: ['EUR_USD:H1'] },\n  onCandle(ctx) {\n    ctx.indicator('RSI', { perod: ctx.params.period });\n  },\n});\n`,
    );
    const t = await fxflow('backtest', typed, '--no-save');
    expect(t.stderr).toContain(
      `fxflow: warning: ${typed}: type error: Object literal may only specify known properties, but 'perod' does not exist in type '{ period: number; }'. Did you mean to write 'period'?\n  at ${typed}:7:28\n  7 |     ctx.indicator('RSI', { perod: ctx.params.period });\n    |                            ^`,
    );
    // …and the run then stops on the same mistake, naming the valid options.
    expect(t.stderr).toContain("indicator 'RSI': unknown option 'perod'; its options are { period: number }");
    expect(t.code).toBe(1);
  });

  // Reported: a strategy outside the repository could not import fxflow or technicalindicators.
  it('a strategy in any folder imports fxflow, technicalindicators and packages installed beside it', async () => {
    const strategy = `import { defineStrategy } from 'fxflow';
import { SMA } from 'technicalindicators';
import { units } from 'local-sizing';

export default defineStrategy({
  params: {},
  subscribe: { candles: ['EUR_USD:H1'] },
  init: () => ({ done: false }),
  onCandle(ctx, s) {
    if (s.done) return;
    const ref = SMA.calculate({ period: 3, values: [...ctx.closes(3)] }).at(-1);
    if (ref === undefined) return;
    return { state: { done: true }, intents: [ctx.market('EUR_USD', units())] };
  },
});
`;
    // Two folders: one with no package.json (tsx compiles the strategy to CommonJS), one an ES module package.
    for (const kind of ['commonjs', 'module']) {
      const dir = mkdtempSync(join(tmpdir(), `fxflow-outside-${kind}-`));
      if (kind === 'module') writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
      mkdirSync(join(dir, 'node_modules', 'local-sizing'), { recursive: true });
      writeFileSync(
        join(dir, 'node_modules', 'local-sizing', 'package.json'),
        '{ "name": "local-sizing", "main": "index.js" }\n',
      );
      writeFileSync(join(dir, 'node_modules', 'local-sizing', 'index.js'), 'exports.units = () => 2500;\n');
      writeFileSync(
        join(dir, 'node_modules', 'local-sizing', 'index.d.ts'),
        'export declare function units(): number;\n',
      );
      writeFileSync(join(dir, 'mine.ts'), strategy);
      const r = await fxflow(
        'backtest',
        join(dir, 'mine.ts'),
        '--json',
        '--no-save',
        '--from',
        '2024-01-02',
        '--to',
        '2024-02-01',
      ); // 1 January is closed
      expect(r.stderr, kind).toBe('');
      expect(r.code, kind).toBe(0);
      const doc = JSON.parse(r.stdout) as { transactions: { type: string; units?: string }[] };
      expect(doc.transactions.find((t) => t.type === 'ORDER_FILL')?.units).toBe('2500');
    }
  });

  // Reported: `fxflow backtest … | head` ended in an EPIPE stack.
  it('a reader that goes away (| head) ends the command quietly', async () => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/fxflow.js'), 'backtest', 'strategies/sma-cross.ts', '--json', '--no-save'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Read the first chunk, then close the pipe, as head does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  // Reported: \`fxflow\` alone named 2 of its commands and there was no --version.
  it('fxflow alone lists every command; --version prints the version', async () => {
    const r = await fxflow();
    expect(r.code).toBe(64);
    for (const c of [
      'backtest <strategy>',
      'init <dir>',
      'data <command>',
      'run <strategy>',
      'sandbox',
      'auth <command>',
    ])
      expect(r.stderr).toContain(`fxflow ${c}`);
    const v = await fxflow('--version');
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  // Noticed: the usage errors a command finds itself (record, data import, download) exited 1, not 64.
  it("a usage error found by a command exits 64 like yargs' own", async () => {
    for (const args of [
      ['record', '--labs', 'weather', '--instruments', 'EUR_USD'],
      ['data', 'import', 'nowhere.csv', '--granularity', 'M7'],
    ]) {
      const r = await fxflow(...args);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(64);
    }
  });

  it('--help works on every command', async () => {
    for (const args of [
      ['--help'],
      ['backtest', '--help'],
      ['data', '--help'],
      ['data', 'import', '--help'],
      ['data', 'list', '--help'],
      ['data', 'sample', '--help'],
    ]) {
      const r = await fxflow(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/Options:/);
    }
  });
});

/**
 * Runs a command as a user types it in `cwd` (npx, npm run), offline: npx must find the command in
 * the project, never fetch a package of that name from the registry.
 */
async function shell(
  cwd: string,
  command: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd,
      maxBuffer: 64 << 20,
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number | string; stdout?: string; stderr?: string };
    return {
      code: typeof x.code === 'number' ? x.code : 1,
      stdout: x.stdout ?? '',
      stderr: `${x.stderr ?? ''}${typeof x.code === 'string' ? x.code : ''}`,
    };
  }
}

describe('fxflow init', () => {
  it('scaffolds a strategy project where `npx fxflow backtest strategy.ts` and `npm run check` work at once', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'fxflow-init-')), 'my-strategies');
    const r = await fxflow('init', dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `Created ${dir}: package.json, tsconfig.json, strategy.ts, README.md, .gitignore, node_modules/fxflow, node_modules/.bin/fxflow, node_modules/.bin/tsc`,
    );
    expect(r.stdout).toContain(`Next: cd ${dir} && npx fxflow backtest strategy.ts`);
    // What the message says to do, as a user does it: in the new folder (no node_modules above it).
    const npx = await shell(
      dir,
      'npx',
      'fxflow',
      'backtest',
      'strategy.ts',
      '--no-save',
      '--to',
      '2024-03-01',
    );
    expect(npx.stderr).toBe('');
    expect(npx.code).toBe(0);
    expect(npx.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
    const check = await shell(dir, 'npm', 'run', 'check');
    expect(check.code, `${check.stdout}${check.stderr}`).toBe(0);
    // The project's own type check (its `npm run check`), with fxflow's TypeScript.
    const tsc = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')],
      { cwd: dir },
    ).then(
      () => ({ code: 0, out: '' }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code ?? 1, out: e.stdout ?? '' }),
    );
    expect(tsc.out).toBe('');
    expect(tsc.code).toBe(0);
    const bt = await fxflow('backtest', join(dir, 'strategy.ts'), '--no-save', '--to', '2024-03-01');
    expect(bt.stderr).toBe('');
    expect(bt.code).toBe(0);
    expect(bt.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
    // Never over an existing project.
    const again = await fxflow('init', dir);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      `fxflow: ${dir}: already holds package.json: give an empty or new folder (nothing was written)`,
    );
  }, 120_000);
});

describe('fxflow data', () => {
  it('imports a generic CSV into a catalog and lists it; a bad row names file, line and column', async () => {
    const csv = join(tmp, 'eurusd.csv');
    writeFileSync(
      csv,
      [
        'time,o,h,l,c,volume',
        '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10',
        '2024-03-01T11:00:00Z,1.1005,1.102,1.1,1.101,12',
        '',
      ].join('\n'),
    );
    const cat = join(tmp, 'catalog');
    const r = await fxflow(
      'data',
      'import',
      csv,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--side',
      'mid',
      '--catalog',
      cat,
    );
    expect(r.code).toBe(0);
    const list = await fxflow('data', 'list', '--catalog', cat);
    expect(list.stdout).toMatch(
      /EUR_USD\s+H1\s+2024-03-01T10:00:00.000000000Z → 2024-03-01T11:00:00.000000000Z\s+2 rows/,
    );
    writeFileSync(
      csv,
      [
        'time,o,h,l,c,volume',
        '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10',
        '2024-03-01T11:00:00Z,1.1005,oops,1.1,1.101,12',
        '',
      ].join('\n'),
    );
    const bad = await fxflow(
      'data',
      'import',
      csv,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--side',
      'mid',
      '--catalog',
      cat,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${csv}:3 (mid high): expected a number`);
  });
});
