import type { Candle } from '../../domain/candle.ts';
import { candleClose, type Granularity } from '../../domain/granularity.ts';
import type { UnixMs } from '../../domain/time.ts';
import { DataError } from './errors.ts';
import { parseClock, type FileClock } from './file-clock.ts';

/**
 * What every candle reader shares: the options a file is read with (instrument, granularity,
 * period, clock, side, spread), the counts of what was dropped, and the Builder that turns a
 * file's rows into checked candles (time order, OHLC, crossed quotes, one side's spread).
 * The format readers live in formats.ts (and export-formats.ts for Dukascopy and MetaTrader).
 */

/** The candle file formats fxflow reads (detected, or named with --format). */
export type CandleFormat =
  'generic' | 'lean' | 'histdata' | 'oanda-json' | 'oanda-mid-csv' | 'dukascopy' | 'metatrader';

/** Spread given to one-sided (mid-only or bid-only) data. */
export type SpreadModel =
  | { readonly kind: 'fixed'; readonly pips: number }
  | { readonly kind: 'hourly'; readonly pips: readonly number[] };

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
export const NAME_THE_SIDE =
  'pass --side bid, --side ask or --side mid (fxflow does not guess: a spread model is applied around the side named)';

/** The reader's letter for the side `o.side` names, for a file that does not say its side. */
export function namedSide(file: string, o: ReadOptions): 'M' | 'B' | 'A' {
  if (o.side === undefined)
    throw new DataError(
      file,
      0,
      'side',
      `this file holds one price per bar and does not say whether it is the bid, the ask or the mid: ${NAME_THE_SIDE}`,
    );
  return o.side === 'bid' ? 'B' : o.side === 'ask' ? 'A' : 'M';
}

