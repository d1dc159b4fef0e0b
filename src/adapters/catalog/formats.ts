import { createReadStream, existsSync, readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import { candleClose, type Granularity } from '../../domain/granularity.ts';
import type { Tick } from '../../domain/tick.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import { DataError } from './errors.ts';
import { parseClock, type FileClock } from './file-clock.ts';
import { readLines } from './lines.ts';
import { dayInRange, isTickDayFile, readTickDayFile } from './tick-store.ts';

/**
 * Readers for the candle and tick files fxflow imports. Each returns an AsyncIterable of batches in
 * time order, streamed (a chunk at a time), and checks every row: numbers where numbers belong,
 * low <= open, close <= high on each side, time strictly increasing. Exact duplicate rows of an
 * already-seen time are dropped and counted (HistData repeats an hour in 2019); anything else out
 * of order is an error naming the file and line.
 */
export type CandleFormat = 'generic' | 'lean' | 'histdata' | 'oanda-json' | 'oanda-mid-csv';
export type TickFormat = 'generic-ticks' | 'lean-ticks' | 'histdata-ticks';

/** Spread given to one-sided (mid-only or bid-only) data. */
export type SpreadModel = { readonly kind: 'fixed'; readonly pips: number } | { readonly kind: 'hourly'; readonly pips: readonly number[] };

export interface ReadOptions {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly from?: UnixMs;
  readonly to?: UnixMs;
  readonly format?: CandleFormat;
  /** For one-sided data. Default: zero spread (bid = ask). */
  readonly spread?: SpreadModel;
  /** Default: -2 for JPY-quoted pairs and XAU, else -4. */
  readonly pipLocation?: number;
  /** Counts of rows dropped by documented rules (duplicates, incomplete OANDA candles, crossed quotes clamped). */
  readonly notices?: ReadNotices;
  /**
   * A row whose bid is above its ask: 'error' (the default) stops at it, naming the line; 'clamp'
   * raises the ask to the bid and counts the row in `notices.crossed` (FXCM's separate bid and ask
   * files cross by a fraction of a pip at some closes).
   */
  readonly crossed?: 'error' | 'clamp';
  /**
   * When set, a one-sided (mid or bid only) row is an error with this advice instead of getting a
   * spread: a backtest on one-sided data needs a spread model named by the user.
   */
  readonly oneSided?: string;
  /**
   * The clock the file's times are written in, when they carry no offset (file-clock.ts: an IANA
   * zone, `±HH:MM`, or a zone shifted by an offset). Default: what the format documents (UTC;
   * HistData: −05:00). A file whose times carry their own offset refuses it.
   */
  readonly timezone?: string;
  /**
   * The side a one-sided file's single price is (`--side`): bid, ask or mid. Required for a file
   * that does not say (a generic `time,o,h,l,c`, Dukascopy, MetaTrader): such a file without it
   * is refused; one that says (OANDA JSON's `bid`/`ask`/`mid`, HistData's bid, the OANDA mid CSV)
   * must agree with it.
   */
  readonly side?: PriceSide;
}

export type PriceSide = 'bid' | 'ask' | 'mid';

/** The advice of a one-sided file read without --side. */
export const NAME_THE_SIDE = 'pass --side bid, --side ask or --side mid (fxflow does not guess: a spread model is applied around the side named)';

/** The reader's letter for the side `o.side` names, for a file that does not say its side. */
function namedSide(file: string, o: ReadOptions): 'M' | 'B' | 'A' {
  if (o.side === undefined) throw new DataError(file, 0, 'side', `this file holds one price per bar and does not say whether it is the bid, the ask or the mid: ${NAME_THE_SIDE}`);
  return o.side === 'bid' ? 'B' : o.side === 'ask' ? 'A' : 'M';
}

/** Checks --side against a file that says its side. */
function statedSide(file: string, o: ReadOptions, says: PriceSide): void {
  if (o.side !== undefined && o.side !== says) throw new DataError(file, 0, 'side', `the file's prices are ${says} (its format says so), not ${o.side}: leave --side out or give --side ${says}`);
}

export interface ReadNotices {
  duplicates: number;
  incomplete: number;
  crossed: number;
  rows: number;
  /** Rows read with both sides, mid only, bid only, ask only. */
  twoSided: number;
  mid: number;
  bid: number;
  ask: number;
}

export function newNotices(): ReadNotices {
  return { duplicates: 0, incomplete: 0, crossed: 0, rows: 0, twoSided: 0, mid: 0, bid: 0, ask: 0 };
}

/** The price sides a series holds. */
export type Sides = 'bid/ask' | 'mid' | 'bid' | 'ask';

/** The sides the rows counted in `n` had, or 'mixed' / undefined (no rows). */
export function sidesOf(n: ReadNotices): Sides | 'mixed' | undefined {
  const kinds: Sides[] = [];
  if (n.twoSided > 0) kinds.push('bid/ask');
  if (n.mid > 0) kinds.push('mid');
  if (n.bid > 0) kinds.push('bid');
  if (n.ask > 0) kinds.push('ask');
  return kinds.length === 0 ? undefined : kinds.length === 1 ? kinds[0] : 'mixed';
}

function defaultPipLocation(instrument: string): number {
  return instrument.endsWith('_JPY') || instrument.startsWith('XAU') ? -2 : -4;
}

const BATCH = 4096;
/** How many recent rows are remembered to recognise an exactly repeated block. */
const RECENT = 512;

/** Builds validated candles for one file; one-sided rows get their other side from the spread model. */
class Builder {
  batch: Candle[] = [];
  #last = -Infinity;
  /**
   * The last RECENT rows and their times, in a ring, to recognise a repeated block of exact
   * duplicates (HistData repeats an hour). Two array writes per row; searched only when a row does
   * not move forward in time.
   */
  readonly #recentTimes = new Float64Array(RECENT).fill(Number.NaN);
  readonly #recentRows: string[] = new Array<string>(RECENT).fill('');
  #recentNext = 0;
  readonly #scale: number;
  readonly #pip: number;
  // The options object is built with spreads (its shape varies): the fields every row needs are
  // read from it once.
  readonly #instrument: string;
  readonly #granularity: Granularity;
  readonly #span: number;
  #rows = 0;
  /** Turns the file's wall-clock times into UTC; undefined when they are UTC already. */
  #clock: FileClock | undefined;
  constructor(
    readonly file: string,
    readonly o: ReadOptions,
    readonly notices: ReadNotices,
    /** The clock of the format's times when no --timezone is given: 'utc', a `±HH:MM`, or 'explicit' (the times carry their own offset). */
    formatClock: 'utc' | 'explicit' | string = 'utc',
  ) {
    this.setClock(formatClock);
    this.#instrument = o.instrument;
    this.#granularity = o.granularity;
    // Candles shorter than a day close a fixed span after they open; D, W and M follow New York.
    this.#span = o.granularity === 'D' || o.granularity === 'W' || o.granularity === 'M' ? 0 : candleClose(o.granularity, 0);
    const pl = o.pipLocation ?? defaultPipLocation(o.instrument);
    this.#pip = 10 ** pl;
    this.#scale = 10 ** (-pl + 1);
  }

  /** Sets how the rows' times are read (a reader that learns it from the first row calls this again). */
  setClock(formatClock: 'utc' | 'explicit' | string): void {
    const tz = this.o.timezone;
    if (formatClock === 'explicit') {
      if (tz !== undefined) throw new DataError(this.file, 0, 'time', `the times in this file carry their own offset (Z or ±HH:MM), so --timezone ${tz} does not apply: leave it out`);
      this.#clock = undefined;
      return;
    }
    const spec = tz ?? (formatClock === 'utc' ? undefined : formatClock);
    try {
      this.#clock = spec === undefined ? undefined : parseClock(spec);
    } catch (e) {
      throw new DataError(this.file, 0, 'timezone', (e as Error).message);
    }
  }

  /** The clock the rows are read in, as `--timezone` names it ('UTC' when they are UTC). */
  get clockName(): string {
    return this.#clock?.name ?? 'UTC';
  }

  #half(time: UnixMs): number {
    const s = this.o.spread;
    if (!s) return 0;
    const pips = s.kind === 'fixed' ? s.pips : s.pips[new Date(time).getUTCHours()] ?? 0;
    return (pips * this.#pip) / 2;
  }

  #snap(x: number): number {
    return Math.round(x * this.#scale) / this.#scale;
  }

  /** Returns false when the row is outside [from, to) or a dropped duplicate. */
  #accept(time: UnixMs, line: number, row: string): boolean {
    if (Number.isNaN(time)) throw new DataError(this.file, line, 'time', `cannot read the time in "${row.slice(0, 60)}": not a real date and time of day (expected e.g. 2024-03-08T21:00:00Z; hours 0-23, days the month has)`);
    if (time <= this.#last) {
      if (this.#seen(time, row)) {
        this.notices.duplicates++;
        return false;
      }
      throw new DataError(this.file, line, 'time', `time ${new Date(time).toISOString()} is not after the previous row's ${new Date(this.#last).toISOString()} and does not repeat an earlier row exactly: sort the file by time and remove duplicates`);
    }
    this.#last = time;
    const k = this.#recentNext;
    this.#recentTimes[k] = time;
    this.#recentRows[k] = row;
    this.#recentNext = k + 1 === RECENT ? 0 : k + 1;
    if (this.o.from !== undefined && time < this.o.from) return false;
    if (this.o.to !== undefined && time >= this.o.to) return false;
    return true;
  }

  /** Whether one of the last RECENT accepted rows had this time and exactly this text. */
  #seen(time: UnixMs, row: string): boolean {
    const times = this.#recentTimes;
    for (let i = 0; i < RECENT; i++) if (times[i] === time) return this.#recentRows[i] === row;
    return false;
  }

  #check(line: number, side: string, o: number, h: number, l: number, c: number): void {
    if (!(Number.isFinite(o) && Number.isFinite(h) && Number.isFinite(l) && Number.isFinite(c))) {
      const bad = [['open', o], ['high', h], ['low', l], ['close', c]].find(([, v]) => !Number.isFinite(v as number))!;
      throw new DataError(this.file, line, `${side} ${bad[0]}`, 'expected a number');
    }
    if (l > o || l > c || h < o || h < c) {
      throw new DataError(this.file, line, side, `inconsistent OHLC (open ${o}, high ${h}, low ${l}, close ${c}): low must be <= open, close <= high`);
    }
  }

  two(time: UnixMs, bo: number, bh: number, bl: number, bc: number, ao: number, ah: number, al: number, ac: number, volume: number, line: number, row: string): void {
    if (this.#clock !== undefined && time === time) time = this.#clock.toUtc(time);
    if (!this.#accept(time, line, row)) return;
    this.#check(line, 'bid', bo, bh, bl, bc);
    this.#check(line, 'ask', ao, ah, al, ac);
    this.notices.twoSided++;
    if (ac < bc || ao < bo || ah < bh || al < bl) {
      if (this.o.crossed !== 'clamp') {
        throw new DataError(this.file, line, 'ask', `the bid is above the ask (bid open ${bo} close ${bc}, ask open ${ao} close ${ac}): check that the bid and ask columns (or files) are not swapped; if the source's quotes really cross, pass --crossed clamp to raise the ask to the bid (the rows are counted and recorded)`);
      }
      // Crossed quotes (separate bid and ask series), accepted by the user: clamp the ask up to the bid and count them.
      this.notices.crossed++;
      ao = Math.max(ao, bo);
      ac = Math.max(ac, bc);
      ah = Math.max(ah, bh, ao, ac);
      al = Math.max(Math.min(al, ao, ac), bl);
    }
    this.#push(time, bo, bh, bl, bc, ao, ah, al, ac, volume);
  }

  one(side: 'M' | 'B' | 'A', time: UnixMs, o: number, h: number, l: number, c: number, volume: number, line: number, row: string): void {
    if (this.#clock !== undefined && time === time) time = this.#clock.toUtc(time);
    if (!this.#accept(time, line, row)) return;
    const name = side === 'M' ? 'mid' : side === 'B' ? 'bid' : 'ask';
    this.#check(line, name, o, h, l, c);
    this.notices[name]++;
    if (this.o.oneSided !== undefined) throw new DataError(this.file, line, name, `this file holds ${name} prices only: ${this.o.oneSided}`);
    const half = this.#half(time);
    if (half === 0) {
      this.#push(time, o, h, l, c, o, h, l, c, volume);
      return;
    }
    const down = side === 'M' ? half : side === 'B' ? 0 : 2 * half;
    const up = side === 'M' ? half : side === 'B' ? 2 * half : 0;
    // Direct calls, not a local arrow: under tsx every function created per row also gets a name
    // defined on it (keepNames), which costs more than the row.
    this.#push(time, this.#snap(o - down), this.#snap(h - down), this.#snap(l - down), this.#snap(c - down), this.#snap(o + up), this.#snap(h + up), this.#snap(l + up), this.#snap(c + up), volume);
  }

  #push(time: UnixMs, bo: number, bh: number, bl: number, bc: number, ao: number, ah: number, al: number, ac: number, volume: number): void {
    this.#rows++;
    const span = this.#span;
    this.batch.push({
      kind: 'candle', instrument: this.#instrument, granularity: this.#granularity, time,
      at: span > 0 ? time + span : candleClose(this.#granularity, time), bo, bh, bl, bc, ao, ah, al, ac, volume, complete: true,
    });
  }

  take(): Candle[] | undefined {
    this.notices.rows += this.#rows;
    this.#rows = 0;
    if (this.batch.length === 0) return undefined;
    const b = this.batch;
    this.batch = [];
    return b;
  }
}

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
  if (!(mo >= 1 && mo <= 12 && d >= 1 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59)) return false;
  return new Date(Date.UTC(y, mo - 1, d)).getUTCDate() === d;
}

/**
 * Parses `YYYY-MM-DDTHH:MM:SS[.fff…]Z` quickly (the catalog's own form), RFC 3339 with an offset,
 * pandas' `YYYY-MM-DD HH:MM:SS[+00:00]` (a space for the T; no offset is UTC), and epoch seconds or
 * milliseconds. Returns NaN for anything else, and for an impossible date or time of day.
 */
export function parseFlexibleTime(s: string): UnixMs {
  if (s.length >= 19 && s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && s.charCodeAt(13) === 58 && s.charCodeAt(16) === 58) {
    const sep = s.charCodeAt(10);
    if (sep !== 84 && sep !== 32) return Number.NaN;
    if (!realDateTime(s)) return Number.NaN;
    if (s.length === 20 && s.charCodeAt(19) === 90) {
      return Date.UTC(digitsAt(s, 0, 4), digitsAt(s, 5, 2) - 1, digitsAt(s, 8, 2), digitsAt(s, 11, 2), digitsAt(s, 14, 2), digitsAt(s, 17, 2));
    }
    if (sep === 32) return parseTime(s.length === 19 ? `${s.slice(0, 10)}T${s.slice(11)}Z` : `${s.slice(0, 10)}T${s.slice(11)}`);
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
 * Reads a catalog row `YYYY-MM-DDTHH:MM:SSZ,bo,bh,bl,bc,ao,ah,al,ac[,volume]` by scanning its
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

  row(s: string): boolean {
    if (s.length < 21 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 90 || s.charCodeAt(20) !== 44) return false;
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
    for (let i = 0; i < 8; i++) {
      const x = this.#number(i < 7);
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
async function* readGeneric(file: string, o: ReadOptions, notices: ReadNotices): AsyncIterable<readonly Candle[]> {
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
        if (cols.join(',') === 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume' || cols.join(',') === 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c') twoSided = true;
        else if (/^(time|timestamp),(o|open),(h|high),(l|low),(c|close)(,volume)?$/.test(cols.join(',').toLowerCase())) {
          twoSided = false;
          side = namedSide(file, o);
        }
        else throw new DataError(file, line, 'header', `unknown header "${row.slice(0, 80)}": use time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume or time,o,h,l,c,volume (see data/README.md)`);
        continue;
      }
      if (!clockSet) {
        // Times with an offset (Z, +00:00) or epoch numbers are instants; others are a wall clock.
        clockSet = true;
        b.setClock(/(Z|[+-]\d\d:?\d\d)$/i.test(row.split(',')[0]!.trim()) || /^\d+(\.\d+)?$/.test(row.split(',')[0]!.trim()) ? 'explicit' : 'utc');
      }
      if (twoSided && scan.row(row)) {
        const v = scan.values;
        b.two(scan.time, v[0]!, v[1]!, v[2]!, v[3]!, v[4]!, v[5]!, v[6]!, v[7]!, v[8]!, line, row);
        continue;
      }
      // Anything the scanner does not take (spaces, exponents, long digits, other time forms, a
      // bad field) goes the general way, which reads it or names what is wrong.
      const f = row.split(',');
      const t = parseFlexibleTime(f[0]!);
      if (twoSided) b.two(t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7]), num(f[8]), f[9] ? +f[9] : 0, line, row);
      else b.one(side, t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), f[5] ? +f[5] : 0, line, row);
    }
    const out = b.take();
    if (out) yield out;
  }
}

