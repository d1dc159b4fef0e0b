import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import type { Tick } from '../../domain/tick.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import { headText, openBytes, packingOf } from './compressed.ts';
import { DataError } from './errors.ts';
import {
  BATCH,
  Builder,
  crossedFields,
  namedSide,
  newNotices,
  statedSide,
  type CandleFormat,
  type ReadNotices,
  type ReadOptions,
} from './candle-builder.ts';
import { readDelimited } from './export-formats.ts';
import { lineTooLong, maxLineBytes, readLines } from './lines.ts';
import { dayInRange, isTickDayFile, readTickDayFile } from './tick-store.ts';

/**
 * Readers for the candle and tick files fxflow imports. Each returns an AsyncIterable of batches in
 * time order, streamed (a chunk at a time), and checks every row: numbers where numbers belong,
 * low <= open, close <= high on each side, time strictly increasing. Exact duplicate rows of an
 * already-seen time are dropped and counted (HistData repeats an hour in 2019); anything else out
 * of order is an error naming the file and line.
 */
export type TickFormat = 'generic-ticks' | 'lean-ticks' | 'histdata-ticks';
export {
  NAME_THE_SIDE,
  newNotices,
  type CandleFormat,
  sidesOf,
  type PriceSide,
  type ReadNotices,
  type ReadOptions,
  type Sides,
  type SpreadModel,
} from './candle-builder.ts';

/** The number written by the `len` characters of `s` from `at`, read as digits (unchecked, as before: the caller has checked the separators). */
function digitsAt(s: string, at: number, len: number): number {
  let v = 0;
  for (let k = at; k < at + len; k++) v = v * 10 + (s.charCodeAt(k) - 48);
  return v;
}

/**
 * Whether `YYYY-MM-DD?HH:MM:SS` at the start of `s` names a real instant: month 1-12, a day the
 * month has, hour 0-23, minutes and seconds 0-59. `Date.UTC` would roll 2024-03-08T27:00 over
 * into the next day without a word.
 */
function realDateTime(s: string): boolean {
  const y = digitsAt(s, 0, 4);
  const mo = digitsAt(s, 5, 2);
  const d = digitsAt(s, 8, 2);
  const h = digitsAt(s, 11, 2);
  const mi = digitsAt(s, 14, 2);
  const se = digitsAt(s, 17, 2);
  if (!(mo >= 1 && mo <= 12 && d >= 1 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59))
    return false;
  return new Date(Date.UTC(y, mo - 1, d)).getUTCDate() === d;
}

/**
 * Parses `YYYY-MM-DDTHH:MM:SS[.fff…]Z` quickly (the catalog's own form), RFC 3339 with an offset,
 * pandas' `YYYY-MM-DD HH:MM:SS[+00:00]` (a space for the T; no offset is UTC, as is a T time
 * without one: the reader's clock, --timezone, turns such wall-clock times into UTC), and epoch seconds or
 * milliseconds. Returns NaN for anything else, and for an impossible date or time of day.
 */
export function parseFlexibleTime(s: string): UnixMs {
  if (
    s.length >= 19 &&
    s.charCodeAt(4) === 45 &&
    s.charCodeAt(7) === 45 &&
    s.charCodeAt(13) === 58 &&
    s.charCodeAt(16) === 58
  ) {
    const sep = s.charCodeAt(10);
    if (sep !== 84 && sep !== 32) return Number.NaN;
    if (!realDateTime(s)) return Number.NaN;
    if (s.length === 20 && s.charCodeAt(19) === 90) {
      return Date.UTC(
        digitsAt(s, 0, 4),
        digitsAt(s, 5, 2) - 1,
        digitsAt(s, 8, 2),
        digitsAt(s, 11, 2),
        digitsAt(s, 14, 2),
        digitsAt(s, 17, 2),
      );
    }
    if (sep === 32)
      return parseTime(
        s.length === 19 ? `${s.slice(0, 10)}T${s.slice(11)}Z` : `${s.slice(0, 10)}T${s.slice(11)}`,
      );
    // A wall clock without an offset (`2024-03-08T21:00:00[.500]`): read as UTC, then in --timezone.
    if (/^.{19}(\.\d+)?$/.test(s)) return parseTime(`${s}Z`);
    return parseTime(s);
  }
  if (/^\d+(\.\d+)?$/.test(s)) {
    const x = Number(s);
    return x < 1e11 ? Math.round(x * 1000) : x; // seconds or milliseconds
  }
  return parseTime(s);
}