/** Checks --side against a file that says its side. */
export function statedSide(file: string, o: ReadOptions, says: PriceSide): void {
  if (o.side !== undefined && o.side !== says)
    throw new DataError(
      file,
      0,
      'side',
      `the file's prices are ${says} (its format says so), not ${o.side}: leave --side out or give --side ${says}`,
    );
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

export const BATCH = 4096;
/** How many recent rows are remembered to recognise an exactly repeated block. */
const RECENT = 512;

/** The fields where the bid is above the ask, as `bid high 1.2 > ask high 1.1` (what a crossed-row error quotes). */
export function crossedFields(
  bo: number,
  bh: number,
  bl: number,
  bc: number,
  ao: number,
  ah: number,
  al: number,
  ac: number,
): string {
  const out: string[] = [];
  if (bo > ao) out.push(`bid open ${bo} > ask open ${ao}`);
  if (bh > ah) out.push(`bid high ${bh} > ask high ${ah}`);
  if (bl > al) out.push(`bid low ${bl} > ask low ${al}`);
  if (bc > ac) out.push(`bid close ${bc} > ask close ${ac}`);
  return out.join(', ');
}

/** Builds validated candles for one file; one-sided rows get their other side from the spread model. */
export class Builder {
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
    this.#span =
      o.granularity === 'D' || o.granularity === 'W' || o.granularity === 'M'
        ? 0
        : candleClose(o.granularity, 0);
    const pl = o.pipLocation ?? defaultPipLocation(o.instrument);
    this.#pip = 10 ** pl;
    this.#scale = 10 ** (-pl + 1);
  }

  /** Sets how the rows' times are read (a reader that learns it from the first row calls this again). */
  setClock(formatClock: 'utc' | 'explicit' | string): void {
    const tz = this.o.timezone;
    if (formatClock === 'explicit') {
      if (tz !== undefined)
        throw new DataError(
          this.file,
          0,
          'time',
          `the times in this file carry their own offset (Z or ±HH:MM), so --timezone ${tz} does not apply: leave it out`,
        );
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
    const pips = s.kind === 'fixed' ? s.pips : (s.pips[new Date(time).getUTCHours()] ?? 0);
    return (pips * this.#pip) / 2;
  }

  #snap(x: number): number {
    return Math.round(x * this.#scale) / this.#scale;
  }

  /** Returns false when the row is outside [from, to) or a dropped duplicate. */
  #accept(time: UnixMs, line: number, row: string): boolean {
    if (Number.isNaN(time))
      throw new DataError(
        this.file,
        line,
        'time',
        `cannot read the time in "${row.slice(0, 60)}": not a real date and time of day (expected e.g. 2024-03-08T21:00:00Z; hours 0-23, days the month has)`,
      );
    if (time <= this.#last) {
      if (this.#seen(time, row)) {
        this.notices.duplicates++;
        return false;
      }
      throw new DataError(
        this.file,
        line,
        'time',
        `time ${new Date(time).toISOString()} is not after the previous row's ${new Date(this.#last).toISOString()} and does not repeat an earlier row exactly: sort the file by time and remove duplicates`,
      );
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
      const bad = [
        ['open', o],
        ['high', h],
        ['low', l],
        ['close', c],
      ].find(([, v]) => !Number.isFinite(v as number))!;
      throw new DataError(this.file, line, `${side} ${bad[0]}`, 'expected a number');
    }
    if (l > o || l > c || h < o || h < c) {
      throw new DataError(
        this.file,
        line,
        side,
        `inconsistent OHLC (open ${o}, high ${h}, low ${l}, close ${c}): low must be <= open, close <= high`,
      );
    }
  }

  two(
    time: UnixMs,
    bo: number,
    bh: number,
    bl: number,
    bc: number,
    ao: number,
    ah: number,
    al: number,
    ac: number,
    volume: number,
    line: number,
    row: string,
  ): void {
    if (this.#clock !== undefined && time === time) time = this.#clock.toUtc(time);
    if (!this.#accept(time, line, row)) return;
    this.#check(line, 'bid', bo, bh, bl, bc);
    this.#check(line, 'ask', ao, ah, al, ac);
    this.notices.twoSided++;
    if (ac < bc || ao < bo || ah < bh || al < bl) {
      if (this.o.crossed !== 'clamp') {
        throw new DataError(
          this.file,
          line,
          'ask',
          `the bid is above the ask (${crossedFields(bo, bh, bl, bc, ao, ah, al, ac)}): check that the bid and ask columns (or files) are not swapped; if the source's quotes really cross, pass --crossed clamp to raise the ask to the bid (the rows are counted and recorded)`,
        );
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

  one(
    side: 'M' | 'B' | 'A',
    time: UnixMs,
    o: number,
    h: number,
    l: number,
    c: number,
    volume: number,
    line: number,
    row: string,
  ): void {
    if (this.#clock !== undefined && time === time) time = this.#clock.toUtc(time);
    if (!this.#accept(time, line, row)) return;
    const name = side === 'M' ? 'mid' : side === 'B' ? 'bid' : 'ask';
    this.#check(line, name, o, h, l, c);
    this.notices[name]++;
    if (this.o.oneSided !== undefined)
      throw new DataError(this.file, line, name, `this file holds ${name} prices only: ${this.o.oneSided}`);
    const half = this.#half(time);
    if (half === 0) {
      this.#push(time, o, h, l, c, o, h, l, c, volume);
      return;
    }
    const down = side === 'M' ? half : side === 'B' ? 0 : 2 * half;
    const up = side === 'M' ? half : side === 'B' ? 2 * half : 0;
    // Direct calls, not a local arrow: under tsx every function created per row also gets a name
    // defined on it (keepNames), which costs more than the row.
    this.#push(
      time,
      this.#snap(o - down),
      this.#snap(h - down),
      this.#snap(l - down),
      this.#snap(c - down),
      this.#snap(o + up),
      this.#snap(h + up),
      this.#snap(l + up),
      this.#snap(c + up),
      volume,
    );
  }

  #push(
    time: UnixMs,
    bo: number,
    bh: number,
    bl: number,
    bc: number,
    ao: number,
    ah: number,
    al: number,
    ac: number,
    volume: number,
  ): void {
    this.#rows++;
    const span = this.#span;
    this.batch.push({
      kind: 'candle',
      instrument: this.#instrument,
      granularity: this.#granularity,
      time,
      at: span > 0 ? time + span : candleClose(this.#granularity, time),
      bo,
      bh,
      bl,
      bc,
      ao,
      ah,
      al,
      ac,
      volume,
      complete: true,
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
