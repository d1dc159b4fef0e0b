import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Catalog, openCandles } from '../src/adapters/catalog/index.ts';
import { resampled } from '../src/adapters/catalog/resample.ts';
import { syntheticBatches } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest, type BacktestResult } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { dataCatalog } from '../src/app/sources.ts';
import { importData, type ImportArgs } from '../src/cli/data-import.ts';
import { loadStrategy } from '../src/app/load-strategy.ts';
import type { Candle } from '../src/domain/candle.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { FX, HAS_SHARED, warnIfNoShared } from './shared.ts';

/**
 * The data layer on the real files of ../shared/data/fx: each failure a user reported (issue 13,
 * "Why") reproduced on the files that showed it, and what fxflow does now instead.
 */
warnIfNoShared('data layer on real files');

const ROOT = resolve(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-data-'));
let n = 0;
const newCatalog = (): string => join(tmp, `catalog-${++n}`);
const HIST = join(FX, 'histdata-m1-ffml');
const LEAN = join(FX, 'quantconnect-lean-oanda');
const NT = join(FX, 'nautilus-trader-testdata');

const imp = (a: Partial<ImportArgs> & { catalog: string }): Promise<string[]> =>
  importData({ replace: false, crossed: 'error', ...a });

/** The first `lines` lines of a file, copied under another name (a file whose name says nothing). */
function head(src: string, lines: number, name: string): string {
  const text = readFileSync(src, 'utf8').split('\n').slice(0, lines).join('\n');
  const out = join(tmp, name);
  writeFileSync(out, `${text}\n`);
  return out;
}

async function all(source: AsyncIterable<readonly Candle[]>): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of source) out.push(...b);
  return out;
}

const run = promisify(execFile);
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