const num = (s: string | undefined): number => (s === undefined || s === '' ? Number.NaN : +s);

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * Reads a catalog row `YYYY-MM-DDTHH:MM:SSZ,bo,bh,bl,bc,ao,ah,al,ac[,volume]` (or a one-sided
 * `YYYY-MM-DDTHH:MM:SSZ,o,h,l,c[,volume]`) by scanning its
 * characters: no split, no substring, no Number() per field. A decimal of at most 15 significant
 * digits is its digits as an integer divided by a power of ten: both are exact doubles, so the
 * quotient is the correctly rounded value, the same double as `Number(text)`. `row` returns false
 * for anything else, and the caller reads that row the general way.
 */
export class CatalogRowScanner {
  /** bo, bh, bl, bc, ao, ah, al, ac, volume of the last row scanned. */
  readonly values = new Float64Array(9);
  time = 0;
  #day = '\0'; // matches no row: the first row computes its day
  #dayMs = 0;
  #s = '';
  #p = 0;

  /** `prices`: 8 for a bid/ask row, 4 for a one-sided `time,o,h,l,c[,volume]` row (its values in values[0..3]). */
  row(s: string, prices = 8): boolean {
    if (
      s.length < 21 ||
      s.charCodeAt(4) !== 45 ||
      s.charCodeAt(7) !== 45 ||
      s.charCodeAt(10) !== 84 ||
      s.charCodeAt(13) !== 58 ||
      s.charCodeAt(16) !== 58 ||
      s.charCodeAt(19) !== 90 ||
      s.charCodeAt(20) !== 44
    )
      return false;
    const h = this.#digits(s, 11, 2);
    const mi = this.#digits(s, 14, 2);
    const se = this.#digits(s, 17, 2);
    if (h < 0 || mi < 0 || se < 0 || h > 23 || mi > 59 || se > 59) return false;
    // Rows of one day share their date: its midnight is computed once.
    if (!s.startsWith(this.#day)) {
      const y = this.#digits(s, 0, 4);
      const mo = this.#digits(s, 5, 2);
      const d = this.#digits(s, 8, 2);
      if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31) return false;
      const ms = Date.UTC(y, mo - 1, d);
      if (new Date(ms).getUTCDate() !== d) return false; // 2024-02-30 and the like
      this.#day = s.slice(0, 11);
      this.#dayMs = ms;
    }
    this.time = this.#dayMs + h * 3_600_000 + mi * 60_000 + se * 1000;
    this.#s = s;
    this.#p = 21;
    const v = this.values;
    for (let i = 0; i < prices; i++) {
      const x = this.#number(i < prices - 1);
      if (Number.isNaN(x)) return false;
      v[i] = x;
    }
    if (this.#p === s.length) {
      v[8] = 0;
      return true;
    }
    if (s.charCodeAt(this.#p) !== 44) return false;
    this.#p++;
    const vol = this.#number(false);
    if (Number.isNaN(vol) || this.#p !== s.length) return false;
    v[8] = vol;
    return true;
  }

  #digits(s: string, at: number, n: number): number {
    let v = 0;
    for (let k = at; k < at + n; k++) {
      const c = s.charCodeAt(k) - 48;
      if (c < 0 || c > 9) return -1;
      v = v * 10 + c;
    }
    return v;
  }

  /** A plain decimal `[-]digits[.digits]` at the cursor; with `comma`, the comma after it is required and passed. */
  #number(comma: boolean): number {
    const s = this.#s;
    const n = s.length;
    let p = this.#p;
    let neg = false;
    if (p < n && s.charCodeAt(p) === 45) {
      neg = true;
      p++;
    }
    let m = 0;
    let digits = 0;
    let frac = -1;
    for (; p < n; p++) {
      const c = s.charCodeAt(p);
      if (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48);
        digits++;
        if (frac >= 0) frac++;
      } else if (c === 46 && frac < 0) frac = 0;
      else break;
    }
    if (digits === 0 || digits > 15 || frac === 0) return Number.NaN;
    if (comma) {
      if (p >= n || s.charCodeAt(p) !== 44) return Number.NaN;
      p++;
    }
    this.#p = p;
    const x = frac > 0 ? m / POW10[frac]! : m;
    return neg ? -x : x;
  }
}

