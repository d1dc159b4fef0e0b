import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import { isGranularity, type Granularity } from '../../domain/granularity.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { CandleRequest } from '../../ports/market-data.ts';
import { DataError } from './errors.ts';
import { openCandles, parseFlexibleTime } from './formats.ts';

/** The header of the catalog's files: the generic bid/ask CSV (see data/README.md). */
export const CATALOG_HEADER = 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume';

/** What the catalog holds for one series. */
export interface CatalogEntry {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly first: UnixMs;
  readonly last: UnixMs;
  readonly rows: number;
  readonly files: number;
}

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
  constructor(readonly root: string) {}

  #dir(instrument: string, granularity: string): string {
    return join(this.root, instrument, granularity);
  }

  #months(instrument: string, granularity: string): string[] {
    const dir = this.#dir(instrument, granularity);
    if (!existsSync(dir)) return [];
    return readdirSync(dir).filter((f) => /^\d{4}-\d{2}\.csv$/.test(f)).sort();
  }

  has(instrument: string, granularity: string): boolean {
    return this.#months(instrument, granularity).length > 0;
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
    return (async function* () {
      for (const f of selected) {
        yield* openCandles(join(dir, f), {
          instrument: req.instrument,
          granularity: req.granularity,
          format: 'generic',
          ...(req.from !== undefined ? { from: req.from } : {}),
          ...(req.to !== undefined ? { to: req.to } : {}),
        });
      }
    })();
  }

  /**
   * Throws a DataError when the series is held but none of its month files overlaps [from, to):
   * a backtest of that period would run on no data at all. The message gives the months held and
   * how to get the period. (`candles` itself yields nothing then, which the sandbox and downloads
   * rely on.)
   */
  requireCoverage(req: CandleRequest): void {
    const files = this.#months(req.instrument, req.granularity);
    if (files.length === 0 || monthsIn(files, req).length > 0) return;
    const day = (t: UnixMs | undefined): string => (t === undefined ? '…' : new Date(t).toISOString().slice(0, 10));
    const held = `${files[0]!.slice(0, 7)} to ${files[files.length - 1]!.slice(0, 7)}`;
    throw new DataError(
      this.#dir(req.instrument, req.granularity),
      0,
      '',
      `no ${req.instrument} ${req.granularity} candles between ${day(req.from)} and ${day(req.to)}: the catalog holds ${held}. Choose --from/--to inside that, or get the period with \`fxflow data download --instrument ${req.instrument} --granularity ${req.granularity} --from ${day(req.from)} --to ${day(req.to)}\``,
    );
  }

  /** Lists the series held, reading only the first and last line of each month file. */
  list(): CatalogEntry[] {
    if (!existsSync(this.root)) return [];
    const out: CatalogEntry[] = [];
    for (const instrument of readdirSync(this.root).filter((d) => /^[A-Z0-9]+_[A-Z0-9]+$/.test(d)).sort()) {
      for (const g of readdirSync(join(this.root, instrument)).filter(isGranularity).sort()) {
        const files = this.#months(instrument, g);
        if (files.length === 0) continue;
        const dir = this.#dir(instrument, g);
        let rows = 0;
        for (const f of files) rows += countRows(join(dir, f));
        out.push({
          instrument,
          granularity: g,
          first: parseFlexibleTime(edgeRow(join(dir, files[0]!), 'first').split(',')[0]!),
          last: parseFlexibleTime(edgeRow(join(dir, files[files.length - 1]!), 'last').split(',')[0]!),
          rows,
          files: files.length,
        });
      }
    }
    return out;
  }

  /**
   * Writes (merges) candles into the monthly files. Rows of a time already present are replaced by
   * the new ones; the result is sorted and has no duplicates. Returns the number of candles written.
   */
  async write(instrument: string, granularity: Granularity, source: AsyncIterable<readonly Candle[]> | Iterable<readonly Candle[]>): Promise<number> {
    const dir = this.#dir(instrument, granularity);
    mkdirSync(dir, { recursive: true });
    let month = '';
    let rows = new Map<number, string>();
    let written = 0;
    const flush = async (): Promise<void> => {
      if (month === '') return;
      const file = join(dir, `${month}.csv`);
      if (existsSync(file)) {
        for await (const batch of openCandles(file, { instrument, granularity, format: 'generic' })) {
          for (const c of batch) if (!rows.has(c.time)) rows.set(c.time, catalogRow(c));
        }
      }
      const times = [...rows.keys()].sort((a, b) => a - b);
      const text = `${CATALOG_HEADER}\n${times.map((t) => rows.get(t)!).join('\n')}\n`;
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    };
    for await (const batch of source as AsyncIterable<readonly Candle[]>) {
      for (const c of batch) {
        const m = monthOf(c.time);
        if (m !== month) {
          await flush();
          month = m;
          rows = new Map();
        }
        rows.set(c.time, catalogRow(c));
        written++;
      }
    }
    await flush();
    return written;
  }
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
    const lines = buf.toString('utf8').split('\n').filter((l) => l.length > 0);
    return (which === 'first' ? lines[1] : lines[lines.length - 1]) ?? '';
  } finally {
    closeSync(fd);
  }
}