describe.skipIf(!HAS_SHARED)('data import checks what it is told against the data', () => {
  it('a folder of several instruments imported as EUR_USD is refused; without --instrument each goes to its own series', async () => {
    const cat = newCatalog();
    await expect(
      imp({ file: join(LEAN, 'minute'), instrument: 'EUR_USD', granularity: 'M1', catalog: cat }),
    ).rejects.toThrow(
      /the folder holds several instruments: EUR_USD \(15 files\), NZD_USD \(13 files\), XAU_USD \(13 files\)/,
    );
    // The HistData folder as EUR_USD (the reported case: it became one series with a NAV of -819,178 USD).
    await expect(imp({ file: HIST, instrument: 'EUR_USD', granularity: 'M1', catalog: cat })).rejects.toThrow(
      /the folder holds several instruments: AUD_USD \(1 file\), EUR_USD \(1 file\), GBP_USD \(1 file\), USD_JPY \(1 file\), XAU_USD \(1 file\)/,
    );
    expect(new Catalog(cat).list()).toEqual([]);
    const lines = await imp({ file: join(LEAN, 'minute'), catalog: cat });
    expect(lines.filter((l) => l.startsWith('Imported'))).toHaveLength(3);
    const list = new Catalog(cat).list();
    expect(list.map((e) => [e.instrument, e.granularity, e.rows, e.meta?.sides])).toEqual([
      ['EUR_USD', 'M1', 18184, 'bid/ask'],
      ['NZD_USD', 'M1', 15543, 'bid/ask'],
      ['XAU_USD', 'M1', 15222, 'bid/ask'],
    ]);
  });

  it('a folder import writes every series or none: the OANDA mid CSV folder into a catalog holding USD_JPY M1 bid/ask is refused whole', async () => {
    const cat = newCatalog();
    await imp({ file: join(FX, 'tacchang-oanda-json/USD_JPY_M1_20180409_0000.json'), catalog: cat });
    await expect(imp({ file: join(FX, 'jtang-oanda-mid-csv'), catalog: cat })).rejects.toThrow(
      /USD_JPY\/M1: the series holds bid\/ask prices and this import has mid/,
    );
    expect(new Catalog(cat).list().map((e) => `${e.instrument} ${e.granularity}`)).toEqual(['USD_JPY M1']);
    const other = newCatalog();
    await imp({ file: join(FX, 'jtang-oanda-mid-csv'), catalog: other });
    expect(
      new Catalog(other).list().map((e) => `${e.instrument} ${e.granularity} ${e.rows} ${e.meta?.sides}`),
    ).toEqual(
      ['AUD_USD', 'EUR_USD', 'GBP_USD', 'USD_JPY'].flatMap((i) =>
        ['D', 'H1', 'M1', 'M5'].map((g) => `${i} ${g} 5000 mid`),
      ),
    );
  });

  it('a GBP_USD file imported as EUR_USD is refused by its name; under a neutral name it conflicts with the held EUR_USD candles and nothing is written unless --replace', async () => {
    const cat = newCatalog();
    await expect(
      imp({
        file: join(HIST, 'DAT_ASCII_GBPUSD_M1_2019-01_to_2019-06.csv'),
        instrument: 'EUR_USD',
        granularity: 'M1',
        catalog: cat,
      }),
    ).rejects.toThrow(/the file's name says GBP_USD, not EUR_USD: import it with --instrument GBP_USD/);
    // EUR_USD first, then GBP_USD rows of the same minutes under a name that says nothing.
    await imp({
      file: head(join(HIST, 'DAT_ASCII_EURUSD_M1_2019.csv'), 3000, 'eurusd-jan.csv'),
      instrument: 'EUR_USD',
      granularity: 'M1',
      catalog: cat,
    });
    const before = readFileSync(join(cat, 'EUR_USD/M1/2019-01.csv'), 'utf8');
    const gbp = head(join(HIST, 'DAT_ASCII_GBPUSD_M1_2019-01_to_2019-06.csv'), 3000, 'prices.csv');
    const err = await imp({ file: gbp, instrument: 'EUR_USD', granularity: 'M1', catalog: cat }).catch(
      (e: Error) => e,
    );
    expect(String(err)).toMatch(
      /\d+ candles of the import differ from what the catalog holds; nothing was written/,
    );
    expect(String(err)).toMatch(/held: {5}2019-01-0\dT\d\d:\d\d:00Z,1\.1/);
    expect(String(err)).toMatch(/--replace/);
    expect(readFileSync(join(cat, 'EUR_USD/M1/2019-01.csv'), 'utf8')).toBe(before);
    // Importing the same EUR_USD rows again is no conflict.
    await imp({
      file: head(join(HIST, 'DAT_ASCII_EURUSD_M1_2019.csv'), 3000, 'eurusd-jan.csv'),
      instrument: 'EUR_USD',
      granularity: 'M1',
      catalog: cat,
    });
    expect(readFileSync(join(cat, 'EUR_USD/M1/2019-01.csv'), 'utf8')).toBe(before);
    // --replace is the user saying so: the file's candles take the held ones' place.
    await imp({ file: gbp, instrument: 'EUR_USD', granularity: 'M1', replace: true, catalog: cat });
    const replaced = await all(new Catalog(cat).candles({ instrument: 'EUR_USD', granularity: 'M1' }));
    const gbpRows = await all(openCandles(gbp, { instrument: 'EUR_USD', granularity: 'M1' }));
    const byTime = new Map(replaced.map((c) => [c.time, c.bc]));
    expect(gbpRows.every((c) => byTime.get(c.time) === c.bc)).toBe(true);
    expect(new Catalog(cat).meta('EUR_USD', 'M1')!.sources.map((x) => x.file)).toEqual([
      join(tmp, 'eurusd-jan.csv'),
      gbp,
    ]);
  });

  it('an M1 file imported as H1 is refused, by its name and, under a neutral name, by its spacing', async () => {
    const cat = newCatalog();
    await expect(
      imp({
        file: join(HIST, 'DAT_ASCII_GBPUSD_M1_2019-01_to_2019-06.csv'),
        instrument: 'GBP_USD',
        granularity: 'H1',
        catalog: cat,
      }),
    ).rejects.toThrow(/the file's name says M1, not H1/);
    const neutral = head(join(HIST, 'DAT_ASCII_GBPUSD_M1_2019-01_to_2019-06.csv'), 5000, 'gbpusd.csv');
    await expect(
      imp({ file: neutral, instrument: 'GBP_USD', granularity: 'H1', catalog: cat }),
    ).rejects.toThrow(
      /rows are mostly 1 minute apart .*this is M1 data; import it with --granularity M1 \(then `fxflow data resample --granularity H1`/,
    );
    expect(new Catalog(cat).list()).toEqual([]);
  });

  it('an unknown instrument (FOO_BAR) is an error naming the known ones', async () => {
    await expect(
      imp({
        file: join(LEAN, 'hour/eurusd.csv'),
        instrument: 'FOO_BAR',
        granularity: 'H1',
        catalog: newCatalog(),
      }),
    ).rejects.toThrow(
      /unknown instrument 'FOO_BAR': the known instruments are EUR_USD, GBP_USD, USD_JPY, .*XAU_USD/,
    );
  });

  it('prices are checked against the instrument: USD_JPY rows (at 108) imported as EUR_USD are another instrument', async () => {
    const jpy = head(join(HIST, 'DAT_ASCII_USDJPY_M1_2019-01_to_2019-06.csv'), 2000, 'quotes.csv');
    await expect(
      imp({ file: jpy, instrument: 'EUR_USD', granularity: 'M1', catalog: newCatalog() }),
    ).rejects.toThrow(
      /EUR_USD trades between 0\.7 and 1\.8; this file has 10\d\.\d+ at 2019-01-0.*another instrument/,
    );
  });

  it('a time like 2024-03-08T27:00:00Z is refused with its line', async () => {
    const f = join(tmp, 'eurusd-bad-time.csv');
    writeFileSync(
      f,
      [
        'time,o,h,l,c',
        '2024-03-08T21:00:00Z,1.1,1.101,1.099,1.1005',
        '2024-03-08T27:00:00Z,1.1005,1.102,1.1,1.101',
        '',
      ].join('\n'),
    );
    await expect(
      imp({ file: f, instrument: 'EUR_USD', granularity: 'H1', side: 'mid', catalog: newCatalog() }),
    ).rejects.toThrow(`${f}:3 (time): cannot read the time in "2024-03-08T27:00:00Z`);
    writeFileSync(f, ['time,o,h,l,c', '2024-02-30T21:00:00Z,1.1,1.101,1.099,1.1005', ''].join('\n'));
    await expect(
      imp({ file: f, instrument: 'EUR_USD', granularity: 'H1', side: 'mid', catalog: newCatalog() }),
    ).rejects.toThrow(`${f}:2 (time)`);
  });

  it('bid > ask is an error, not clamped silently; FXCM bid and ask files (pandas times) import as bid/ask with --crossed clamp, the clamped rows recorded', async () => {
    const cat = newCatalog();
    const bid = join(NT, 'fxcm-gbpusd-m1-bid-2012.csv');
    const ask = join(NT, 'fxcm-gbpusd-m1-ask-2012.csv');
    await expect(imp({ bid, ask, catalog: cat })).rejects.toThrow(
      /the bid is above the ask .*--crossed clamp/,
    );
    // Swapped files: the bid is above the ask on almost every row: the first row says so.
    await expect(imp({ bid: ask, ask: bid, crossed: 'error', catalog: cat })).rejects.toThrow(
      /at 2012-02-01T00:00:00.000Z the bid is above the ask .*not swapped/,
    );
    expect(new Catalog(cat).list()).toEqual([]);
    const lines = await imp({ bid, ask, crossed: 'clamp', catalog: cat });
    expect(lines[0]).toMatch(
      /^Imported 30,117 GBP_USD M1 candles \(bid\/ask\) from a bid and an ask file .*\d+ crossed rows clamped/,
    );
    const meta = new Catalog(cat).meta('GBP_USD', 'M1')!;
    expect(meta.sides).toBe('bid/ask');
    expect(meta.synthetic).toBe(false);
    expect(meta.sources.map((s) => s.file)).toEqual([bid, ask]);
    expect(meta.sources[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    // Counted once for the series (on the ask file), not once per file (issue 25: 2,406 vs 1,203).
    const clamped = Number(/([\d,]+) crossed rows clamped/.exec(lines[0]!)![1]!.replace(/,/g, ''));
    expect(clamped).toBeGreaterThanOrEqual(347);
    expect(meta.sources.map((s) => s.crossedClamped)).toEqual([undefined, clamped]);
    const list = await fxflow('data', 'list', '--catalog', cat);
    expect(list.stdout).toContain(`, ${clamped} crossed rows clamped`);
    const first = (await all(new Catalog(cat).candles({ instrument: 'GBP_USD', granularity: 'M1' })))[0]!;
    expect([first.time, first.bo, first.ao]).toEqual([
      Date.UTC(2012, 1, 1),
      1.57597,
      Number(readFileSync(ask, 'utf8').split('\n')[1]!.split(',')[1]),
    ]);
  });
});

describe.skipIf(!HAS_SHARED)('provenance: data list and data check', () => {
  it('data list shows sides, real or synthetic, sources with hashes and holes; a damaged file is named, never NaN-undefined', async () => {
    const cat = newCatalog();
    // HistData's 2019 files follow European summer time (docs/data.md, Time zones).
    await imp({
      file: join(HIST, 'DAT_ASCII_XAUUSD_M1_2019-01_to_2019-06.csv'),
      timezone: 'Europe/London-05:00',
      catalog: cat,
    });
    await imp({ file: join(LEAN, 'minute/eurusd'), catalog: cat });
    const list = await fxflow('data', 'list', '--catalog', cat);
    expect(list.stdout).toMatch(/EUR_USD\s+M1 .*18,184 rows\s+real, bid\/ask, 15 sources \(lean\)/);
    // 2014-05-15 to 2018-04-03: nearly four years without a candle.
    expect(list.stdout).toMatch(
      /1 hole beyond weekends and holidays; longest 2014-05-1\dT.* → 2018-04-03T00:0\d:00Z \(\d{3,4} trading days of open market\)/,
    );
    expect(list.stdout).toMatch(/XAU_USD\s+M1 .*real, bid only, 1 source \(histdata\)/);
    expect(list.stdout).toMatch(
      /from .*DAT_ASCII_XAUUSD_M1_2019-01_to_2019-06\.csv \(histdata, sha256 [0-9a-f]{12}…\)/,
    );
    // Damage the last month file of a series: list says which file, and exits 1.
    const file = join(cat, 'EUR_USD/M1/2018-04.csv');
    writeFileSync(file, `${readFileSync(file, 'utf8')}garbage-row\n`);
    const damaged = await fxflow('data', 'list', '--catalog', cat);
    expect(damaged.stdout).not.toMatch(/NaN|undefined/);
    expect(damaged.stdout).toContain(`DAMAGED: ${file}: its last row "garbage-row" has no readable time`);
    expect(damaged.code).toBe(1);
    const check = await fxflow('data', 'check', '--catalog', cat, '--instrument', 'EUR_USD');
    expect(check.stdout).toContain(`DAMAGED ${file}:`);
    expect(check.stdout).toMatch(/hole.* beyond weekends and holidays:\n {4}2014-05-1\d/);
    expect(check.code).toBe(1);
  });

  it('synthetic and real candles are never mixed in one series', async () => {
    const cat = new Catalog(newCatalog());
    const from = Date.UTC(2019, 0, 1);
    await cat.write(
      'EUR_USD',
      'M1',
      syntheticBatches({
        instrument: 'EUR_USD',
        granularity: 'M1',
        from,
        to: from + 10 * 86_400_000,
        seed: 1,
      }),
      {
        meta: {
          synthetic: true,
          sides: 'bid/ask',
          sources: [
            { file: 'synthetic', sha256: '', bytes: 0, format: 'synthetic', rows: 0, importedAt: '' },
          ],
        },
      },
    );
    const before = readFileSync(join(cat.root, 'EUR_USD/M1/2019-01.csv'), 'utf8');
    await expect(
      imp({ file: join(HIST, 'DAT_ASCII_EURUSD_M1_2019.csv'), to: '2019-02-01', catalog: cat.root }),
    ).rejects.toThrow(/the series holds SYNTHETIC candles and this import is real: the two are never mixed/);
    expect(readFileSync(join(cat.root, 'EUR_USD/M1/2019-01.csv'), 'utf8')).toBe(before);
  });
});

const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function backtest(
  catalogRoot: string,
  over: Record<string, Record<string, unknown>>,
  extra: { strictData?: boolean } = {},
): Promise<BacktestResult> {
  const config = loadConfig(undefined, over as never);
  const loaded = await loadStrategy(join(ROOT, 'strategies/sma-cross.ts'), [
    `instrument=${String(over.run!.instrument)}`,
    `granularity=${String(over.run!.granularity)}`,
  ]);
  const source = await dataCatalog(catalogRoot);
  return runBacktest({
    loaded,
    config,
    instruments: loadInstruments(),
    candles: source.candles,
    available: source.available,
    origin: source.origin,
    log: silent,
    ...extra,
  });
}

describe.skipIf(!HAS_SHARED)(
  'one-sided data never gets a free spread; the result says which data and model',
  () => {
    it('a backtest on bid-only HistData needs a spread model; with one, the bid is the data and the ask is above it', async () => {
      const cat = newCatalog();
      await imp({ file: join(HIST, 'DAT_ASCII_EURUSD_M1_2019.csv'), to: '2019-03-01', catalog: cat });
      const run = { instrument: 'EUR_USD', granularity: 'M1', from: '2019-01-02', to: '2019-02-01' };
      await expect(backtest(cat, { run })).rejects.toThrow(
        /EUR_USD M1 holds bid prices only .*--spread fixed --spread-pips X .*--spread hourly .*--spread mid/,
      );
      const r = await backtest(cat, { run, data: { spread: 'fixed', spreadPips: 1.5 } });
      expect(r.summary.trades).toBeGreaterThan(0);
      expect(r.data.sides).toBe('bid');
      expect(r.data.synthetic).toBe(false);
      expect(r.data.spreadModel).toMatchObject({ kind: 'fixed', pips: 1.5 });
      expect(r.data.source).toMatch(/EUR_USD M1: real, bid only, 1 source \(histdata\)/);
      expect(r.summary.spreadCost).toBeGreaterThan(0);
      const zero = await backtest(cat, { run, data: { spread: 'mid' } });
      expect(zero.data.spreadModel.kind).toBe('mid');
      expect(zero.summary.spreadCost).toBe(0);
    });

    it('a --data mid file under the native model is an error saying how to name a spread model', async () => {
      const config = loadConfig(undefined, {
        run: { instrument: 'EUR_USD', granularity: 'H1', from: '2019-12-01', to: '2020-08-01' },
      });
      const loaded = await loadStrategy(join(ROOT, 'strategies/sma-cross.ts'), [
        'instrument=EUR_USD',
        'granularity=H1',
      ]);
      const { fileSource } = await import('../src/app/sources.ts');
      const instruments = loadInstruments();
      await expect(
        runBacktest({
          loaded,
          config,
          instruments,
          candles: fileSource(join(FX, 'jtang-oanda-mid-csv/EUR_USD_H1.csv'), undefined, config, instruments),
          log: silent,
        }),
      ).rejects.toThrow(/holds mid prices only: a backtest on it needs a spread model: --spread fixed/);
    });
  },
);

describe.skipIf(!HAS_SHARED)('coverage is checked', () => {
  it('a backtest across a multi-year hole lists it (and the period the data covered), or stops with --strict-data', async () => {
    const cat = newCatalog();
    // The period 2007 and 2012 imported, the years between missing.
    await imp({ file: join(LEAN, 'hour/eurusd.csv'), from: '2007-01-01', to: '2008-01-01', catalog: cat });
    await imp({ file: join(LEAN, 'hour/eurusd.csv'), from: '2012-01-01', to: '2013-01-01', catalog: cat });
    const run = { instrument: 'EUR_USD', granularity: 'H1', from: '2007-06-01', to: '2012-06-01' };
    const holes: string[] = [];
    const config = loadConfig(undefined, { run } as never);
    const loaded = await loadStrategy(join(ROOT, 'strategies/sma-cross.ts'), [
      'instrument=EUR_USD',
      'granularity=H1',
    ]);
    const source = await dataCatalog(cat);
    const r = await runBacktest({
      loaded,
      config,
      instruments: loadInstruments(),
      candles: source.candles,
      available: source.available,
      origin: source.origin,
      log: silent,
      onHole: (h) => holes.push(`${h.from} ${h.to}`),
    });
    expect(r.data.coverage.holes).toHaveLength(1);
    expect(r.data.coverage.holes[0]).toMatchObject({ instrument: 'EUR_USD', granularity: 'H1' });
    expect(r.data.coverage.holes[0]!.from).toMatch(/^2007-12-31T2[23]:00:00/);
    expect(r.data.coverage.holes[0]!.to).toMatch(/^2012-01-0[12]T/);
    expect(r.data.coverage.holes[0]!.openHours).toBeGreaterThan(4 * 250 * 24);
    expect(holes).toEqual([`${r.data.coverage.holes[0]!.from} ${r.data.coverage.holes[0]!.to}`]);
    expect(r.data.coverage.from).toMatch(/^2007-06-0/);
    expect(r.data.coverage.to).toMatch(/^2012-05-31T/);
    await expect(backtest(cat, { run }, { strictData: true })).rejects.toThrow(
      /EUR_USD H1 has a hole beyond weekends and holidays: 2007-12-31T2\d:00:00Z → 2012-01-0\dT.*--strict-data stops here/,
    );
  });

  it('a half-imported period: the hole after the last candle is listed, and coverage.to says where the data ends', async () => {
    const cat = newCatalog();
    await imp({ file: join(LEAN, 'hour/eurusd.csv'), from: '2017-01-01', to: '2017-04-01', catalog: cat });
    const r = await backtest(cat, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2017-01-01', to: '2017-07-01' },
    });
    expect(r.data.coverage.to).toMatch(/^2017-03-31T/);
    expect(r.data.coverage.holes.map((h) => [h.from.slice(0, 10), h.to.slice(0, 10)])).toEqual([
      ['2017-03-31', '2017-07-01'],
    ]);
  });

  it("two years of real OANDA H1: weekends, Christmas and New Year (observed on Monday 2016-12-26 and 2017-01-02) are not holes; the three real holes of Lean's file are", async () => {
    const cat = newCatalog();
    await imp({ file: join(LEAN, 'hour/eurusd.csv'), from: '2016-01-01', to: '2018-01-01', catalog: cat });
    const r = await backtest(cat, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2016-01-01', to: '2018-01-01' },
    });
    // The file jumps from 2016-12-09 21:00 to 2016-12-16 05:00, and stops at 03:00 on two Fridays.
    expect(r.data.coverage.holes.map((h) => `${h.from} → ${h.to} ${h.openHours} h`)).toEqual([
      '2016-12-09T22:00:00.000Z → 2016-12-16T05:00:00.000Z 103 h',
      '2017-03-31T04:00:00.000Z → 2017-04-02T21:00:00.000Z 17 h',
      '2017-10-06T04:00:00.000Z → 2017-10-08T21:00:00.000Z 17 h',
    ]);
  });
});

describe.skipIf(!HAS_SHARED)(
  'resampling M1 to H1 and D (Lean minute files against Lean hour and daily files)',
  () => {
    it("close of every bar matches on both sides; the open is the first minute (OANDA), where Lean opens at the previous bar's close and widens high and low to it", async () => {
      const cat = newCatalog();
      await imp({ file: join(LEAN, 'minute/eurusd'), catalog: cat });
      const catalog = new Catalog(cat);
      const period = { from: Date.UTC(2014, 4, 1), to: Date.UTC(2014, 4, 16) };
      // Lean's hour bars start on UTC hours (as OANDA's H1); its daily bars run 00:00 to 00:00 UTC,
      // so D is built with --daily-alignment 0 --alignment-timezone UTC for this comparison.
      const cases = [
        {
          g: 'H1' as const,
          file: 'hour/eurusd.csv',
          alignment: {
            dailyAlignment: 17,
            alignmentTimezone: 'America/New_York',
            weeklyAlignment: 'Friday' as const,
          },
          bars: 264,
        },
        {
          g: 'D' as const,
          file: 'daily/eurusd.csv',
          alignment: { dailyAlignment: 0, alignmentTimezone: 'UTC', weeklyAlignment: 'Friday' as const },
          bars: 13,
        },
      ];
      const minutes = await all(catalog.candles({ instrument: 'EUR_USD', granularity: 'M1', ...period }));
      for (const k of cases) {
        const built = await all(resampled(catalog, 'EUR_USD', 'M1', k.g, k.alignment, period));
        const lean = await all(
          openCandles(join(LEAN, k.file), { instrument: 'EUR_USD', granularity: k.g, ...period }),
        );
        expect(
          built.map((c) => c.time),
          k.g,
        ).toEqual(lean.map((c) => c.time));
        expect(built).toHaveLength(k.bars);
        for (let i = 0; i < lean.length; i++) {
          const a = built[i]!;
          const b = lean[i]!;
          const at = `${k.g} ${new Date(b.time).toISOString()}`;
          expect([a.bc, a.ac], at).toEqual([b.bc, b.ac]);
          const firstMinute = minutes.find((m) => m.time >= a.time)!;
          expect([a.bo, a.ao], at).toEqual([firstMinute.bo, firstMinute.ao]);
          // Lean's bar: open = previous close (the first bar's is outside the minute files), high and low include it.
          const bo = i > 0 ? lean[i - 1]!.bc : b.bo;
          const ao = i > 0 ? lean[i - 1]!.ac : b.ao;
          expect([b.bo, b.ao], at).toEqual([bo, ao]);
          expect([b.bh, b.bl, b.ah, b.al], at).toEqual([
            Math.max(a.bh, bo),
            Math.min(a.bl, bo),
            Math.max(a.ah, ao),
            Math.min(a.al, ao),
          ]);
        }
      }
    });

    it('a backtest on H1 with only M1 in the catalog builds H1 on the fly; fxflow data resample writes it with its provenance', async () => {
      const cat = newCatalog();
      await imp({ file: join(LEAN, 'minute/eurusd'), catalog: cat });
      const r = await backtest(cat, {
        run: { instrument: 'EUR_USD', granularity: 'H1', from: '2014-05-01', to: '2014-05-16' },
      });
      expect(r.engine.candles).toBe(264);
      expect(r.data.source).toMatch(/EUR_USD M1 resampled to H1 \(days at 17:00 America\/New_York\)/);
      const res = await fxflow(
        'data',
        'resample',
        '--instrument',
        'EUR_USD',
        '--granularity',
        'D',
        '--daily-alignment',
        '0',
        '--alignment-timezone',
        'UTC',
        '--catalog',
        cat,
      );
      expect(res.stderr).toBe('');
      expect(res.stdout).toMatch(
        /Built 15 EUR_USD D candles from M1 \(days at 0:00 UTC, weeks from Friday\)/,
      );
      const meta = new Catalog(cat).meta('EUR_USD', 'D')!;
      expect(meta.derivedFrom).toEqual({
        granularity: 'M1',
        dailyAlignment: 0,
        alignmentTimezone: 'UTC',
        weeklyAlignment: 'Friday',
      });
      expect(meta.sides).toBe('bid/ask');
      const bad = await fxflow(
        'data',
        'resample',
        '--instrument',
        'EUR_USD',
        '--granularity',
        'D',
        '--daily-alignment',
        '27',
        '--catalog',
        cat,
      );
      expect(bad.code).toBe(64); // a usage error (README: exit 64)
      expect(bad.stderr).toMatch(/--daily-alignment 27: give an hour from 0 to 23/);
    });
  },
);

describe.skipIf(!HAS_SHARED)('fxflow data import (the command)', () => {
  it('imports the FXCM bid and ask files with --bid/--ask and says what it did', async () => {
    const cat = newCatalog();
    mkdirSync(cat, { recursive: true });
    const bid = join(tmp, 'fxcm-usdjpy-m1-bid-2013.csv');
    copyFileSync(join(NT, 'fxcm-usdjpy-m1-bid-2013.csv'), bid);
    const r = await fxflow(
      'data',
      'import',
      '--bid',
      bid,
      '--ask',
      join(NT, 'fxcm-usdjpy-m1-ask-2013.csv'),
      '--crossed',
      'clamp',
      '--catalog',
      cat,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Imported 28,761 USD_JPY M1 candles \(bid\/ask\) from a bid and an ask file/);
    const spread = await fxflow('data', 'import', bid, '--spread-pips', '1', '--catalog', cat);
    expect(spread.code).toBe(64); // a usage error (README: exit 64)
    expect(spread.stderr).toMatch(
      /--spread-pips is no longer applied at import: .*--spread fixed --spread-pips X/,
    );
    const foo = await fxflow(
      'data',
      'import',
      bid,
      '--instrument',
      'FOO_BAR',
      '--granularity',
      'M1',
      '--catalog',
      cat,
    );
    expect(foo.code).toBe(64);
    expect(foo.stderr).toMatch(/^fxflow: unknown instrument 'FOO_BAR': the known instruments are EUR_USD/);
  });
});

describe('spread models on one-sided data', () => {
  it('fixed: bid-only data keeps its bid and the ask goes above it; mid data is centred', async () => {
    const { withSpread } = await import('../src/app/backtest.ts');
    const c: Candle = {
      kind: 'candle',
      instrument: 'EUR_USD',
      granularity: 'H1',
      time: 0,
      at: 3_600_000,
      bo: 1.1,
      bh: 1.102,
      bl: 1.099,
      bc: 1.101,
      ao: 1.1,
      ah: 1.102,
      al: 1.099,
      ac: 1.101,
      volume: 0,
      complete: true,
    };
    const data = { catalog: '', spread: 'fixed' as const, spreadPips: 1.5 };
    const snap = (x: number): number => Math.round(x * 1e5) / 1e5;
    const one = async (sides: string): Promise<Candle> =>
      (
        await all(
          withSpread(
            (async function* () {
              yield [c];
            })(),
            data,
            0.0001,
            snap,
            sides,
          ),
        )
      )[0]!;
    const bid = await one('bid');
    expect([bid.bo, bid.bc, bid.ao, bid.ac]).toEqual([1.1, 1.101, 1.10015, 1.10115]);
    const mid = await one('mid');
    expect([mid.bo, mid.ao]).toEqual([snap(1.1 - 0.000075), snap(1.1 + 0.000075)]);
  });

  it('a catalog series of unknown origin with bid = ask everywhere is taken for one-sided data: no free spread', async () => {
    const cat = new Catalog(newCatalog());
    const from = Date.UTC(2019, 0, 7);
    const rows: Candle[] = [];
    for (let h = 0; h < 200; h++) {
      const p = 1.14 + 0.0001 * Math.sin(h / 3);
      const x = Math.round(p * 1e5) / 1e5;
      rows.push({
        kind: 'candle',
        instrument: 'EUR_USD',
        granularity: 'H1',
        time: from + h * 3_600_000,
        at: from + (h + 1) * 3_600_000,
        bo: x,
        bh: x,
        bl: x,
        bc: x,
        ao: x,
        ah: x,
        al: x,
        ac: x,
        volume: 0,
        complete: true,
      });
    }
    await cat.write('EUR_USD', 'H1', [rows]); // no provenance: written as an older fxflow did
    await expect(
      backtest(cat.root, {
        run: { instrument: 'EUR_USD', granularity: 'H1', from: '2019-01-07', to: '2019-01-14' },
      }),
    ).rejects.toThrow(/has bid = ask in every candle .*origin unknown.*--spread fixed --spread-pips X/);
  });
});
