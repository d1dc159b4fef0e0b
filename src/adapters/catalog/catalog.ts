import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  openSync,
  readSync,
  closeSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import { isGranularity, type Granularity } from '../../domain/granularity.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { CandleRequest } from '../../ports/market-data.ts';
import { CoverageTracker, formatHole, type Hole } from './coverage.ts';
import { DataError } from './errors.ts';
import { cachedCandles } from './candle-cache.ts';
import { openCandles, parseFlexibleTime, type Sides } from './formats.ts';

/** The header of the catalog's files: the generic bid/ask CSV (see data/README.md). */
export const CATALOG_HEADER = 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume';

/** One file a series was imported from. */
export interface SeriesSource {
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly format: string;
  readonly rows: number;
  /** Rows whose bid was above the ask, clamped at the user's request (--crossed clamp). */
  readonly crossedClamped?: number;
  readonly importedAt: string;
}

/**
 * Where a series came from, kept beside its month files as `series.json`: its sources (files and
 * hashes, format), the price sides held, whether it is synthetic, how it was derived (resampled),
 * and its holes beyond the market's own closures (recomputed after every write).
 */
export interface SeriesMeta {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly synthetic: boolean;
  /** The price sides the data held: bid/ask (real spreads), mid or bid only (bid = ask in the files). */
  readonly sides: Sides | 'unknown';
  readonly sources: readonly SeriesSource[];
  readonly derivedFrom?: {
    readonly granularity: Granularity;
    readonly dailyAlignment: number;
    readonly alignmentTimezone: string;
    readonly weeklyAlignment: string;
  };
  readonly holes?: readonly Hole[];
  readonly holeCount?: number;
}

/** What the catalog holds for one series. */
export interface CatalogEntry {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly first: UnixMs;
  readonly last: UnixMs;
  readonly rows: number;
  readonly files: number;
  readonly meta?: SeriesMeta;
  /** Set when a month file cannot be read: which, and why. `first`/`last` are NaN then if unknown. */
  readonly damaged?: string;
}

/** A candle the catalog holds that an import would change. */
export interface Conflict {
  readonly time: UnixMs;
  readonly held: string;
  readonly incoming: string;
}

/** What a write did. */
export interface WriteResult {
  readonly written: number;
  readonly conflicts: readonly Conflict[];
  readonly conflictCount: number;
  /** With `stage`: puts the staged files in place and records the provenance (without: already done). */
  readonly commit: () => Promise<void>;
  /** With `stage`: removes the staged files (without: does nothing). */
  readonly abort: () => void;
}

export interface WriteOptions {
  /** Replace held candles that differ (default: a conflict is an error and nothing is written). */
  readonly replace?: boolean;
  /**
   * Provenance of what is written; merged into series.json. A function is called once the source
   * has been read (before anything is renamed into place), when what was read decides it (the sides).
   */
  readonly meta?: NewMeta | (() => NewMeta);
  /**
   * Stage only: read and check everything, write the month files beside the held ones, and return
   * without renaming them into place; the caller calls `commit` (or `abort`) on the result. Lets an
   * import of several series write all of them or none.
   */
  readonly stage?: boolean;
}

type NewMeta = Omit<SeriesMeta, 'instrument' | 'granularity' | 'holes' | 'holeCount'>;

const META = 'series.json';
const SAMPLE_MARKER = '.synthetic-sample.json';
/** How many holes series.json keeps (the count is kept whole). */
const KEEP_HOLES = 200;

const iso = (t: UnixMs): string => `${new Date(t).toISOString().slice(0, 19)}Z`;
const monthOf = (t: UnixMs): string => new Date(t).toISOString().slice(0, 7);

/** The month files (`YYYY-MM.csv`, sorted) that overlap [from, to). */
function monthsIn(files: readonly string[], req: { readonly from?: UnixMs; readonly to?: UnixMs }): string[] {
  const fromMonth = req.from !== undefined ? monthOf(req.from) : '';
  const toMonth = req.to !== undefined ? monthOf(req.to - 1) : '9999-99';
  return files.filter((f) => {
    const m = f.slice(0, 7);
    return m >= fromMonth && m <= toMonth;
  });
}

