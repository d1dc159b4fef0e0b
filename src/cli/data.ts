import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import {
  Catalog,
  CLOSED_BARS_ALLOWED,
  ClockWatch,
  describeClosed,
  describeHoles,
  describeStretches,
  ensureSample,
} from '../adapters/catalog/index.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { cacheDirFor, listCache, type CacheEntry } from '../adapters/catalog/candle-cache.ts';
import { resampleSeries } from '../adapters/catalog/resample.ts';
import { listFinancing } from '../adapters/catalog/financing-store.ts';
import { checkLabs, listLabs } from '../adapters/catalog/labs-store.ts';
import { readManifest } from '../adapters/catalog/recording-manifest.ts';
import {
  checkFinancing,
  checkRecordingManifest,
  checkTicks,
  describeTickCheck,
} from '../adapters/catalog/recording-check.ts';
import { listTicks, tickInstruments } from '../adapters/catalog/tick-store.ts';
import { formatTime } from '../domain/time.ts';
import {
  catalogFolder,
  catalogToRead,
  DEFAULT_CATALOG,
  sampleCatalogDir,
} from '../adapters/catalog/location.ts';
import { CATALOG_FLAG } from './catalog-flag.ts';
import { describeOrigin } from '../app/sources.ts';
import { importData, parseAlignment, usageGranularity } from './data-import.ts';
import { dataDownloadCommand } from './download.ts';