/** Generic CSV: header `time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c[,volume]` or `time,o,h,l,c[,volume]`. */
async function* readGeneric(
  file: string,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  let side: 'M' | 'B' | 'A' = 'M';
  const b = new Builder(file, o, notices);
  const scan = new CatalogRowScanner();
  let twoSided: boolean | undefined;
  let clockSet = false;
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      const line = first + i;
      if (row.length === 0) continue;
      if (twoSided === undefined) {
        const cols = row.split(',').map((x) => x.trim());
        if (
          cols.join(',') === 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume' ||
          cols.join(',') === 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c'
        )
          twoSided = true;
        else if (
          /^(time|timestamp),(o|open),(h|high),(l|low),(c|close)(,volume)?$/.test(
            cols.join(',').toLowerCase(),
          )
        ) {
          twoSided = false;
          side = namedSide(file, o);
        } else
          throw new DataError(
            file,
            line,
            'header',
            `unknown header "${row.slice(0, 80)}": use time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume or time,o,h,l,c,volume (see data/README.md)`,
          );
        continue;
      }
      if (!clockSet) {
        // Times with an offset (Z, +00:00) or epoch numbers are instants; others are a wall clock.
        clockSet = true;
        b.setClock(
          /(Z|[+-]\d\d:?\d\d)$/i.test(row.split(',')[0]!.trim()) ||
            /^\d+(\.\d+)?$/.test(row.split(',')[0]!.trim())
            ? 'explicit'
            : 'utc',
        );
      }
      if (scan.row(row, twoSided ? 8 : 4)) {
        const v = scan.values;
        if (twoSided)
          b.two(scan.time, v[0]!, v[1]!, v[2]!, v[3]!, v[4]!, v[5]!, v[6]!, v[7]!, v[8]!, line, row);
        else b.one(side, scan.time, v[0]!, v[1]!, v[2]!, v[3]!, v[8]!, line, row);
        continue;
      }
      // Anything the scanner does not take (spaces, exponents, long digits, other time forms, a
      // bad field) goes the general way, which reads it or names what is wrong.
      const f = row.split(',');
      const t = parseFlexibleTime(f[0]!);
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
          f[9] ? +f[9] : 0,
          line,
          row,
        );
      else b.one(side, t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), f[5] ? +f[5] : 0, line, row);
    }
    const out = b.take();
    if (out) yield out;
  }
}

/** Lean bid/ask bars: hour/daily `YYYYMMDD HH:mm`, minute files ms since midnight of the date in the file name. */
async function* readLean(
  file: string,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  const b = new Builder(file, o, notices);
  const m = /(\d{4})(\d{2})(\d{2})_/.exec(basename(file));
  const day = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : Number.NaN;
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      const line = first + i;
      const f = row.split(',');
      if (f.length < 10)
        throw new DataError(
          file,
          line,
          'row',
          `expected 11 columns (time, bid OHLC, bid size, ask OHLC, ask size), found ${f.length}`,
        );
      const ts = f[0]!;
      let t: UnixMs;
      if (ts.length === 14 && ts.charCodeAt(8) === 32) {
        t = Date.UTC(
          +ts.slice(0, 4),
          +ts.slice(4, 6) - 1,
          +ts.slice(6, 8),
          +ts.slice(9, 11),
          +ts.slice(12, 14),
        );
      } else if (/^\d+(\.\d+)?$/.test(ts)) {
        if (Number.isNaN(day))
          throw new DataError(
            file,
            line,
            'time',
            'a minute file needs its date in the file name (YYYYMMDD_...)',
          );
        t = day + Math.floor(+ts);
      } else t = Number.NaN;
      b.two(
        t,
        num(f[1]),
        num(f[2]),
        num(f[3]),
        num(f[4]),
        num(f[6]),
        num(f[7]),
        num(f[8]),
        num(f[9]),
        0,
        line,
        row,
      );
    }
    const out = b.take();
    if (out) yield out;
  }
}

const EST_OFFSET = 5 * 3_600_000;

/**
 * HistData M1: `YYYYMMDD HHMMSS;o;h;l;c;v`, bid prices. HistData documents EST (fixed UTC−5), which
 * is the default; its 2019 EURUSD follows European summer time (--timezone Europe/London-05:00).
 */
