import { execFile } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FX, HAS_SHARED, warnIfNoShared } from './shared.ts';

/**
 * Issue 34, items 1 and 4, through the real command: a `--data` file passes the checks `data
 * import` applies (OANDA's GBP_USD_M1.csv from ../shared read as EUR_USD H1 or as M15 is refused
 * as the import refuses it; read as what it is, it runs), a file with no rows says so, a 64 MB
 * line is refused at the line cap, and `--timezone -05:00` parses as the help writes it.
 */
warnIfNoShared('--data through the import gate (OANDA GBP_USD_M1.csv)');

const ROOT = join(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-gate-cli-'));
const env = { ...process.env, FXFLOW_DATA_CACHE: join(tmp, 'cache') };

async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bin/fxflow.js'), ...args],
      { cwd: ROOT, env, maxBuffer: 16 << 20 },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const GBP = join(FX, 'jtang-oanda-mid-csv', 'GBP_USD_M1.csv');
const backtest = (
  file: string,
  ...more: string[]
): Promise<{ code: number; stdout: string; stderr: string }> =>
  fxflow(
    'backtest',
    'strategies/sma-cross.ts',
    '--data',
    file,
    '--spread',
    'mid',
    '--from',
    '2020-08-24',
    '--to',
    '2020-08-31',
    '--no-save',
    ...more,
  );

describe.skipIf(!HAS_SHARED)('--data passes the checks data import applies (real OANDA GBP_USD M1)', () => {
  it('read as EUR_USD H1 or EUR_USD M15 it is refused, as data import refuses it, naming the file, what it holds and the flag that fits', async () => {
    const says = `${GBP} (instrument): the file says it holds GBP_USD, not EUR_USD`;
    for (const g of ['H1', 'M15']) {
      const r = await backtest(GBP, '--instrument', 'EUR_USD', '--granularity', g);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`fxflow: ${says}: run it with --instrument GBP_USD`);
      expect(r.stdout).not.toMatch(/Trades/);
      const imp = await fxflow(
        'data',
        'import',
        GBP,
        '--instrument',
        'EUR_USD',
        '--granularity',
        g,
        '--catalog',
        join(tmp, `cat-${g}`),
      );
      expect(imp.stderr.trim()).toBe(`fxflow: ${says}: import it with --instrument GBP_USD`);
    }
  });

  it("as GBP_USD M15 its name refuses it; a copy whose name says nothing is refused by its rows' spacing", async () => {
    const named = await backtest(GBP, '--instrument', 'GBP_USD', '--granularity', 'M15');
    expect(named.code).toBe(1);
    expect(named.stderr).toContain(
      `${GBP} (granularity): the file's name says M1, not M15: run it with --granularity M1 (or import it with \`fxflow data import\`: a backtest on the catalog builds M15 candles from M1)`,
    );
    const neutral = join(tmp, 'prices.csv');
    copyFileSync(GBP, neutral);
    const spaced = await backtest(neutral, '--instrument', 'GBP_USD', '--granularity', 'M15');
    expect(spaced.code).toBe(1);
    expect(spaced.stderr).toMatch(
      new RegExp(
        `${neutral.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(granularity\\): its rows are mostly 1 minute apart \\(\\d+ of the first 2000 gaps\\), not one M15 candle: this is M1 data; run it with --granularity M1`,
      ),
    );
    expect(spaced.stdout).not.toMatch(/Trades/);
  });

  it('read as what it is (GBP_USD M1) it still runs', async () => {
    const r = await backtest(GBP, '--instrument', 'GBP_USD', '--granularity', 'M1');
    expect(r.stderr).not.toMatch(/fxflow:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Instrument GBP_USD\s+\d+ trades/);
  });
});

describe('what a file without rows, a line without an end and a negative offset say', () => {
  it('a header-only file: the import and a --data run both say the file has no rows, naming it', async () => {
    const file = join(tmp, 'eurusd_m1.csv');
    writeFileSync(file, 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume\n');
    const imp = await fxflow('data', 'import', file, '--catalog', join(tmp, 'cat-empty'));
    expect(imp.code).toBe(1);
    expect(imp.stderr.trim()).toBe(
      `fxflow: ${file}: the file has no rows (a header or empty lines only): nothing to import; check that it is the file meant`,
    );
    const run = await fxflow(
      'backtest',
      'strategies/sma-cross.ts',
      '--data',
      file,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'M1',
      '--no-save',
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `fxflow: ${file}: the file has no rows (a header or empty lines only): nothing to run on; check that it is the file meant`,
    );
  });

  it('data import of a gzipped file whose third line is 64 MiB without an end is refused at the 1 MiB line cap', async () => {
    const gz = join(tmp, 'eurusd_m1.csv.gz');
    const zip = createGzip({ level: 1 });
    const out = createWriteStream(gz);
    zip.pipe(out);
    zip.write('time,o,h,l,c,volume\n2024-01-08T10:00:00Z,1.1,1.2,1.0,1.15,5\n');
    const mb = Buffer.alloc(1 << 20, '7');
    for (let i = 0; i < 64; i++) if (!zip.write(mb)) await once(zip, 'drain');
    zip.end();
    await once(out, 'close');
    const r = await fxflow('data', 'import', gz, '--side', 'mid', '--catalog', join(tmp, 'cat-long'));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `fxflow: ${gz}:3: this line is longer than 1 MiB and has not ended: the file is not rows of text, or its rows are not separated by line ends. fxflow reads a line of at most 1 MiB; if the file's lines really are longer, raise the cap with FXFLOW_MAX_LINE_BYTES=<bytes> (e.g. FXFLOW_MAX_LINE_BYTES=4194304)`,
    );
  });

  it('--timezone -05:00 with a space, as the help writes it, reads the file five hours behind UTC', async () => {
    const file = join(tmp, 'eurusd-m1-ny.csv');
    writeFileSync(
      file,
      'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume\n2024-01-08 05:00:00,1.1,1.1,1.1,1.1,1.1001,1.1001,1.1001,1.1001,1\n2024-01-08 05:01:00,1.1,1.1,1.1,1.1,1.1001,1.1001,1.1001,1.1001,1\n2024-01-08 05:02:00,1.1,1.1,1.1,1.1,1.1001,1.1001,1.1001,1.1001,1\n2024-01-08 05:03:00,1.1,1.1,1.1,1.1,1.1001,1.1001,1.1001,1.1001,1\n',
    );
    const cat = join(tmp, 'cat-ny');
    const r = await fxflow('data', 'import', file, '--timezone', '-05:00', '--catalog', cat);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(cat, 'EUR_USD', 'M1', '2024-01.csv'), 'utf8')).toMatch(
      /\n2024-01-08T10:00:00Z,1\.1,/,
    );
  });
});
