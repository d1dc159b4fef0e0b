import type { Candle } from '../../domain/candle.ts';
import { Builder, namedSide, type ReadNotices, type ReadOptions } from './candle-builder.ts';
import { DataError } from './errors.ts';
import { readLines } from './lines.ts';

/**
 * The files people export from other platforms, read by one delimited-text reader:
 * - Dukascopy CSV: `Gmt time,Open,High,Low,Close,Volume`, times `dd.mm.yyyy HH:MM:SS.mmm`;
 * - MetaTrader 4/5 history exports: `yyyy.mm.dd,HH:MM,open,high,low,close,volume` without a
 *   header (MT4), or tab-separated under `<DATE> <TIME> <OPEN> …` (MT5), seconds optional;
 * - the generic CSV separated by semicolons (`time;o;h;l;c` or the bid/ask columns).
 * Each may be separated by commas, semicolons or tabs, with decimal commas (`1,10512`) where the
 * separator is not a comma. Their times carry no offset: a wall clock (UTC unless --timezone),
 * and their one price is of the side --side names (they do not say).
 */

export type Layout = 'dukascopy' | 'metatrader' | 'generic';

/** The separator of a line: tab, semicolon or comma. */
export function separatorOf(line: string): string {
  return line.includes('\t') ? '\t' : line.includes(';') ? ';' : ',';
}

/** Whether y-m-d h:mi:s names a real instant (no 30 February, no hour 24). */
function real(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (!(mo >= 1 && mo <= 12 && d >= 1 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59))
    return false;
  return new Date(Date.UTC(y, mo - 1, d)).getUTCDate() === d;
}

const DUKASCOPY_TIME = /^(\d{2})\.(\d{2})\.(\d{4}) (\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;
const MT_DATE = /^(\d{4})\.(\d{2})\.(\d{2})$/;
const MT_TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** `dd.mm.yyyy HH:MM[:SS[.mmm]]` as wall-clock ms (read as UTC), or NaN. */
export function dukascopyTime(s: string): number {
  const m = DUKASCOPY_TIME.exec(s.trim());
  if (!m) return Number.NaN;
  const [d, mo, y, h, mi, se] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)];
  if (!real(y, mo, d, h, mi, se)) return Number.NaN;
  return Date.UTC(y, mo - 1, d, h, mi, se, +(m[7] ?? '0').padEnd(3, '0'));
}

/** MetaTrader's `yyyy.mm.dd` and `HH:MM[:SS]` as wall-clock ms (read as UTC), or NaN. */
export function metaTraderTime(date: string, time: string): number {
  const a = MT_DATE.exec(date.trim());
  const b = MT_TIME.exec(time.trim());
  if (!a || !b) return Number.NaN;
  const [y, mo, d, h, mi, se] = [+a[1]!, +a[2]!, +a[3]!, +b[1]!, +b[2]!, +(b[3] ?? 0)];
  if (!real(y, mo, d, h, mi, se)) return Number.NaN;
  return Date.UTC(y, mo - 1, d, h, mi, se);
}

/** A field as a number: decimal commas read as points; empty is NaN. */
function num(s: string | undefined): number {
  if (s === undefined) return Number.NaN;
  const t = s.trim();
  if (t === '') return Number.NaN;
  return t.includes(',') ? +t.replace(',', '.') : +t;
}

/** Whether a first line is a header row (its first field is not a date: `Gmt time`, `<DATE>`, `Date`). */
function isHeader(first: string): boolean {
  return !/^\d/.test(first.trim());
}

const GENERIC_TWO = 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c';

/** A Dukascopy, MetaTrader or semicolon-separated generic file (see above). */
export async function* readDelimited(
  file: string,
  layout: Layout,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  const b = new Builder(file, o, notices, 'utc');
  let sep: string | undefined;
  let twoSided = false;
  let side: 'M' | 'B' | 'A' | undefined;
  let started = false;
  const expected =
    layout === 'dukascopy'
      ? '"dd.mm.yyyy HH:MM:SS.mmm,open,high,low,close,volume" (Dukascopy)'
      : layout === 'metatrader'
        ? '"yyyy.mm.dd,HH:MM,open,high,low,close,volume" (MetaTrader)'
        : '"time;o;h;l;c;volume" or the bid/ask columns';
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      const line = first + i;
      sep ??= separatorOf(row);
      const f = row.split(sep);
      if (!started) {
        started = true;
        if (layout === 'generic') {
          const cols = f.map((x) => x.trim().toLowerCase()).join(',');
          twoSided = cols === GENERIC_TWO || cols === `${GENERIC_TWO},volume`;
          if (!twoSided && !/^(time|timestamp),(o|open),(h|high),(l|low),(c|close)(,volume)?$/.test(cols)) {
            throw new DataError(
              file,
              line,
              'header',
              `unknown header "${row.slice(0, 80)}": use time;bid_o;bid_h;bid_l;bid_c;ask_o;ask_h;ask_l;ask_c;volume or time;o;h;l;c;volume`,
            );
          }
          if (!twoSided) side = namedSide(file, o);
          continue;
        }
        side = namedSide(file, o);
        if (isHeader(f[0]!)) continue;
      }
      let t: number;
      let k: number; // the first price column
      if (layout === 'metatrader') {
        // MT4 writes date and time as two fields; some exports join them with a space.
        if (f[0]!.includes(' ')) {
          const [d, tm] = f[0]!.trim().split(/\s+/);
          t = metaTraderTime(d ?? '', tm ?? '');
          k = 1;
        } else {
          t = metaTraderTime(f[0]!, f[1] ?? '');
          k = 2;
        }
      } else if (layout === 'dukascopy') {
        t = dukascopyTime(f[0]!);
        k = 1;
      } else {
        // Times with an offset are instants; others a wall clock (--timezone).
        const ts = f[0]!.trim();
        if (b.clockName === 'UTC' && /(Z|[+-]\d\d:?\d\d)$/i.test(ts)) {
          b.setClock('explicit');
          t = Date.parse(ts);
        } else t = parseNaive(ts);
        k = 1;
      }
      if (Number.isNaN(t))
        throw new DataError(
          file,
          line,
          'time',
          `cannot read the time in "${row.slice(0, 60)}": expected ${expected}`,
        );
      if (f.length < k + 4)
        throw new DataError(
          file,
          line,
          'row',
          `expected ${expected}, found ${f.length} fields in "${row.slice(0, 60)}"`,
        );
      if (twoSided)
        b.two(
          t,
          num(f[1]),
          num(f[2]),
          num(f[3]),
          num(f[4]),
          num(f[5]),
          num(f[6]),
          num(f[7]),
          num(f[8]),
          f[9] ? num(f[9]) : 0,
          line,
          row,
        );
      else
        b.one(
          side!,
          t,
          num(f[k]),
          num(f[k + 1]),
          num(f[k + 2]),
          num(f[k + 3]),
          f[k + 4] ? num(f[k + 4]) : 0,
          line,
          row,
        );
    }
    const out = b.take();
    if (out) yield out;
  }
}

/** A generic time without an offset (`2024-03-08 21:00:00`, `2024-03-08T21:00:00`) as wall-clock ms, or NaN. */
function parseNaive(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (!m) return Number.NaN;
  const [y, mo, d, h, mi, se] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)];
  return real(y, mo, d, h, mi, se) ? Date.UTC(y, mo - 1, d, h, mi, se) : Number.NaN;
}
