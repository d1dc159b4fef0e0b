import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { Catalog, ensureSample, openCandles, type CandleFormat } from '../adapters/catalog/index.ts';
import { isGranularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { formatTime } from '../domain/time.ts';
import type { CandleSourceFactory } from './backtest.ts';
import { ROOT, parseDate, type BacktestConfig } from './config.ts';
import { dataDownloadCommand } from './download.ts';

/** The catalog as a backtest's candle source; the bundled synthetic sample is generated on first use. */
export async function dataCatalog(root: string): Promise<{ candles: CandleSourceFactory; available: (instrument: string, granularity: string) => boolean }> {
  const sampleRoot = resolve(ROOT, 'data/catalog');
  if (resolve(root) === sampleRoot) {
    const made = await ensureSample(sampleRoot);
    if (made) process.stderr.write(`Generated the bundled synthetic sample data in ${sampleRoot} (first use).\n`);
  }
  const catalog = new Catalog(root);
  return {
    candles: (req) => {
      catalog.requireCoverage(req); // a period the catalog does not hold is an error, not an empty report
      return catalog.candles(req);
    },
    available: (i, g) => catalog.has(i, g),
  };
}

/** A single file or folder (`--data`) as the source of the run's series. */
export function fileSource(path: string, format: string | undefined, config: BacktestConfig, instruments: InstrumentRegistry): CandleSourceFactory {
  return (req) => {
    const inst = instruments.get(req.instrument);
    return openCandles(resolve(path), {
      instrument: req.instrument,
      granularity: req.granularity,
      from: req.from,
      to: req.to,
      pipLocation: inst.pipLocation,
      ...(format ? { format: format as CandleFormat } : {}),
      spread: config.data.spreadPipsByHour ? { kind: 'hourly', pips: config.data.spreadPipsByHour } : { kind: 'fixed', pips: config.data.spreadPips },
    });
  };
}

/** `fxflow data …` subcommands. */
export function dataCommand(y: Argv): Argv {
  return y
    .command(
      'list',
      'List what the catalog holds: instrument, granularity, first and last candle, rows',
      (a) => a.option('catalog', { type: 'string', default: 'data/catalog', describe: 'Catalog folder' }),
      async (a) => {
        const catalog = new Catalog(resolve(String(a.catalog)));
        const rows = catalog.list();
        if (rows.length === 0) {
          process.stdout.write('The catalog is empty. Run `fxflow data sample` or `fxflow data import`.\n');
          return;
        }
        for (const r of rows) {
          process.stdout.write(`${r.instrument.padEnd(10)} ${r.granularity.padEnd(4)} ${formatTime(r.first)} → ${formatTime(r.last)}  ${r.rows.toLocaleString('en-US')} rows\n`);
        }
      },
    )
    .command(
      'sample',
      'Generate the bundled synthetic sample (EUR_USD, GBP_USD, USD_JPY × M1, H1, 2024) if it is missing',
      (a) => a,
      async () => {
        const root = resolve(ROOT, 'data/catalog');
        const made = await ensureSample(root);
        process.stdout.write(made ? `Generated the synthetic sample in ${root}\n` : `The synthetic sample is already in ${root}\n`);
      },
    )
    .command(
      'import <file>',
      'Import a file or folder of candles into the catalog (OANDA JSON, Lean CSV, HistData M1, OANDA mid CSV, generic CSV)',
      (a) =>
        a
          .positional('file', { type: 'string', demandOption: true })
          .option('instrument', { type: 'string', demandOption: true, describe: 'Instrument, e.g. EUR_USD' })
          .option('granularity', { type: 'string', demandOption: true, describe: 'Granularity of the file, e.g. H1' })
          .option('format', { type: 'string', describe: 'Format when it cannot be detected' })
          .option('from', { type: 'string' })
          .option('to', { type: 'string' })
          .option('spread-pips', { type: 'number', default: 0, describe: 'Spread added to one-sided (mid or bid) data' })
          .option('catalog', { type: 'string', default: 'data/catalog' }),
      async (a) => {
        const g = String(a.granularity);
        if (!isGranularity(g)) throw Object.assign(new Error(`--granularity '${g}' is not a v20 granularity (S5…M30, H1…H12, D, W, M)`), { code: 'USAGE' });
        const catalog = new Catalog(resolve(String(a.catalog)));
        const source = openCandles(resolve(String(a.file)), {
          instrument: String(a.instrument),
          granularity: g,
          ...(a.from ? { from: parseDate(String(a.from)) } : {}),
          ...(a.to ? { to: parseDate(String(a.to)) } : {}),
          ...(a.format ? { format: String(a.format) as CandleFormat } : {}),
          spread: { kind: 'fixed', pips: Number(a['spread-pips']) },
        });
        const n = await catalog.write(String(a.instrument), g, source);
        process.stdout.write(`Imported ${JSON.stringify(n)} into ${catalog.root}\n`);
      },
    )
    .command(dataDownloadCommand)
    .demandCommand(1, 'Name a data command: list, sample, import or download');
}