/** Lean bid/ask bars: hour/daily `YYYYMMDD HH:mm`, minute files ms since midnight of the date in the file name. */
async function* readLean(file: string, o: ReadOptions, notices: ReadNotices): AsyncIterable<readonly Candle[]> {
  const b = new Builder(file, o, notices);
  const m = /(\d{4})(\d{2})(\d{2})_/.exec(basename(file));
  const day = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : Number.NaN;
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      const line = first + i;
      const f = row.split(',');
      if (f.length < 10) throw new DataError(file, line, 'row', `expected 11 columns (time, bid OHLC, bid size, ask OHLC, ask size), found ${f.length}`);
      const ts = f[0]!;
      let t: UnixMs;
      if (ts.length === 14 && ts.charCodeAt(8) === 32) {
        t = Date.UTC(+ts.slice(0, 4), +ts.slice(4, 6) - 1, +ts.slice(6, 8), +ts.slice(9, 11), +ts.slice(12, 14));
      } else if (/^\d+(\.\d+)?$/.test(ts)) {
        if (Number.isNaN(day)) throw new DataError(file, line, 'time', 'a minute file needs its date in the file name (YYYYMMDD_...)');
        t = day + Math.floor(+ts);
      } else t = Number.NaN;
      b.two(t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), num(f[6]), num(f[7]), num(f[8]), num(f[9]), 0, line, row);
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
async function* readHistData(file: string, o: ReadOptions, notices: ReadNotices): AsyncIterable<readonly Candle[]> {
  statedSide(file, o, 'bid');
  const b = new Builder(file, o, notices, '-05:00');
  for await (const { lines, first } of readLines(file)) {
    for (let i = 0; i < lines.length; i++) {
      const row = lines[i]!;
      if (row.length === 0) continue;
      const line = first + i;
      const f = row.split(';');
      const ts = f[0]!;
      if (f.length < 5 || ts.length !== 15) throw new DataError(file, line, 'row', `expected "YYYYMMDD HHMMSS;open;high;low;close;volume", found "${row.slice(0, 60)}"`);
      const t = Date.UTC(+ts.slice(0, 4), +ts.slice(4, 6) - 1, +ts.slice(6, 8), +ts.slice(9, 11), +ts.slice(11, 13), +ts.slice(13, 15));
      b.one('B', t, num(f[1]), num(f[2]), num(f[3]), num(f[4]), 0, line, row);
    }
    const out = b.take();
    if (out) yield out;
  }
}

