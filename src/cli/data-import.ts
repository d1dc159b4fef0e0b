import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  Catalog,
  ClockSpecError,
  DataError,
  describePacking,
  describeClosed,
  describeStretches,
  parseClock,
  type ClockReport,
  dataFiles,
  detectFormat,
  fieldsOf,
  gateFileNames,
  gateFiles,
  gateRows,
  granularityInName,
  instrumentsInName,
  newNotices,
  openBidAsk,
  openCandles,
  readClock,
  sidesOf,
  type CandleFormat,
  type GateAsk,
  type ReadNotices,
  type SeriesSource,
  type WriteResult,
} from '../adapters/catalog/index.ts';
import { isGranularity, type Alignment, type Granularity } from '../domain/granularity.ts';
import { loadInstruments, type InstrumentRegistry } from '../domain/instrument.ts';
import { parseDate } from '../app/config.ts';

export interface ImportArgs {
  readonly file?: string;
  readonly bid?: string;
  readonly ask?: string;
  readonly instrument?: string;
  readonly granularity?: string;
  readonly format?: string;
  readonly from?: string;
  readonly to?: string;
  readonly spreadPips?: number;
  readonly replace: boolean;
  readonly crossed: 'error' | 'clamp';
  readonly catalog: string;
  /** The clock the file's times are written in (file-clock.ts); default what its format documents. */
  readonly timezone?: string;
  /** The side of a one-sided file that does not say (generic time,o,h,l,c, Dukascopy, MetaTrader). */
  readonly side?: 'bid' | 'ask' | 'mid';
}

const usage = (message: string): Error => Object.assign(new Error(message), { code: 'USAGE' });

/** A granularity given on the command line, or a usage error listing v20's. */
export function usageGranularity(g: string, flag: string): Granularity {
  if (!isGranularity(g)) throw usage(`${flag} '${g}' is not a v20 granularity (S5…M30, H1…H12, D, W, M)`);
  return g;
}

/** An instrument given on the command line, or an error naming the known ones. */
function knownInstrument(name: string, instruments: InstrumentRegistry): string {
  if (instruments.has(name)) return name;
  const known = instruments
    .list()
    .map((i) => i.name)
    .join(', ');
  throw usage(
    `unknown instrument '${name}': the known instruments are ${known} (defined in data/instruments.json)`,
  );
}