/** `fxflow data …` subcommands. */
export function dataCommand(y: Argv): Argv {
  return y
    .command(
      'list',
      'List what the catalog holds: candles (instrument, granularity, first and last, rows), recorded labs items, ticks and financing',
      (a) => a.options(CATALOG_FLAG),
      async (a) => {
        const catalog = new Catalog(catalogToRead(a.catalog));
        const sample = catalog.root === sampleCatalogDir();
        process.stdout.write(
          `Catalog ${catalog.root}${sample ? ` (the bundled synthetic sample: ${resolve(DEFAULT_CATALOG)} holds nothing)` : ''}\n`,
        );
        if (sample && !existsSync(catalog.root)) {
          process.stdout.write(
            'The bundled sample is not generated yet: `fxflow data sample` (or the first backtest on it) generates it there.\n',
          );
          return;
        }
        const rows = catalog.list();
        const labs = await listLabs(catalog.root);
        for (const l of labs) {
          const when = (t: number | null): string => (t === null ? '?' : formatTime(t));
          process.stdout.write(
            `labs ${l.kind.padEnd(9)} ${when(l.first)} → ${when(l.last)}  ${l.items.toLocaleString('en-US')} items in ${l.files} month file${l.files === 1 ? '' : 's'}  ${l.subjects.join(' ')}${l.torn.length > 0 ? `  (torn tail in ${l.torn.join(', ')}: fxflow record cuts it on resume)` : ''}\n`,
          );
        }
        const ticks = listTicks(catalog.root);
        for (const t of ticks) {
          const when = (x: number | null): string => (x === null ? '?' : formatTime(x));
          process.stdout.write(
            `ticks ${t.instrument.padEnd(10)} ${when(t.first)} → ${when(t.last)}  ${t.ticks.toLocaleString('en-US')} ticks in ${t.days} day${t.days === 1 ? '' : 's'}${t.torn.length > 0 ? `  (torn tail in ${t.torn.join(', ')}: fxflow record cuts it on resume)` : ''}\n`,
          );
        }
        const financing = listFinancing(catalog.root);
        if (financing)
          process.stdout.write(
            `financing ${financing.first} → ${financing.last}  ${financing.days} trading day${financing.days === 1 ? '' : 's'}, ${financing.records} records  ${financing.instruments.join(' ')}\n`,
          );
        const manifest = readManifest(catalog.root);
        if (manifest)
          process.stdout.write(
            `recorded from ${manifest.accountID !== null ? `account ${manifest.accountID}` : 'no account (labs only)'} (${manifest.environment}): ${manifest.kinds.join(', ')}\n`,
          );
        writeCache(cacheDirFor(catalog.root), listCache(cacheDirFor(catalog.root)), catalog.root);
        if (rows.length === 0 && (labs.length > 0 || ticks.length > 0 || financing)) return;
        if (rows.length === 0) {
          process.stdout.write(
            `The catalog ${catalog.root} is empty${existsSync(catalog.root) ? '' : ' (no such folder)'}. Import candles with \`fxflow data import <file> --catalog ${catalog.root}\`, or name another catalog with --catalog or FXFLOW_CATALOG.\n`,
          );
          return;
        }
        const when = (t: number): string => (Number.isNaN(t) ? '?' : formatTime(t));
        for (const r of rows) {
          process.stdout.write(
            `${r.instrument.padEnd(10)} ${r.granularity.padEnd(4)} ${when(r.first)} → ${when(r.last)}  ${r.rows.toLocaleString('en-US')} rows  ${describeOrigin(r.meta)}\n`,
          );
          const holes = r.meta?.holeCount ?? 0;
          if (holes > 0) {
            const longest = [...(r.meta?.holes ?? [])].sort((x, y) => y.openHours - x.openHours)[0]!;
            process.stdout.write(
              `${''.padEnd(16)}${holes} hole${holes === 1 ? '' : 's'} beyond weekends and holidays; longest ${describeHoles([longest])[0]} (fxflow data check lists them)\n`,
            );
          }
          for (const s of r.meta?.sources ?? [])
            if (s.sha256)
              process.stdout.write(
                `${''.padEnd(16)}from ${s.file} (${s.format}, sha256 ${s.sha256.slice(0, 12)}…)\n`,
              );
          if (r.damaged) process.stdout.write(`${''.padEnd(16)}DAMAGED: ${r.damaged}\n`);
        }
        if (rows.some((r) => r.damaged)) process.exitCode = 1;
      },
    )
    .command(
      'sample',
      'Generate the bundled synthetic sample (EUR_USD, GBP_USD, USD_JPY × M1, H1, 2024) if it is missing',
      (a) => a,
      async () => {
        const root = sampleCatalogDir();
        const made = await ensureSample(root);
        process.stdout.write(
          made
            ? `Generated the synthetic sample in ${root}\n`
            : `The synthetic sample is already in ${root}\n`,
        );
      },
    )
    .command(
      'import [file]',
      'Import a file or folder of candles into the catalog (OANDA JSON, Lean CSV, HistData M1, OANDA mid CSV, generic CSV), checked against the instrument and granularity',
      (a) =>
        a
          .positional('file', {
            type: 'string',
            describe: 'A file, or a folder (each instrument in it goes to its own series)',
          })
          .option('bid', {
            type: 'string',
            describe: 'A file of bid candles, imported with --ask as one bid/ask series',
          })
          .option('ask', { type: 'string', describe: 'The file of ask candles that goes with --bid' })
          .option('instrument', {
            type: 'string',
            describe: "Instrument, e.g. EUR_USD (default: what the file's name or fields say)",
          })
          .option('granularity', {
            type: 'string',
            describe: "Granularity of the file, e.g. H1 (default: what the file's name or fields say)",
          })
          .option('format', { type: 'string', describe: 'Format when it cannot be detected' })
          .option('from', { type: 'string' })
          .option('to', { type: 'string' })
          .option('replace', {
            type: 'boolean',
            default: false,
            describe:
              'Overwrite held candles that differ from the file (default: list them and write nothing)',
          })
          .option('crossed', {
            type: 'string',
            choices: ['error', 'clamp'],
            default: 'error',
            describe:
              'A row whose bid is above its ask: an error, or clamp the ask up to the bid (counted and recorded)',
          })
          .option('timezone', {
            type: 'string',
            describe:
              "The clock the file's times are written in, when they carry no offset: an IANA zone (Europe/Berlin, DST included), a fixed offset (-05:00), or a zone shifted by an offset (Europe/London-05:00). Default: the format's (UTC; HistData -05:00). See docs/data.md, Time zones",
          })
          .option('side', {
            type: 'string',
            choices: ['bid', 'ask', 'mid'],
            describe:
              'The side of a one-sided file that does not say (generic time,o,h,l,c, Dukascopy, MetaTrader); required for such a file (fxflow does not guess)',
          })
          .option('spread-pips', { type: 'number', hidden: true })
          .options(CATALOG_FLAG),
      async (a) => {
        const r = await importData({
          ...(a.file !== undefined ? { file: String(a.file) } : {}),
          ...(a.bid !== undefined ? { bid: String(a.bid) } : {}),
          ...(a.ask !== undefined ? { ask: String(a.ask) } : {}),
          ...(a.instrument !== undefined ? { instrument: String(a.instrument) } : {}),
          ...(a.granularity !== undefined ? { granularity: String(a.granularity) } : {}),
          ...(a.format !== undefined ? { format: String(a.format) } : {}),
          ...(a.from !== undefined ? { from: String(a.from) } : {}),
          ...(a.to !== undefined ? { to: String(a.to) } : {}),
          ...(a.timezone !== undefined ? { timezone: String(a.timezone) } : {}),
          ...(a.side !== undefined ? { side: String(a.side) as 'bid' | 'ask' | 'mid' } : {}),
          ...(a['spread-pips'] !== undefined ? { spreadPips: Number(a['spread-pips']) } : {}),
          replace: a.replace === true,
          crossed: a.crossed === 'clamp' ? 'clamp' : 'error',
          catalog: catalogFolder(a.catalog),
        });
        for (const line of r) process.stdout.write(`${line}\n`);
      },
    )
    .command(
      'check',
      'Read every series (or one) and list its holes beyond weekends and holidays, damaged files and anomalies; and the recordings of fxflow record: tick day files, financing, recording.json',
      (a) =>
        a
          .option('instrument', { type: 'string' })
          .option('granularity', {
            type: 'string',
            describe: 'Check this candle granularity only (recordings are not checked)',
          })
          .options(CATALOG_FLAG),
      async (a) => {
        const catalog = new Catalog(catalogToRead(a.catalog));
        const instruments = loadInstruments();
        const instrument = a.instrument === undefined ? undefined : String(a.instrument);
        const series = catalog
          .list()
          .filter(
            (e) =>
              (instrument === undefined || e.instrument === instrument) &&
              (a.granularity === undefined || e.granularity === a.granularity),
          );
        // Recordings (ticks, financing, recording.json) unless a candle granularity was asked for.
        const recordings = a.granularity === undefined;
        const ticks = recordings ? checkTicks(catalog.root, instrument, instruments) : [];
        const financing = recordings ? await checkFinancing(catalog.root, instrument) : undefined;
        const manifest = recordings
          ? checkRecordingManifest(catalog.root, {
              ticks: tickInstruments(catalog.root),
              financing: financing?.held ?? [],
            })
          : undefined;
        // The decoded-candle cache: every block's checksum read, every source hashed.
        const cacheDir = cacheDirFor(catalog.root);
        const caches = listCache(cacheDir, true).filter(
          (c) => instrument === undefined || c.trailer?.instrument === instrument,
        );
        const labs = recordings && instrument === undefined ? checkLabs(catalog.root) : [];
        if (
          series.length === 0 &&
          ticks.length === 0 &&
          financing === undefined &&
          manifest === undefined &&
          caches.length === 0 &&
          labs.length === 0
        ) {
          process.stdout.write(
            `No series${instrument ? ` of ${instrument}` : ''}${a.granularity ? ` ${String(a.granularity)}` : ''} in ${catalog.root}.\n`,
          );
          return;
        }
        let problems = 0;
        for (const e of series) {
          // The catalog's times are UTC: bars inside the instrument's closures say the source's clock was misread.
          const inst = instruments.has(e.instrument) ? instruments.get(e.instrument) : undefined;
          const watch = inst ? new ClockWatch(inst.hours, e.granularity) : undefined;
          const r = await catalog.check(
            e.instrument,
            e.granularity,
            watch ? (c) => watch.feed(c) : undefined,
          );
          const meta = r.meta;
          process.stdout.write(
            `${e.instrument} ${e.granularity}: ${r.rows.toLocaleString('en-US')} rows, ${describeOrigin(meta)}\n`,
          );
          for (const d of r.damaged) process.stdout.write(`  DAMAGED ${d}\n`);
          if (meta?.sides === 'bid/ask' && r.oneSidedRows > 0)
            process.stdout.write(`  ANOMALY ${r.oneSidedRows} rows have bid = ask in a bid/ask series\n`);
          if (r.holes.length === 0) process.stdout.write('  no holes beyond weekends and holidays\n');
          else {
            process.stdout.write(
              `  ${r.holes.length} hole${r.holes.length === 1 ? '' : 's'} beyond weekends and holidays:\n`,
            );
            for (const h of describeHoles(r.holes)) process.stdout.write(`    ${h}\n`);
          }
          problems += r.damaged.length + r.holes.length;
          if (watch) {
            const w = watch.report();
            if (w.closed > 0) {
              process.stdout.write(
                `  ${w.closed} bar${w.closed === 1 ? '' : 's'} inside the market's closures (trading hours in data/instruments.json); first: ${describeClosed(w)}\n`,
              );
              if (!w.readFits && w.stretches.length > 0)
                process.stdout.write(
                  `  its weekly opens fit ${describeStretches(w)}${w.fits !== undefined ? `: the source was written in ${w.fits}; import it again with --timezone ${w.fits} (--replace)` : ''}\n`,
                );
              if (w.closed > CLOSED_BARS_ALLOWED) problems++;
            } else if (w.bars > 0) process.stdout.write("  no bars inside the market's closures\n");
          }
        }
        for (const t of ticks) {
          process.stdout.write(`${describeTickCheck(t)}\n`);
          for (const p of t.problems) process.stdout.write(`  ${p}\n`);
          if (t.problems.length === 0)
            process.stdout.write(
              '  every day file whole, rows in time order within their UTC day, bid <= ask\n',
            );
          problems += t.problems.length;
        }
        if (financing) {
          process.stdout.write(
            `financing: ${financing.records.toLocaleString('en-US')} records in ${financing.files} year file${financing.files === 1 ? '' : 's'}, ${financing.days} trading day${financing.days === 1 ? '' : 's'} ${financing.first ?? '?'} → ${financing.last ?? '?'}  ${financing.instruments.join(' ')}\n`,
          );
          for (const p of financing.problems) process.stdout.write(`  ${p}\n`);
          if (financing.problems.length === 0)
            process.stdout.write('  every line a record, one per trading day and instrument\n');
          problems += financing.problems.length;
        }
        for (const l of labs) {
          process.stdout.write(
            `labs ${l.kind}: ${l.items.toLocaleString('en-US')} items in ${l.files} month file${l.files === 1 ? '' : 's'}, known ${l.first !== null ? new Date(l.first).toISOString() : '?'} → ${l.last !== null ? new Date(l.last).toISOString() : '?'}  ${l.subjects.join(' ')}\n`,
          );
          for (const p of l.problems) process.stdout.write(`  ${p}\n`);
          if (l.problems.length === 0)
            process.stdout.write("  every line an item, in knownAt order, in its month's file\n");
          problems += l.problems.length;
        }
        if (manifest) {
          const m = manifest.manifest;
          process.stdout.write(
            m
              ? `recording.json: ${m.accountID !== null ? `account ${m.accountID}` : 'no account'} (${m.environment}), instruments ${m.instruments.join(',') || '(none)'}, kinds ${m.kinds.join(',') || '(none)'}\n`
              : 'recording.json:\n',
          );
          for (const p of manifest.problems) process.stdout.write(`  ${p}\n`);
          if (manifest.problems.length === 0) process.stdout.write('  matches the recordings on disk\n');
          problems += manifest.problems.length;
        }
        writeCache(cacheDir, caches, catalog.root);
        problems += caches.filter((c) => c.state === 'damaged').length;
        if (problems > 0) process.exitCode = 1;
      },
    )
    .command(
      'resample',
      "Build a coarser series (M2 … M) from a finer one in the catalog, with OANDA's alignment",
      (a) =>
        a
          .option('instrument', { type: 'string', demandOption: true })
          .option('granularity', {
            type: 'string',
            demandOption: true,
            describe: 'The granularity to build, e.g. H1, D',
          })
          .option('source', { type: 'string', default: 'M1', describe: 'The finer series to build it from' })
          .option('daily-alignment', {
            type: 'number',
            default: 17,
            describe: 'Hour (0-23) in --alignment-timezone where D, W and M candles start (OANDA: 17)',
          })
          .option('alignment-timezone', {
            type: 'string',
            default: 'America/New_York',
            describe: 'IANA time zone of the daily alignment (OANDA: America/New_York)',
          })
          .option('weekly-alignment', {
            type: 'string',
            default: 'Friday',
            describe: 'Day on which W candles start (OANDA: Friday)',
          })
          .option('replace', {
            type: 'boolean',
            default: false,
            describe: 'Overwrite held candles that differ',
          })
          .options(CATALOG_FLAG),
      async (a) => {
        const catalog = new Catalog(catalogFolder(a.catalog));
        const alignment = parseAlignment(
          a['daily-alignment'],
          a['alignment-timezone'],
          a['weekly-alignment'],
        );
        const instrument = String(a.instrument);
        const g = usageGranularity(String(a.granularity), '--granularity');
        const src = usageGranularity(String(a.source), '--source');
        const r = await resampleSeries(catalog, instrument, src, g, alignment, a.replace === true);
        process.stdout.write(
          `Built ${r.written.toLocaleString('en-US')} ${instrument} ${g} candles from ${src} (days at ${alignment.dailyAlignment}:00 ${alignment.alignmentTimezone}, weeks from ${alignment.weeklyAlignment}) into ${catalog.root}\n`,
        );
      },
    )
    .command(dataDownloadCommand)
    .demandCommand(1, 'Name a data command: list, check, sample, import, resample or download');
}