async function* readHistData(
  file: string,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  statedSide(file, o, 'bid');
  const b = new Builder(file, o, notices, '-05:00');
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      const line = first + i;
      const f = row.split(';');
      const ts = f[0]!;
      if (f.length < 5 || ts.length !== 15)
        throw new DataError(
          file,
          line,
          'row',
          `expected "YYYYMMDD HHMMSS;open;high;low;close;volume", found "${row.slice(0, 60)}"`,
        );
      const t = Date.UTC(
        +ts.slice(0, 4),
        +ts.slice(4, 6) - 1,
        +ts.slice(6, 8),
        +ts.slice(9, 11),
        +ts.slice(11, 13),
        +ts.slice(13, 15),
      );
      b.one('B', t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), 0, line, row);
    }
    const out = b.take();
    if (out) yield out;
  }
}

/** OANDA mid candles saved as CSV (`,volume,time,Open,High,Low,Close,Pair`). */
async function* readOandaMidCsv(
  file: string,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  statedSide(file, o, 'mid');
  const b = new Builder(file, o, notices, 'explicit');
  let header = true;
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      if (header) {
        header = false;
        continue;
      }
      const f = row.split(',');
      b.one(
        'M',
        parseFlexibleTime(f[2]!),
        num(f[3]),
        num(f[4]),
        num(f[5]),
        num(f[6]),
        num(f[1]),
        first + i,
        row,
      );
    }
    const out = b.take();
    if (out) yield out;
  }
}

/**
 * OANDA candles JSON (a /candles response, or JSON lines of candle objects), streamed: the scanner
 * cuts each `{...}` candle out of the `candles` array by brace depth (respecting strings) across
 * chunks, so the file is never parsed whole. Incomplete candles are skipped and counted.
 */
async function* readOandaJson(
  file: string,
  o: ReadOptions,
  notices: ReadNotices,
): AsyncIterable<readonly Candle[]> {
  const b = new Builder(file, o, notices, 'explicit');
  let depth = 0;
  let inString = false;
  let escape = false;
  let start = -1;
  let buf = '';
  let line = 1;
  let objLine = 1;
  // Depth of candle objects: 2 inside {"candles":[ {...} ]}, 1 for JSON lines.
  let candleDepth = -1;
  const maxLine = maxLineBytes();
  // 64 KiB chunks, as readLines: a chunk's candles are one batch, and smaller batches die young.
  const stream =
    packingOf(file) === 'plain'
      ? createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 })
      : openBytes(file).setEncoding('utf8');
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = buf + chunk;
    const base = buf.length;
    for (let i = base; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (i >= base && ch === 10) line++;
      if (inString) {
        if (escape) escape = false;
        else if (ch === 92) escape = true;
        else if (ch === 34) inString = false;
        continue;
      }
      if (ch === 34) inString = true;
      else if (ch === 123) {
        depth++;
        if (candleDepth < 0) {
          // The first object: a response wrapper (look for "candles") or a candle itself (JSON lines).
          const ahead = text.slice(i, i + 4096);
          candleDepth = /^\{\s*"(time|complete|volume|bid|ask|mid)"/.test(ahead) ? 1 : 2;
        }
        if (depth === candleDepth) {
          start = i;
          objLine = line;
        }
      } else if (ch === 125) {
        if (depth === candleDepth && start >= 0) {
          const json = text.slice(start, i + 1);
          start = -1;
          let c: {
            time?: string;
            complete?: boolean;
            volume?: number;
            bid?: Record<string, string>;
            ask?: Record<string, string>;
            mid?: Record<string, string>;
          };
          try {
            c = JSON.parse(json);
          } catch (e) {
            throw new DataError(file, objLine, 'candle', `not valid JSON: ${(e as Error).message}`);
          }
          if (c.time === undefined) throw new DataError(file, objLine, 'time', 'a candle has no "time"');
          if (c.complete === false) {
            notices.incomplete++;
          } else {
            const t = parseFlexibleTime(c.time);
            const vol = c.volume ?? 0;
            if (o.side !== undefined)
              statedSide(file, o, c.bid && c.ask ? o.side : c.mid ? 'mid' : c.bid ? 'bid' : 'ask');
            if (c.bid && c.ask) {
              b.two(
                t,
                num(c.bid.o),
                num(c.bid.h),
                num(c.bid.l),
                num(c.bid.c),
                num(c.ask.o),
                num(c.ask.h),
                num(c.ask.l),
                num(c.ask.c),
                vol,
                objLine,
                json,
              );
            } else if (c.mid)
              b.one('M', t, num(c.mid.o), num(c.mid.h), num(c.mid.l), num(c.mid.c), vol, objLine, json);
            else if (c.bid)
              b.one('B', t, num(c.bid.o), num(c.bid.h), num(c.bid.l), num(c.bid.c), vol, objLine, json);
            else if (c.ask)
              b.one('A', t, num(c.ask.o), num(c.ask.h), num(c.ask.l), num(c.ask.c), vol, objLine, json);
            else throw new DataError(file, objLine, 'candle', 'a candle has none of "bid", "ask" or "mid"');
          }
        }
        depth--;
      }
    }
    buf = start >= 0 ? text.slice(start) : '';
    if (start >= 0) start = 0;
    // A candle is a few hundred bytes: an object past the line cap is not one (FXFLOW_MAX_LINE_BYTES).
    if (buf.length > maxLine) throw lineTooLong(file, objLine, maxLine, 'JSON object');
    const out = b.take();
    if (out) yield out;
  }
  if (depth !== 0 && candleDepth > 0)
    throw new DataError(file, line, 'json', 'the file ends inside a JSON object (truncated?)');
}