/** --daily-alignment, --alignment-timezone, --weekly-alignment, range-checked. */
export function parseAlignment(daily: unknown, zone: unknown, weekly: unknown): Alignment {
  const h = Number(daily);
  if (!Number.isInteger(h) || h < 0 || h > 23)
    throw usage(`--daily-alignment ${String(daily)}: give an hour from 0 to 23 (OANDA: 17)`);
  const z = String(zone);
  if (!Intl.supportedValuesOf('timeZone').includes(z) && z !== 'UTC')
    throw usage(
      `--alignment-timezone '${z}' is not an IANA time zone (e.g. America/New_York, UTC, Europe/London)`,
    );
  const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
  const w = days.find((d) => d.toLowerCase() === String(weekly).toLowerCase());
  if (!w) throw usage(`--weekly-alignment '${String(weekly)}': give a day of the week (OANDA: Friday)`);
  return { dailyAlignment: h, alignmentTimezone: z, weeklyAlignment: w };
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** One series to import: its files (or a bid and an ask file) and what they hold. */
interface Group {
  instrument: string;
  granularity: Granularity;
  files: string[];
  bidAsk?: { bid: string; ask: string };
}

/** The instrument a file says it holds (its fields, else its name), if it says one. */
function statedInstrument(file: string, known: readonly string[]): string | undefined {
  const f = fieldsOf(file).instrument;
  if (f !== undefined) return f;
  const n = instrumentsInName(file, known);
  return n.length === 1 ? n[0] : undefined;
}

function statedGranularity(file: string): Granularity | undefined {
  const f = fieldsOf(file).granularity;
  if (f !== undefined && isGranularity(f)) return f;
  return granularityInName(file);
}

/**
 * `fxflow data import`: reads the file(s), checks them against the instrument and granularity
 * (given or stated by the files), and writes each series with its provenance. Returns the lines
 * to print.
 */
export async function importData(a: ImportArgs): Promise<string[]> {
  if (a.spreadPips !== undefined) {
    throw usage(
      '--spread-pips is no longer applied at import: one-sided (mid or bid) data is stored as it is and its provenance says so; give the spread to the backtest (`fxflow backtest … --spread fixed --spread-pips X`, or --spread hourly / mid)',
    );
  }
  if ((a.bid === undefined) !== (a.ask === undefined))
    throw usage('--bid and --ask go together: give both files');
  if (a.bid !== undefined && a.file !== undefined)
    throw usage('give either a file (or folder) or --bid and --ask, not both');
  if (a.bid === undefined && a.file === undefined)
    throw usage('name a file or folder to import (or --bid <file> --ask <file>)');
  if (a.side !== undefined && a.bid !== undefined)
    throw usage(
      '--side names the side of one file; with --bid and --ask each file is its side: leave --side out',
    );
  if (a.side !== undefined && !['bid', 'ask', 'mid'].includes(a.side))
    throw usage(`--side '${String(a.side)}': give bid, ask or mid`);
  if (a.timezone !== undefined) {
    try {
      parseClock(a.timezone);
    } catch (e) {
      if (e instanceof ClockSpecError) throw usage(e.message);
      throw e;
    }
  }
  const instruments = loadInstruments();
  const known = instruments.list().map((i) => i.name);
  const givenInstrument = a.instrument !== undefined ? knownInstrument(a.instrument, instruments) : undefined;
  const givenGranularity =
    a.granularity !== undefined ? usageGranularity(a.granularity, '--granularity') : undefined;
  const groups: Group[] = [];
  const decide = (file: string): { instrument: string; granularity: Granularity } => {
    const instrument = givenInstrument ?? statedInstrument(file, known);
    if (instrument === undefined)
      throw new DataError(
        file,
        0,
        'instrument',
        "neither the file's name nor its fields say which instrument it holds: pass --instrument (e.g. --instrument EUR_USD)",
      );
    knownInstrument(instrument, instruments);
    const granularity = givenGranularity ?? statedGranularity(file);
    if (granularity === undefined)
      throw new DataError(
        file,
        0,
        'granularity',
        "neither the file's name nor its fields say its granularity: pass --granularity (e.g. --granularity M1)",
      );
    gateFileNames(file, { instrument, granularity, instruments, fix: 'import' });
    return { instrument, granularity };
  };
  if (a.bid !== undefined) {
    const bid = resolve(a.bid);
    const ask = resolve(a.ask!);
    const b = decide(bid);
    const k = decide(ask);
    if (b.instrument !== k.instrument || b.granularity !== k.granularity) {
      throw new DataError(
        ask,
        0,
        '',
        `the ask file holds ${k.instrument} ${k.granularity} and the bid file ${b.instrument} ${b.granularity}: give the two sides of one series`,
      );
    }
    groups.push({ ...b, files: [bid, ask], bidAsk: { bid, ask } });
  } else {
    const path = resolve(a.file!);
    try {
      statSync(path);
    } catch {
      throw new DataError(path, 0, '', 'no such file or folder');
    }
    const files = dataFiles(path);
    if (files.length === 0) throw new DataError(path, 0, '', 'the folder holds no files');
    if (givenInstrument !== undefined && files.length > 1) {
      // A folder said to hold one instrument must not name others.
      const named = new Map<string, number>();
      for (const f of files) {
        const s = statedInstrument(f, known);
        if (s !== undefined) named.set(s, (named.get(s) ?? 0) + 1);
      }
      if (named.size > 1) {
        const list = [...named].map(([i, n]) => `${i} (${n} file${n === 1 ? '' : 's'})`).join(', ');
        throw new DataError(
          path,
          0,
          'instrument',
          `the folder holds several instruments: ${list}. Import it without --instrument to put each into its own series, or import one instrument's files`,
        );
      }
    }
    const byKey = new Map<string, Group>();
    for (const f of files) {
      const d = decide(f);
      const key = `${d.instrument}:${d.granularity}`;
      const g = byKey.get(key) ?? { ...d, files: [] };
      g.files.push(f);
      byKey.set(key, g);
    }
    groups.push(...byKey.values());
  }

  const catalog = new Catalog(resolve(a.catalog));
  const out: string[] = [];
  // Every series is read, checked and staged first; all are put in place only when all passed.
  const staged: { g: Group; r: WriteResult; notices: ReadNotices; clock?: ClockReport }[] = [];
  try {
    for (const g of groups) staged.push(await stageGroup(g, a, catalog, instruments));
  } catch (e) {
    for (const s of staged) s.r.abort();
    throw e;
  }
  for (const s of staged) await s.r.commit();
  for (const { g, r, notices, clock } of staged) {
    const meta = catalog.meta(g.instrument, g.granularity);
    const notes = [
      notices.duplicates > 0 ? `${notices.duplicates} exact duplicate rows skipped` : '',
      notices.incomplete > 0 ? `${notices.incomplete} incomplete candles skipped` : '',
      notices.crossed > 0 ? `${notices.crossed} crossed rows clamped (ask raised to the bid)` : '',
      meta?.holeCount
        ? `${meta.holeCount} hole${meta.holeCount === 1 ? '' : 's'} beyond weekends and holidays (fxflow data check)`
        : '',
    ].filter((x) => x !== '');
    out.push(
      `Imported ${r.written.toLocaleString('en-US')} ${g.instrument} ${g.granularity} candles (${meta?.sides ?? 'unknown'}) from ${g.bidAsk ? 'a bid and an ask file' : `${g.files.length} file${g.files.length === 1 ? '' : 's'}`} into ${catalog.root}${notes.length ? `; ${notes.join('; ')}` : ''}`,
    );
    if (clock) out.push(...clockLines(clock, g));
    if (meta && meta.sides !== 'bid/ask')
      out.push(
        `  ${g.instrument} ${g.granularity} holds ${meta.sides} prices only: a backtest on it needs a spread model (--spread fixed --spread-pips X, --spread hourly, or --spread mid for zero)`,
      );
  }
  return out;
}

/** What the import says about the file's clock: the zone it was read in, the offsets its weeks fit, bars inside closures. */
function clockLines(r: ClockReport, g: Group): string[] {
  if (r.bars === 0) return [];
  const out: string[] = [];
  const fit = r.stretches.length > 0 ? `; its weekly opens fit ${describeStretches(r)}` : '';
  out.push(`  times read as ${r.read}${r.readFits ? " (every weekly open on the market's)" : ''}${fit}`);
  if (!r.readFits && r.fits !== undefined)
    out.push(
      `  warning: ${g.instrument} ${g.granularity}'s weekly opens are not on the market's open as read: --timezone ${r.fits} fits every week`,
    );
  if (r.closed > 0)
    out.push(
      `  warning: ${r.closed} bar${r.closed === 1 ? '' : 's'} inside the market's closures (first: ${describeClosed(r)}): fxflow data check lists them`,
    );
  return out;
}

/** Reads, checks and stages one series of an import (nothing in place yet). */
async function stageGroup(
  g: Group,
  a: ImportArgs,
  catalog: Catalog,
  instruments: InstrumentRegistry,
): Promise<{ g: Group; r: WriteResult; notices: ReadNotices; clock?: ClockReport }> {
  const inst = instruments.get(g.instrument);
  const notices = newNotices();
  const o = {
    instrument: g.instrument,
    granularity: g.granularity,
    pipLocation: inst.pipLocation,
    ...(a.from !== undefined ? { from: parseDate(a.from) } : {}),
    ...(a.to !== undefined ? { to: parseDate(a.to) } : {}),
    ...(a.format !== undefined ? { format: a.format as CandleFormat } : {}),
    crossed: a.crossed,
    ...(a.timezone !== undefined ? { timezone: a.timezone } : {}),
    ...(a.side !== undefined ? { side: a.side } : {}),
    notices,
  };
  const label = g.bidAsk
    ? `${g.bidAsk.bid} + ${g.bidAsk.ask}`
    : g.files.length === 1
      ? g.files[0]!
      : `${resolve(a.file!)} (${g.instrument} ${g.granularity}, ${g.files.length} files)`;
  const formats = g.files.map((f) => a.format ?? detectFormat(f));
  // The clock the rows are read in: the one given, else what the format documents.
  let clock: ClockReport | undefined;
  // The gate every price source passes (gate.ts): names and fields, spacing, prices, clock, rows.
  const ask: GateAsk = {
    instrument: g.instrument,
    granularity: g.granularity,
    instruments,
    read: readClock(g.files, o.format, a.timezone),
    fix: 'import',
    onReport: (r) => (clock = r),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
  };
  const { from: _f, to: _t, ...whole } = o;
  const checked = g.bidAsk
    ? gateRows(openBidAsk(g.bidAsk.bid, g.bidAsk.ask, o), label, ask)
    : gateFiles(g.files, label, ask, (f, all) =>
        openCandles(f, all ? { ...whole, notices: newNotices() } : o),
      );
  const sources: SeriesSource[] = [];
  for (let i = 0; i < g.files.length; i++) {
    const f = g.files[i]!;
    const packed = describePacking(f);
    const format = `${formats[i]}${packed !== undefined ? ` in ${packed}` : ''}`;
    sources.push({
      file: f,
      sha256: await sha256(f),
      bytes: statSync(f).size,
      format: g.bidAsk ? `${format} (${i === 0 ? 'bid' : 'ask'} file)` : format,
      rows: 0,
      importedAt: new Date().toISOString(),
    });
  }
  const r = await catalog.write(g.instrument, g.granularity, checked, {
    replace: a.replace,
    stage: true,
    meta: () => {
      const sides = sidesOf(notices);
      if (sides === 'mixed')
        throw new DataError(
          label,
          0,
          '',
          'the files mix bid/ask rows with one-sided (mid or bid) rows: import each kind into its own catalog',
        );
      const rowsEach = g.files.length === 1 || g.bidAsk ? notices.rows : 0;
      return {
        synthetic: false,
        sides: sides ?? 'unknown',
        // The clamped rows of the series are counted once (on its last source: the ask file of a
        // bid/ask pair), not once per file: lists and reports add the sources' counts up.
        sources: sources.map((s, i) => ({
          ...s,
          rows: rowsEach,
          ...(notices.crossed > 0 && i === sources.length - 1 ? { crossedClamped: notices.crossed } : {}),
        })),
      };
    },
  });
  return { g, r, notices, ...(clock !== undefined ? { clock } : {}) };
}