/**
 * The decoded-candle cache as `data list` and `data check` show it: a summary line, then one line per
 * file that is not fresh or whose source is outside the catalog (a `--data` file); the fresh caches
 * of the catalog's own month files are only counted.
 */
function writeCache(dir: string | undefined, entries: readonly CacheEntry[], catalogRoot: string): void {
  if (dir === undefined || entries.length === 0) return;
  const mb = entries.reduce((n, e) => n + e.bytes, 0) / 1e6;
  const count = (k: CacheEntry['state']): number => entries.filter((e) => e.state === k).length;
  const states = [
    `${count('fresh')} fresh`,
    ...(count('stale') > 0 ? [`${count('stale')} stale`] : []),
    ...(count('damaged') > 0 ? [`${count('damaged')} damaged`] : []),
  ].join(', ');
  process.stdout.write(
    `decoded-candle cache ${dir}: ${entries.length} file${entries.length === 1 ? '' : 's'}, ${mb.toFixed(1)} MB (${states})\n`,
  );
  const inCatalog = `${resolve(catalogRoot)}/`;
  for (const e of entries) {
    const t = e.trailer;
    if (e.state === 'fresh' && t && t.source.startsWith(inCatalog)) continue;
    const what = t
      ? `${t.instrument} ${t.granularity} ${t.rows.toLocaleString('en-US')} rows from ${t.source}`
      : e.file;
    const state =
      e.state === 'fresh'
        ? 'fresh'
        : e.state === 'stale'
          ? `STALE (${e.why}; rebuilt on next use)`
          : `DAMAGED (${e.why}; rebuilt on next use)`;
    process.stdout.write(`  ${what}: ${state}\n`);
  }
}