/** OANDA mid candles saved as CSV (`,volume,time,Open,High,Low,Close,Pair`). */
async function* readOandaMidCsv(file: string, o: ReadOptions, notices: ReadNotices): AsyncIterable<readonly Candle[]> {
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
      b.one('M', parseFlexibleTime(f[2]!), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[1]), first + i, row);
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
async function* readOandaJson(file: string, o: ReadOptions, notices: ReadNotices): AsyncIterable<readonly Candle[]> {
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
  // 64 KiB chunks, as readLines: a chunk's candles are one batch, and smaller batches die young.
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 });
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
          let c: { time?: string; complete?: boolean; volume?: number; bid?: Record<string, string>; ask?: Record<string, string>; mid?: Record<string, string> };
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
            if (o.side !== undefined) statedSide(file, o, c.bid && c.ask ? o.side : c.mid ? 'mid' : c.bid ? 'bid' : 'ask');
            if (c.bid && c.ask) {
              b.two(t, num(c.bid.o), num(c.bid.h), num(c.bid.l), num(c.bid.c), num(c.ask.o), num(c.ask.h), num(c.ask.l), num(c.ask.c), vol, objLine, json);
            } else if (c.mid) b.one('M', t, num(c.mid.o), num(c.mid.h), num(c.mid.l), num(c.mid.c), vol, objLine, json);
            else if (c.bid) b.one('B', t, num(c.bid.o), num(c.bid.h), num(c.bid.l), num(c.bid.c), vol, objLine, json);
            else if (c.ask) b.one('A', t, num(c.ask.o), num(c.ask.h), num(c.ask.l), num(c.ask.c), vol, objLine, json); else throw new DataError(file, objLine, 'candle', 'a candle has none of "bid", "ask" or "mid"');
          }
        }
        depth--;
      }
    }
    buf = start >= 0 ? text.slice(start) : '';
    if (start >= 0) start = 0;
    const out = b.take();
    if (out) yield out;
  }
  if (depth !== 0 && candleDepth > 0) throw new DataError(file, line, 'json', 'the file ends inside a JSON object (truncated?)');
}