function firstBytes(file: string, n = 512): string {
  return headText(file, n);
}

/** Every --format name. */
export const FORMATS: readonly CandleFormat[] = [
  'generic',
  'lean',
  'histdata',
  'oanda-json',
  'oanda-mid-csv',
  'dukascopy',
  'metatrader',
];

/** Guesses the format of a candle file from its first bytes (gzip and zip unpacked). */
export function detectFormat(file: string): CandleFormat {
  const head = firstBytes(file).trimStart();
  if (head.startsWith('{') || head.startsWith('[')) return 'oanda-json';
  if (head.startsWith('time,') || head.startsWith('timestamp,')) return 'generic';
  if (head.startsWith(',volume,time,')) return 'oanda-mid-csv';
  const firstLine = head.split('\n')[0] ?? '';
  if (/^\d{8} \d{6};/.test(firstLine)) return 'histdata';
  if (/^(gmt|local) time[,;\t]/i.test(firstLine) || /^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}/.test(firstLine))
    return 'dukascopy';
  if (
    /^<DATE>/i.test(firstLine) ||
    /^date[,;\t]time[,;\t]open/i.test(firstLine) ||
    /^\d{4}\.\d{2}\.\d{2}[ ,;\t]\d{2}:\d{2}/.test(firstLine)
  )
    return 'metatrader';
  if (/^(time|timestamp)[;\t]/i.test(firstLine)) return 'generic';
  if (/^(\d{8} \d{2}:\d{2}|\d+),/.test(firstLine)) return 'lean';
  throw new DataError(
    file,
    1,
    'format',
    `cannot tell the format from "${firstLine.slice(0, 60)}": pass --format (${FORMATS.join(', ')})`,
  );
}

/** Opens a candle file, or a folder of files read in name order, in any supported format. */
export function openCandles(path: string, o: ReadOptions): AsyncIterable<readonly Candle[]> {
  const notices = o.notices ?? newNotices();
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new DataError(path, 0, '', 'no such file or folder');
  }
  if (st.isDirectory()) {
    const files = readdirSync(path)
      .filter((f) => !f.startsWith('.'))
      .sort()
      .map((f) => join(path, f));
    return (async function* () {
      for (const f of files) yield* openCandles(f, { ...o, notices });
    })();
  }
  const format = o.format ?? detectFormat(path);
  switch (format) {
    case 'generic':
      // Separated by semicolons or tabs (decimal commas allowed): the delimited reader.
      return /^[^\n]*[;\t]/.test(firstBytes(path, 256))
        ? readDelimited(path, 'generic', o, notices)
        : readGeneric(path, o, notices);
    case 'dukascopy':
    case 'metatrader':
      return readDelimited(path, format, o, notices);
    case 'lean':
      return readLean(path, o, notices);
    case 'histdata':
      return readHistData(path, o, notices);
    case 'oanda-json':
      return readOandaJson(path, o, notices);
    case 'oanda-mid-csv':
      return readOandaMidCsv(path, o, notices);
    default:
      throw new DataError(path, 0, 'format', `unknown format '${String(format)}': use ${FORMATS.join(', ')}`);
  }
}

