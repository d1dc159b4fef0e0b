import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** Runs the real `fxflow` command; never throws, returns the exit code and both streams. */
async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], { cwd: ROOT, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-cli-'));

describe('fxflow backtest', () => {
  it('--json prints one JSON document with the summary, every transaction, the closed trades and the equity curve', async () => {
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--json', '--runs-dir', tmp);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      summary: { trades: number; finalBalance: number; realizedPL: number };
      transactions: { type: string; id: string; time: string; tradesClosed?: { tradeID: string; realizedPL: string; price: string }[] }[];
      trades: { id: string; closeTime: string; closePrice: number; realizedPL: number }[];
      equity: { time: string; nav: number }[];
      runDir: string;
    };
    expect(doc.summary.trades).toBeGreaterThan(0);
    // The trade list is the fills' tradesClosed, in order, with the same prices, times and P/L.
    const closings = doc.transactions.flatMap((t) => (t.tradesClosed ?? []).map((c) => ({ id: c.tradeID, time: t.time, price: Number(c.price), pl: Number(c.realizedPL) })));
    expect(doc.trades.map((t) => t.id)).toEqual(closings.map((c) => c.id));
    expect(doc.trades.map((t) => t.closePrice)).toEqual(closings.map((c) => c.price));
    expect(doc.trades.map((t) => Date.parse(t.closeTime))).toEqual(closings.map((c) => Date.parse(c.time)));
    expect(doc.trades.length).toBe(doc.summary.trades);
    expect(doc.transactions.filter((t) => t.type === 'ORDER_FILL').length).toBeGreaterThan(doc.summary.trades);
    expect(doc.transactions.map((t) => Number(t.id))).toEqual(doc.transactions.map((_, i) => i + 1));
    expect(doc.equity.length).toBeGreaterThan(200);
    expect(doc.runDir.startsWith(tmp)).toBe(true);
  });

  it('prints a readable report and saves a run folder', async () => {
    const r = await fxflow('backtest', 'strategies/breakout-tpsl.ts', '--instrument', 'USD_JPY', '--param', 'units=5000', '--runs-dir', tmp);
    expect(r.code).toBe(0);
    for (const label of ['Trades (closed)', 'Win rate', 'Net P/L', 'Max drawdown', 'Sharpe', 'Exposure', 'Spread cost', 'Financing']) {
      expect(r.stdout).toContain(label);
    }
    expect(r.stdout).toContain('units=5000');
    const dir = /Run saved in (.+)/.exec(r.stdout)?.[1];
    expect(dir).toBeDefined();
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir!).sort()).toEqual(['config.json', 'equity.csv', 'intents.jsonl', 'log.jsonl', 'report.txt', 'summary.json', 'trades.csv', 'transactions.jsonl']);
    const { readFileSync } = await import('node:fs');
    const rows = readFileSync(join(dir!, 'trades.csv'), 'utf8').trim().split('\n');
    expect(rows[0]).toBe('id,instrument,units,openTime,closeTime,openPrice,closePrice,realizedPL,financing');
    const trades = Number(/Trades \(closed\)\s+(\d+)/.exec(r.stdout)?.[1]);
    expect(rows.length - 1).toBe(trades);
    expect(rows.slice(1).every((row) => row.split(',')[1] === 'USD_JPY')).toBe(true);
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
    if (ctx.transaction.type === 'ORDER_FILL') throw new Error('cannot book fill ' + ctx.transaction.id);
  },
});
`,
    );
    const r = await fxflow('backtest', file, '--no-save');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^fxflow: strategy 'throws-on-fill' threw in onTransaction at 2024-01-01T\d\d:00:00\.000Z: cannot book fill \d+$/);
    expect(lines[1]).toBe(`  at onTransaction (${file})`);
    expect(lines[2]).toMatch(/the strategy has to be fixed; FXFLOW_DEBUG=1 prints the whole stack/);
    expect(lines).toHaveLength(3); // no stack trace, no "internal error"
  });

  it('--slippage, --latency and --commission oanda-core choose the fill models; report.txt and config.json name them', async () => {
    const r = await fxflow('backtest', 'strategies/breakout-tpsl.ts', '--instrument', 'USD_JPY', '--slippage', 'fixed:0.5', '--latency', 'fixed:500', '--commission', 'oanda-core', '--runs-dir', tmp);
    expect(r.code).toBe(0);
    const line = 'fill models: path adaptive · slippage fixed:0.5 · latency fixed:500 · commission oanda-core';
    expect(r.stdout).toContain(line);
    const dir = /Run saved in (.+)/.exec(r.stdout)?.[1];
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(dir!, 'report.txt'), 'utf8')).toContain(line);
    const config = JSON.parse(readFileSync(join(dir!, 'config.json'), 'utf8')) as { fill: Record<string, unknown>; costs: Record<string, unknown> };
    expect([config.fill.slippage, config.fill.latency, config.costs.commission]).toEqual(['fixed:0.5', 'fixed:500', 'oanda-core']);
    // The schedule's 70 USD per million on every fill of a currency pair.
    const fills = readFileSync(join(dir!, 'transactions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>).filter((t) => t.type === 'ORDER_FILL');
    expect(fills.length).toBeGreaterThan(0);
    for (const t of fills) expect(Number(t.commission)).toBeCloseTo((Math.abs(Number(t.units)) * 70) / 1e6, 4);
    const bad = await fxflow('backtest', 'strategies/sma-cross.ts', '--slippage', 'fast', '--no-save');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/command-line flags: fill\.slippage is wrong: slippage must be none, fixed:<pips>/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('overrides config per run and says which field is wrong', async () => {
    const bad = await fxflow('backtest', 'strategies/sma-cross.ts', '--balance', 'lots', '--no-save');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/account\.initialBalance must be a positive decimal string/);
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
    expect(p.stderr).toMatch(/unknown param 'fats'; this strategy declares: instrument, granularity, component, fast, slow, units, longOnly/);
    const n = await fxflow('backtest', 'strategies/sma-cross.ts', '--param', 'fast=quick', '--no-save');
    expect(n.stderr).toMatch(/param 'fast' must be a number \(got 'quick'\)/);
    const missing = await fxflow('backtest', 'strategies/nope.ts', '--no-save');
    expect(missing.stderr).toMatch(/strategies\/nope.ts: file not found/);
    const file = join(tmp, 'no-default.ts');
    writeFileSync(file, 'export const x = 1;\n');
    const nodefault = await fxflow('backtest', file, '--no-save');
    expect(nodefault.stderr).toMatch(/has no default export/);
    const unknownInstrument = await fxflow('backtest', 'strategies/sma-cross.ts', '--instrument', 'EUR_UDS', '--no-save');
    expect(unknownInstrument.stderr).toMatch(/unknown instrument 'EUR_UDS'/);
  });

  it('a run folder that cannot be made is one message naming it, with no stack trace and no hang', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--runs-dir', join(file, 'runs'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`cannot write ${join(file, 'runs')}/\\S+ \\(ENOTDIR\\): choose another folder with --runs-dir, or pass --no-save`));
    expect(r.stderr).not.toMatch(/\n\s+at |node:events|Unhandled/);
    // procfs refuses the folder with ENOENT, on which Node's recursive mkdir used to loop for ever.
    if (process.platform === 'linux') {
      const p = await fxflow('backtest', 'strategies/sma-cross.ts', '--runs-dir', '/proc/fxflow-no-such-folder');
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
    expect(exact.stderr).toMatch(/fill\.path "exact" replays the ticks inside each candle: give a tick file or folder with --ticks/);
  });

  it('names the missing data and how to get it', async () => {
    const r = await fxflow('backtest', 'strategies/sma-cross.ts', '--instrument', 'AUD_USD', '--no-save');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no AUD_USD H1 data in the catalog.*fxflow data import/s);
    // A period the catalog does not hold: one message with the months it holds, not an empty report.
    const outside = await fxflow('backtest', 'strategies/sma-cross.ts', '--from', '2030-01-01', '--to', '2030-02-01', '--no-save');
    expect(outside.code).toBe(1);
    expect(outside.stdout).toBe('');
    expect(outside.stderr.trim()).toBe(
      `fxflow: ${join(ROOT, 'data/catalog/EUR_USD/H1')}: no EUR_USD H1 candles between 2030-01-01 and 2030-02-01: the catalog holds 2024-01 to 2024-12. Choose --from/--to inside that, or get the period with \`fxflow data download --instrument EUR_USD --granularity H1 --from 2030-01-01 --to 2030-02-01\``,
    );
    // A data file with nothing in the period (or of another instrument): the same, naming the file.
    const csv = join(tmp, 'march.csv');
    writeFileSync(csv, ['time,o,h,l,c,volume', '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10', '2024-03-01T11:00:00Z,1.1005,1.102,1.1,1.101,12', ''].join('\n'));
    const empty = await fxflow('backtest', 'strategies/sma-cross.ts', '--data', csv, '--from', '2024-04-01', '--to', '2024-05-01', '--no-save');
    expect(empty.code).toBe(1);
    expect(empty.stderr.trim()).toBe(`fxflow: ${csv}: no data for EUR_USD:H1:M between 2024-04-01 and 2024-05-01: check --instrument, --granularity, --from and --to against what it holds`);
    // A period that overlaps what is held runs on what is there.
    const overlap = await fxflow('backtest', 'strategies/sma-cross.ts', '--from', '2023-12-20', '--to', '2024-01-10', '--no-save');
    expect(overlap.code).toBe(0);
    expect(overlap.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
  });

  it('--help works on every command', async () => {
    for (const args of [['--help'], ['backtest', '--help'], ['data', '--help'], ['data', 'import', '--help'], ['data', 'list', '--help'], ['data', 'sample', '--help']]) {
      const r = await fxflow(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/Options:/);
    }
  });
});

describe('fxflow data', () => {
  it('imports a generic CSV into a catalog and lists it; a bad row names file, line and column', async () => {
    const csv = join(tmp, 'eurusd.csv');
    writeFileSync(csv, ['time,o,h,l,c,volume', '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10', '2024-03-01T11:00:00Z,1.1005,1.102,1.1,1.101,12', ''].join('\n'));
    const cat = join(tmp, 'catalog');
    const r = await fxflow('data', 'import', csv, '--instrument', 'EUR_USD', '--granularity', 'H1', '--spread-pips', '1', '--catalog', cat);
    expect(r.code).toBe(0);
    const list = await fxflow('data', 'list', '--catalog', cat);
    expect(list.stdout).toMatch(/EUR_USD\s+H1\s+2024-03-01T10:00:00.000000000Z → 2024-03-01T11:00:00.000000000Z\s+2 rows/);
    writeFileSync(csv, ['time,o,h,l,c,volume', '2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005,10', '2024-03-01T11:00:00Z,1.1005,oops,1.1,1.101,12', ''].join('\n'));
    const bad = await fxflow('data', 'import', csv, '--instrument', 'EUR_USD', '--granularity', 'H1', '--catalog', cat);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${csv}:3 (mid high): expected a number`);
  });
});