function firstBytes(file: string, n = 512): string {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const got = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Guesses the format of a candle file from its name and first bytes. */
export function detectFormat(file: string): CandleFormat {
  const head = firstBytes(file).trimStart();
  if (head.startsWith('{') || head.startsWith('[')) return 'oanda-json';
  if (head.startsWith('time,') || head.startsWith('timestamp,')) return 'generic';
  if (head.startsWith(',volume,time,')) return 'oanda-mid-csv';
  const firstLine = head.split('\n')[0] ?? '';
  if (/^\d{8} \d{6};/.test(firstLine)) return 'histdata';
  if (/^(\d{8} \d{2}:\d{2}|\d+),/.test(firstLine)) return 'lean';
  throw new DataError(file, 1, 'format', `cannot tell the format from "${firstLine.slice(0, 60)}": pass --format (generic, lean, histdata, oanda-json, oanda-mid-csv)`);
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
    const files = readdirSync(path).filter((f) => !f.startsWith('.')).sort().map((f) => join(path, f));
    return (async function* () {
      for (const f of files) yield* openCandles(f, { ...o, notices });
    })();
  }
  const format = o.format ?? detectFormat(path);
  switch (format) {
    case 'generic':
      return readGeneric(path, o, notices);
    case 'lean':
      return readLean(path, o, notices);
    case 'histdata':
      return readHistData(path, o, notices);
    case 'oanda-json':
      return readOandaJson(path, o, notices);
    case 'oanda-mid-csv':
      return readOandaMidCsv(path, o, notices);
    default:
      throw new DataError(path, 0, 'format', `unknown format '${String(format)}': use generic, lean, histdata, oanda-json or oanda-mid-csv`);
  }
}