/**
 * Opens a tick file, or a folder of them read in name order. A recording of `fxflow record
 * --prices` is read where it is: the instrument's folder of day files (`<catalog>/ticks/EUR_USD`),
 * the `ticks` folder or the catalog itself (the subscribed instrument's folder is taken), or one
 * `YYYY-MM-DD.csv.gz` day; days outside `[from, to)` are skipped by name.
 */
export async function* openTicks(
  path: string,
  o: { instrument: string; from?: UnixMs; to?: UnixMs },
): AsyncIterable<readonly Tick[]> {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new DataError(path, 0, '', 'no such file or folder');
  }
  if (!st.isDirectory()) {
    if (isTickDayFile(path)) yield* readTickDayFile(path, o);
    else yield* openTickFile(path, o);
    return;
  }
  // A catalog, or its ticks folder: the instrument's recorded days.
  for (const sub of [join(path, 'ticks', o.instrument), join(path, o.instrument)]) {
    if (existsSync(sub) && statSync(sub).isDirectory()) {
      yield* openTicks(sub, o);
      return;
    }
  }
  if (existsSync(join(path, 'ticks')) || existsSync(join(path, 'recording.json'))) {
    throw new DataError(
      path,
      0,
      '',
      `holds no recorded ticks of ${o.instrument} (no ticks/${o.instrument}/ folder): record them with fxflow record --instruments ${o.instrument} --prices, or give another --ticks`,
    );
  }
  for (const f of readdirSync(path)
    .filter((x) => !x.startsWith('.'))
    .sort()) {
    const file = join(path, f);
    if (isTickDayFile(file)) {
      if (dayInRange(file, o.from, o.to)) yield* readTickDayFile(file, o);
    } else yield* openTickFile(file, o);
  }
}

/** One tick file: generic `time,bid,ask`, Lean `ms,bid,ask` (date in the file name), or HistData `YYYYMMDD HHMMSSmmm,bid,ask,vol` (EST). */
async function* openTickFile(
  path: string,
  o: { instrument: string; from?: UnixMs; to?: UnixMs },
): AsyncIterable<readonly Tick[]> {
  const m = /(\d{4})(\d{2})(\d{2})_/.exec(basename(path));
  const day = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : Number.NaN;
  let last = -Infinity;
  let header: boolean | undefined;
  for await (const { lines, first } of readLines(path)) {
    const out: Tick[] = [];
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      if (header === undefined) {
        header = row.startsWith('time');
        if (header) continue;
      }
      const f = row.split(',');
      const ts = f[0]!;
      let t: UnixMs;
      if (/^\d{8} \d{9}$/.test(ts)) {
        t =
          Date.UTC(
            +ts.slice(0, 4),
            +ts.slice(4, 6) - 1,
            +ts.slice(6, 8),
            +ts.slice(9, 11),
            +ts.slice(11, 13),
            +ts.slice(13, 15),
            +ts.slice(15, 18),
          ) + EST_OFFSET;
      } else if (!Number.isNaN(day) && /^\d+(\.\d+)?$/.test(ts)) t = day + Math.floor(+ts);
      else t = parseFlexibleTime(ts);
      const bid = num(f[1]);
      const ask = num(f[2]);
      if (Number.isNaN(t)) throw new DataError(path, first + i, 'time', `cannot read the time "${ts}"`);
      if (!Number.isFinite(bid) || !Number.isFinite(ask))
        throw new DataError(path, first + i, Number.isFinite(bid) ? 'ask' : 'bid', 'expected a number');
      if (t < last) throw new DataError(path, first + i, 'time', 'ticks must be in time order');
      last = t;
      if ((o.from !== undefined && t < o.from) || (o.to !== undefined && t >= o.to)) continue;
      out.push({ kind: 'tick', instrument: o.instrument, at: t, bid, ask: Math.max(ask, bid) });
    }
    if (out.length > 0) yield out;
  }
}

export const BATCH_SIZE = BATCH;

/**
 * Separate bid and ask files of one series (FXCM's `…-bid-…` and `…-ask-…`) read as one bid/ask
 * series. Each file is read by its own format's reader; the rows are paired by time, and a time in
 * one file and not the other is an error naming both files. A bid above the ask is an error
 * unless `crossed: 'clamp'` (then the ask is raised to the bid and the row counted).
 */