/** One catalog CSV row. */
export function catalogRow(c: Candle): string {
  return `${iso(c.time)},${c.bo},${c.bh},${c.bl},${c.bc},${c.ao},${c.ah},${c.al},${c.ac},${c.volume}`;
}

/**
 * The local catalog of historical candles: `<root>/<INSTRUMENT>/<GRANULARITY>/<YYYY>-<MM>.csv`, one
 * file per month in the generic bid/ask CSV format, keyed by the candle's open time (UTC).
 * Reads stream month by month; writes merge into the monthly files without duplicates (write to a
 * temporary file, then rename), so an interrupted or repeated import is safe to run again.
 */
export class Catalog {
  /** `cache`: the folder of the decoded-candle cache (candle-cache.ts) that `candles` reads through; none by default. */
  constructor(
    readonly root: string,
    readonly opts: { readonly cache?: string | undefined } = {},
  ) {}

  #dir(instrument: string, granularity: string): string {
    return join(this.root, instrument, granularity);
  }

  #months(instrument: string, granularity: string): string[] {
    const dir = this.#dir(instrument, granularity);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => /^\d{4}-\d{2}\.csv$/.test(f))
      .sort();
  }

  has(instrument: string, granularity: string): boolean {
    return this.#months(instrument, granularity).length > 0;
  }

  /**
   * The provenance of a series: its series.json, or for a series of the bundled sample written
   * before series.json existed, what the sample's marker says. Undefined when nothing is known.
   */
  meta(instrument: string, granularity: string): SeriesMeta | undefined {
    const file = join(this.#dir(instrument, granularity), META);
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as SeriesMeta;
      } catch (e) {
        throw new DataError(
          file,
          0,
          '',
          `cannot read the series' provenance (${(e as Error).message}): restore it, or delete it and import the series again`,
        );
      }
    }
    const marker = join(this.root, SAMPLE_MARKER);
    if (existsSync(marker) && this.has(instrument, granularity)) {
      try {
        const m = JSON.parse(readFileSync(marker, 'utf8')) as {
          instruments?: string[];
          granularities?: string[];
          seed?: number;
        };
        if (m.instruments?.includes(instrument) && m.granularities?.includes(granularity)) {
          return {
            instrument,
            granularity: granularity as Granularity,
            synthetic: true,
            sides: 'bid/ask',
            sources: [
              {
                file: `fxflow synthetic sample (seed ${m.seed})`,
                sha256: '',
                bytes: 0,
                format: 'synthetic',
                rows: 0,
                importedAt: '',
              },
            ],
          };
        }
      } catch {
        // A broken marker says nothing.
      }
    }
    return undefined;
  }

  #writeMeta(instrument: string, granularity: Granularity, meta: SeriesMeta): void {
    const file = join(this.#dir(instrument, granularity), META);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(meta, null, 2)}\n`);
    renameSync(tmp, file);
  }

  /** Reads a whole series and lists its holes (beyond weekends and the two holidays), in [from, to) when given. */
  async holes(
    instrument: string,
    granularity: Granularity,
    period: { from?: UnixMs; to?: UnixMs } = {},
  ): Promise<{ holes: Hole[]; first: number; last: number; rows: number }> {
    let tracker: CoverageTracker | undefined;
    let rows = 0;
    for await (const batch of this.candles({ instrument, granularity, ...period } as CandleRequest)) {
      for (const c of batch) {
        tracker ??= new CoverageTracker(granularity, period.from ?? c.time);
        tracker.feed(c);
        rows++;
      }
    }
    if (!tracker) return { holes: [], first: Number.NaN, last: Number.NaN, rows: 0 };
    if (period.to !== undefined) tracker.end(period.to);
    return { holes: tracker.holes, first: tracker.first, last: tracker.last, rows };
  }

  /** Streams the candles of a series in [from, to), month file by month file. */
  candles(req: CandleRequest): AsyncIterable<readonly Candle[]> {
    const files = this.#months(req.instrument, req.granularity);
    if (files.length === 0) {
      throw new DataError(
        this.#dir(req.instrument, req.granularity),
        0,
        '',
        `no ${req.instrument} ${req.granularity} data in the catalog ${this.root}. Import a file with \`fxflow data import <file> --instrument ${req.instrument} --granularity ${req.granularity}\`, or run a backtest on the bundled sample (EUR_USD, GBP_USD, USD_JPY × M1, H1, 2024)`,
      );
    }
    const selected = monthsIn(files, req);
    const dir = this.#dir(req.instrument, req.granularity);
    const cache = this.opts.cache;
    return (async function* () {
      for (const f of selected) {
        yield* cachedCandles(
          join(dir, f),
          {
            instrument: req.instrument,
            granularity: req.granularity,
            format: 'generic',
            ...(req.from !== undefined ? { from: req.from } : {}),
            ...(req.to !== undefined ? { to: req.to } : {}),
          },
          cache,
        );
      }
    })();
  }

  /**
   * Throws a DataError when the series is held but none of its month files overlaps [from, to):
   * a backtest of that period would run on no data at all. The message gives the months held and
   * how to get the period. (`candles` itself yields nothing then, which the sandbox and downloads
   * rely on.)
   */
  requireCoverage(req: CandleRequest, asked?: Granularity): void {
    const files = this.#months(req.instrument, req.granularity);
    if (files.length === 0 || monthsIn(files, req).length > 0) return;
    const day = (t: UnixMs | undefined): string =>
      t === undefined ? '…' : new Date(t).toISOString().slice(0, 10);
    const held = `${files[0]!.slice(0, 7)} to ${files[files.length - 1]!.slice(0, 7)}`;
    // A series built from a finer one (`asked`, e.g. H1 from M1): the message is about the series asked for.
    const g = asked ?? req.granularity;
    const what =
      asked !== undefined && asked !== req.granularity
        ? `the catalog holds no ${req.instrument} ${asked}, and the ${req.instrument} ${req.granularity} it would build ${asked} from covers ${held}`
        : `the catalog holds ${held}`;
    throw new DataError(
      this.#dir(req.instrument, req.granularity),
      0,
      '',
      `no ${req.instrument} ${g} candles between ${day(req.from)} and ${day(req.to)}: ${what}. Choose --from/--to inside that, or get the period with \`fxflow data download --instrument ${req.instrument} --granularity ${g} --from ${day(req.from)} --to ${day(req.to)}\``,
    );
  }

  /** Lists the series held, reading only the first and last line of each month file. */
  list(): CatalogEntry[] {
    if (!existsSync(this.root)) return [];
    const out: CatalogEntry[] = [];
    for (const instrument of readdirSync(this.root)
      .filter((d) => /^[A-Z0-9]+_[A-Z0-9]+$/.test(d))
      .sort()) {
      for (const g of readdirSync(join(this.root, instrument)).filter(isGranularity).sort()) {
        const files = this.#months(instrument, g);
        if (files.length === 0) continue;
        const dir = this.#dir(instrument, g);
        let rows = 0;
        for (const f of files) rows += countRows(join(dir, f));
        const firstFile = join(dir, files[0]!);
        const lastFile = join(dir, files[files.length - 1]!);
        const firstRow = edgeRow(firstFile, 'first');
        const lastRow = edgeRow(lastFile, 'last');
        const first = parseFlexibleTime(firstRow.split(',')[0]!);
        const last = parseFlexibleTime(lastRow.split(',')[0]!);
        let damaged: string | undefined;
        if (Number.isNaN(first))
          damaged = `${firstFile}: its first row "${firstRow.slice(0, 40)}" has no readable time`;
        else if (Number.isNaN(last))
          damaged = `${lastFile}: its last row "${lastRow.slice(0, 40)}" has no readable time`;
        let meta: SeriesMeta | undefined;
        try {
          meta = this.meta(instrument, g);
        } catch (e) {
          damaged = (e as Error).message;
        }
        out.push({
          instrument,
          granularity: g,
          first,
          last,
          rows,
          files: files.length,
          ...(meta ? { meta } : {}),
          ...(damaged ? { damaged } : {}),
        });
      }
    }
    return out;
  }

  /**
   * Writes (merges) candles into the monthly files. A candle of a time already held is kept when it
   * is identical; when it differs it is a conflict: without `replace` the write lists the first
   * ones in a DataError and writes nothing (every month is staged in a temporary file and renamed
   * into place only when the whole source has been read without error). A series' provenance is
   * checked first: synthetic and real candles, or two kinds of price sides, are never mixed.
   */
  async write(
    instrument: string,
    granularity: Granularity,
    source: AsyncIterable<readonly Candle[]> | Iterable<readonly Candle[]>,
    opts: WriteOptions = {},
  ): Promise<WriteResult> {
    const dir = this.#dir(instrument, granularity);
    const existed = this.has(instrument, granularity);
    const held = existed ? this.meta(instrument, granularity) : undefined;
    let meta: NewMeta | undefined;
    mkdirSync(dir, { recursive: true });
    let month = '';
    let rows = new Map<number, string>();
    let written = 0;
    let conflictCount = 0;
    const conflicts: Conflict[] = [];
    const staged: { tmp: string; file: string }[] = [];
    const flush = async (): Promise<void> => {
      if (month === '') return;
      const file = join(dir, `${month}.csv`);
      if (existsSync(file)) {
        for await (const batch of openCandles(file, { instrument, granularity, format: 'generic' })) {
          for (const c of batch) {
            const mine = rows.get(c.time);
            if (mine === undefined) rows.set(c.time, catalogRow(c));
            else if (!opts.replace) {
              const theirs = catalogRow(c);
              if (theirs !== mine) {
                conflictCount++;
                if (conflicts.length < 10) conflicts.push({ time: c.time, held: theirs, incoming: mine });
                rows.set(c.time, theirs);
              }
            }
          }
        }
      }
      const times = [...rows.keys()].sort((a, b) => a - b);
      const text = `${CATALOG_HEADER}\n${times.map((t) => rows.get(t)!).join('\n')}\n`;
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text);
      staged.push({ tmp, file });
    };
    try {
      for await (const batch of source as AsyncIterable<readonly Candle[]>) {
        for (const c of batch) {
          const m = monthOf(c.time);
          if (m !== month) {
            if (m < month)
              throw new DataError(
                dir,
                0,
                '',
                `the candles to write go back from ${month} to ${m}: a source must be in time order`,
              );
            await flush();
            month = m;
            rows = new Map();
          }
          rows.set(c.time, catalogRow(c));
          written++;
        }
      }
      await flush();
      meta = typeof opts.meta === 'function' ? opts.meta() : opts.meta;
      if (meta && existed) this.#checkMix(instrument, granularity, held, meta);
      if (conflictCount > 0) {
        const list = conflicts
          .slice(0, 5)
          .map((c) => `  ${iso(c.time)}\n    held:     ${c.held}\n    incoming: ${c.incoming}`)
          .join('\n');
        throw new DataError(
          dir,
          0,
          '',
          `${conflictCount} candle${conflictCount === 1 ? '' : 's'} of the import differ${conflictCount === 1 ? 's' : ''} from what the catalog holds; nothing was written. The first:\n${list}\nCheck that the file is the same instrument and source; pass --replace to overwrite the held candles with the file's`,
        );
      }
    } catch (e) {
      for (const s of staged) rmSync(s.tmp, { force: true });
      if (!existed) rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    let done = false;
    const commit = async (): Promise<void> => {
      if (done) return;
      done = true;
      for (const s of staged) renameSync(s.tmp, s.file);
      if (meta) await this.#record(instrument, granularity, held, meta);
    };
    const abort = (): void => {
      if (done) return;
      done = true;
      for (const s of staged) rmSync(s.tmp, { force: true });
      if (!existed) rmSync(dir, { recursive: true, force: true });
    };
    if (!opts.stage) await commit();
    return { written, conflicts, conflictCount, commit, abort };
  }

  /**
   * Adds sources to a series' provenance and recomputes its holes (a download records itself once
   * at its end rather than per page). Refuses what `write` refuses (mixing synthetic and real, or sides).
   */
  async record(instrument: string, granularity: Granularity, meta: NewMeta): Promise<void> {
    const held = this.meta(instrument, granularity);
    if (held) this.#checkMix(instrument, granularity, held, meta);
    await this.#record(instrument, granularity, held, meta);
  }

  async #record(
    instrument: string,
    granularity: Granularity,
    held: SeriesMeta | undefined,
    meta: NewMeta,
  ): Promise<void> {
    const cover = await this.holes(instrument, granularity);
    this.#writeMeta(instrument, granularity, {
      instrument,
      granularity,
      synthetic: meta.synthetic,
      sides: meta.sides,
      sources: [
        ...(held?.sources ?? []).filter(
          (s) => !meta.sources.some((n) => n.sha256 !== '' && n.sha256 === s.sha256),
        ),
        ...meta.sources,
      ],
      ...(meta.derivedFrom
        ? { derivedFrom: meta.derivedFrom }
        : held?.derivedFrom
          ? { derivedFrom: held.derivedFrom }
          : {}),
      holes: cover.holes.slice(0, KEEP_HOLES),
      holeCount: cover.holes.length,
    });
  }

  /** Refuses to mix synthetic and real candles, or price sides, in one series. */
  #checkMix(instrument: string, granularity: string, held: SeriesMeta | undefined, incoming: NewMeta): void {
    const where = this.#dir(instrument, granularity);
    if (held === undefined) {
      throw new DataError(
        where,
        0,
        '',
        `the catalog holds ${instrument} ${granularity} candles of unknown origin (no series.json): import into another --catalog, or delete that folder and import again`,
      );
    }
    if (held.synthetic !== incoming.synthetic) {
      throw new DataError(
        where,
        0,
        '',
        `the series holds ${held.synthetic ? 'SYNTHETIC' : 'real'} candles and this import is ${incoming.synthetic ? 'synthetic' : 'real'}: the two are never mixed in one series (a backtest would run across both). Import into another catalog with --catalog <folder>${held.synthetic ? ', or delete the synthetic series first' : ''}`,
      );
    }
    if (held.sides !== incoming.sides && held.sides !== 'unknown') {
      throw new DataError(
        where,
        0,
        '',
        `the series holds ${held.sides} prices and this import has ${incoming.sides}: one series holds one kind of prices (a backtest's spread model depends on it). Import into another catalog with --catalog <folder>`,
      );
    }
  }

  /**
   * Reads every month file of a series and reports what is wrong: files that cannot be read (the
   * first error of each), and the holes beyond the market's own closures.
   */
  async check(
    instrument: string,
    granularity: Granularity,
    observe?: (c: Candle) => void,
  ): Promise<{ damaged: string[]; holes: Hole[]; rows: number; meta?: SeriesMeta; oneSidedRows: number }> {
    const dir = this.#dir(instrument, granularity);
    const damaged: string[] = [];
    let meta: SeriesMeta | undefined;
    try {
      meta = this.meta(instrument, granularity);
    } catch (e) {
      damaged.push((e as Error).message);
    }
    let tracker: CoverageTracker | undefined;
    let rows = 0;
    let oneSidedRows = 0;
    for (const f of this.#months(instrument, granularity)) {
      try {
        for await (const batch of openCandles(join(dir, f), { instrument, granularity, format: 'generic' })) {
          for (const c of batch) {
            tracker ??= new CoverageTracker(granularity, c.time);
            tracker.feed(c);
            rows++;
            if (c.bc === c.ac && c.bo === c.ao) oneSidedRows++;
            observe?.(c);
          }
        }
      } catch (e) {
        damaged.push((e as Error).message);
      }
    }
    return { damaged, holes: tracker?.holes ?? [], rows, oneSidedRows, ...(meta ? { meta } : {}) };
  }
}

/** The holes of a series as lines of text. */
export function describeHoles(holes: readonly Hole[]): string[] {
  return holes.map(formatHole);
}

function countRows(file: string): number {
  // Count newlines in chunks; the header is not a row.
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  let n = 0;
  let lastByte = 10;
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      for (let i = 0; i < got; i++) if (buf[i] === 10) n++;
      lastByte = buf[got - 1]!;
    }
  } finally {
    closeSync(fd);
  }
  if (lastByte !== 10) n++;
  return Math.max(0, n - 1);
}

function edgeRow(file: string, which: 'first' | 'last'): string {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    const len = Math.min(size, 4096);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, which === 'first' ? 0 : size - len);
    const lines = buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    return (which === 'first' ? lines[1] : lines[lines.length - 1]) ?? '';
  } finally {
    closeSync(fd);
  }
}