/**
 * Opens a tick file, or a folder of them read in name order. A recording of `fxflow record
 * --prices` is read where it is: the instrument's folder of day files (`<catalog>/ticks/EUR_USD`),
 * the `ticks` folder or the catalog itself (the subscribed instrument's folder is taken), or one
 * `YYYY-MM-DD.csv.gz` day; days outside `[from, to)` are skipped by name.
 */
export async function* openTicks(path: string, o: { instrument: string; from?: UnixMs; to?: UnixMs }): AsyncIterable<readonly Tick[]> {
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
    throw new DataError(path, 0, '', `holds no recorded ticks of ${o.instrument} (no ticks/${o.instrument}/ folder): record them with fxflow record --instruments ${o.instrument} --prices, or give another --ticks`);
  }
  for (const f of readdirSync(path).filter((x) => !x.startsWith('.')).sort()) {
    const file = join(path, f);
    if (isTickDayFile(file)) {
      if (dayInRange(file, o.from, o.to)) yield* readTickDayFile(file, o);
    } else yield* openTickFile(file, o);
  }
}

/** One tick file: generic `time,bid,ask`, Lean `ms,bid,ask` (date in the file name), or HistData `YYYYMMDD HHMMSSmmm,bid,ask,vol` (EST). */
async function* openTickFile(path: string, o: { instrument: string; from?: UnixMs; to?: UnixMs }): AsyncIterable<readonly Tick[]> {
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
        t = Date.UTC(+ts.slice(0, 4), +ts.slice(4, 6) - 1, +ts.slice(6, 8), +ts.slice(9, 11), +ts.slice(11, 13), +ts.slice(13, 15), +ts.slice(15, 18)) + EST_OFFSET;
      } else if (!Number.isNaN(day) && /^\d+(\.\d+)?$/.test(ts)) t = day + Math.floor(+ts);
      else t = parseFlexibleTime(ts);
      const bid = num(f[1]);
      const ask = num(f[2]);
      if (Number.isNaN(t)) throw new DataError(path, first + i, 'time', `cannot read the time "${ts}"`);
      if (!Number.isFinite(bid) || !Number.isFinite(ask)) throw new DataError(path, first + i, Number.isFinite(bid) ? 'ask' : 'bid', 'expected a number');
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
export async function* openBidAsk(bidPath: string, askPath: string, o: ReadOptions): AsyncIterable<readonly Candle[]> {
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
    if (n && n.twoSided > 0) throw new DataError(path, 0, '', 'this file holds both bid and ask prices: import it alone, without --bid/--ask');
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
        throw new DataError(b.time < a.time ? bidPath : askPath, 0, 'time', `${new Date(t).toISOString()} is in this file but not in ${b.time < a.time ? askPath : bidPath}: the bid and ask files must hold the same times, one to one`);
      }
      i++;
      j++;
      let { ao: aO, ah: aH, al: aL, ac: aC } = a;
      notices.twoSided++;
      notices.rows++;
      if (aC < b.bc || aO < b.bo || aH < b.bh || aL < b.bl) {
        if (o.crossed !== 'clamp') {
          throw new DataError(askPath, 0, 'ask', `at ${new Date(b.time).toISOString()} the bid is above the ask (bid open ${b.bo} close ${b.bc}, ask open ${aO} close ${aC}): check that --bid and --ask are not swapped; if the source's quotes really cross, pass --crossed clamp to raise the ask to the bid (the rows are counted and recorded)`);
        }
        notices.crossed++;
        aO = Math.max(aO, b.bo);
        aC = Math.max(aC, b.bc);
        aH = Math.max(aH, b.bh, aO, aC);
        aL = Math.max(Math.min(aL, aO, aC), b.bl);
      }
      out.push({ kind: 'candle', instrument: b.instrument, granularity: b.granularity, time: b.time, at: b.at, bo: b.bo, bh: b.bh, bl: b.bl, bc: b.bc, ao: aO, ah: aH, al: aL, ac: aC, volume: b.volume, complete: true });
    }
    if (out.length > 0) yield out;
    if ((bidDone && i === bids.length && j < asks.length) || (askDone && j === asks.length && i < bids.length)) {
      const extra = i < bids.length ? bids[i]! : asks[j]!;
      throw new DataError(i < bids.length ? bidPath : askPath, 0, 'time', `${new Date(extra.time).toISOString()} is in this file but not in ${i < bids.length ? askPath : bidPath}: the bid and ask files must hold the same times, one to one`);
    }
  }
}