export async function* openBidAsk(
  bidPath: string,
  askPath: string,
  o: ReadOptions,
): AsyncIterable<readonly Candle[]> {
  const notices = o.notices ?? newNotices();
  const inner = (): ReadOptions => {
    const { notices: _n, spread: _s, oneSided: _o, ...rest } = o;
    return { ...rest, notices: newNotices() };
  };
  // Each file is its side: a one-sided file that does not say is read as what --bid / --ask name it.
  const bo: ReadOptions = { ...inner(), side: 'bid' };
  const ao: ReadOptions = { ...inner(), side: 'ask' };
  const bidIt = openCandles(bidPath, bo)[Symbol.asyncIterator]();
  const askIt = openCandles(askPath, ao)[Symbol.asyncIterator]();
  let bids: readonly Candle[] = [];
  let asks: readonly Candle[] = [];
  let i = 0;
  let j = 0;
  let bidDone = false;
  let askDone = false;
  const twoSidedIn = (n: ReadNotices | undefined, path: string): void => {
    if (n && n.twoSided > 0)
      throw new DataError(
        path,
        0,
        '',
        'this file holds both bid and ask prices: import it alone, without --bid/--ask',
      );
  };
  for (;;) {
    if (i === bids.length && !bidDone) {
      const r = await bidIt.next();
      if (r.done) bidDone = true;
      else {
        bids = r.value;
        i = 0;
        twoSidedIn(bo.notices, bidPath);
      }
    }
    if (j === asks.length && !askDone) {
      const r = await askIt.next();
      if (r.done) askDone = true;
      else {
        asks = r.value;
        j = 0;
        twoSidedIn(ao.notices, askPath);
      }
    }
    const haveBid = i < bids.length;
    const haveAsk = j < asks.length;
    if (!haveBid && !haveAsk) {
      if (bidDone && askDone) return;
      continue;
    }
    const out: Candle[] = [];
    while (i < bids.length && j < asks.length) {
      const b = bids[i]!;
      const a = asks[j]!;
      if (b.time !== a.time) {
        const t = Math.min(b.time, a.time);
        throw new DataError(
          b.time < a.time ? bidPath : askPath,
          0,
          'time',
          `${new Date(t).toISOString()} is in this file but not in ${b.time < a.time ? askPath : bidPath}: the bid and ask files must hold the same times, one to one`,
        );
      }
      i++;
      j++;
      let { ao: aO, ah: aH, al: aL, ac: aC } = a;
      notices.twoSided++;
      notices.rows++;
      if (aC < b.bc || aO < b.bo || aH < b.bh || aL < b.bl) {
        if (o.crossed !== 'clamp') {
          throw new DataError(
            askPath,
            0,
            'ask',
            `at ${new Date(b.time).toISOString()} the bid is above the ask (${crossedFields(b.bo, b.bh, b.bl, b.bc, aO, aH, aL, aC)}): check that --bid and --ask are not swapped; if the source's quotes really cross, pass --crossed clamp to raise the ask to the bid (the rows are counted and recorded)`,
          );
        }
        notices.crossed++;
        aO = Math.max(aO, b.bo);
        aC = Math.max(aC, b.bc);
        aH = Math.max(aH, b.bh, aO, aC);
        aL = Math.max(Math.min(aL, aO, aC), b.bl);
      }
      out.push({
        kind: 'candle',
        instrument: b.instrument,
        granularity: b.granularity,
        time: b.time,
        at: b.at,
        bo: b.bo,
        bh: b.bh,
        bl: b.bl,
        bc: b.bc,
        ao: aO,
        ah: aH,
        al: aL,
        ac: aC,
        volume: b.volume,
        complete: true,
      });
    }
    if (out.length > 0) yield out;
    if (
      (bidDone && i === bids.length && j < asks.length) ||
      (askDone && j === asks.length && i < bids.length)
    ) {
      const extra = i < bids.length ? bids[i]! : asks[j]!;
      throw new DataError(
        i < bids.length ? bidPath : askPath,
        0,
        'time',
        `${new Date(extra.time).toISOString()} is in this file but not in ${i < bids.length ? askPath : bidPath}: the bid and ask files must hold the same times, one to one`,
      );
    }
  }
}
