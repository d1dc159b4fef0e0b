import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Candle } from '../domain/candle.ts';
import { encodeCandles, type EncodedSeries } from './candle-codec.ts';

/** The file in a run folder that holds the candles its report charts. */
export const CHART_CANDLES_FILE = 'chart-candles.json';

/**
 * Buy and hold on one charted instrument, on the candles the backtest replayed (after its spread
 * model): bought at the first candle's ask open, marked at each UTC day's last bid close.
 */
export interface BenchmarkSeries {
  readonly instrument: string;
  /** Epoch seconds of the first candle's open, and its ask open (the purchase price). */
  readonly from: number;
  readonly ask: number;
  /** Epoch seconds of each day's last candle close, and that candle's bid close. */
  readonly t: number[];
  readonly bid: number[];
}

/** The chart-candles.json document. */
export interface ChartCandles {
  readonly version: 1;
  readonly series: EncodedSeries[];
  /** One per charted series (absent in run folders from before the benchmark). */
  readonly benchmarks?: BenchmarkSeries[];
}

/** The granularities a series is folded into when it outgrows the cap, finest first (seconds, v20 names). */
const COARSER: readonly [number, string][] = [
  [300, 'M5'],
  [900, 'M15'],
  [3600, 'H1'],
  [14_400, 'H4'],
  [86_400, 'D'],
  [604_800, 'W'],
];

/**
 * Candles a series keeps at most (per series; 400,000: a year of M1, 372k candles, stays in full detail).
 * A page holds one level per series, so its candles are bounded whatever the run's length.
 */
export const DEFAULT_CANDLE_CAP = 400_000;

/** OHLC columns in typed arrays, grown by doubling up to the cap. */
class Level {
  t: Float64Array;
  o: Float64Array;
  h: Float64Array;
  l: Float64Array;
  c: Float64Array;
  n = 0;
  constructor(
    readonly stepMs: number,
    readonly granularity: string,
    /** Candles it may hold (weekly, the coarsest: unlimited, about 52 a year). */
    readonly cap: number,
  ) {
    const size = Math.min(cap, 64);
    this.t = new Float64Array(size);
    this.o = new Float64Array(size);
    this.h = new Float64Array(size);
    this.l = new Float64Array(size);
    this.c = new Float64Array(size);
  }
  grow(size: number): void {
    const next = (a: Float64Array): Float64Array => {
      const b = new Float64Array(size);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.t = next(this.t);
    this.o = next(this.o);
    this.h = next(this.h);
    this.l = next(this.l);
    this.c = next(this.c);
  }
  /** Adds a candle with open time `t` (ms); a coarser level merges it into the bucket that holds it. */
  add(t: number, o: number, h: number, l: number, c: number): boolean {
    const j = this.n - 1;
    const bucket = this.stepMs === 0 ? t : Math.floor(t / this.stepMs) * this.stepMs;
    if (this.stepMs !== 0 && j >= 0 && this.t[j] === bucket) {
      if (h > this.h[j]!) this.h[j] = h;
      if (l < this.l[j]!) this.l[j] = l;
      this.c[j] = c;
      return true;
    }
    if (this.n >= this.cap) return false;
    if (this.n >= this.t.length) this.grow(Math.min(this.cap, this.t.length * 2));
    const i = this.n++;
    this.t[i] = bucket;
    this.o[i] = o;
    this.h[i] = h;
    this.l[i] = l;
    this.c[i] = c;
    return true;
  }
}

/**
 * One charted series in bounded memory: the candles as recorded until there are `cap` of them,
 * then folded into the next coarser granularity (5-minute, 15-minute, 1-hour, 4-hour, daily,
 * weekly) that holds them, and so on. At most `cap` candles are ever kept (plus the fold's copy).
 */
class SeriesBuffer {
  level: Level;
  #next = 0;
  // Buy and hold: the first ask, and each UTC day's last bid close (one point a day).
  first = -1;
  firstAsk = 0;
  readonly days: number[] = [];
  readonly bids: number[] = [];
  #day = -1;
  constructor(
    readonly instrument: string,
    readonly granularity: string,
    readonly precision: number,
    readonly stepMs: number,
    readonly cap: number,
  ) {
    this.level = new Level(0, granularity, cap);
    while (this.#next < COARSER.length && COARSER[this.#next]![0] * 1000 <= stepMs) this.#next++;
  }
  add(x: Candle): void {
    if (this.first < 0) {
      this.first = x.time;
      this.firstAsk = x.ao;
    }
    const close = x.time + this.stepMs;
    const day = Math.floor(x.time / 86_400_000);
    if (day === this.#day) {
      this.days[this.days.length - 1] = close / 1000;
      this.bids[this.bids.length - 1] = x.bc;
    } else {
      this.#day = day;
      this.days.push(close / 1000);
      this.bids.push(x.bc);
    }
    const o = (x.bo + x.ao) / 2,
      h = (x.bh + x.ah) / 2,
      l = (x.bl + x.al) / 2,
      c = (x.bc + x.ac) / 2;
    if (!this.level.add(x.time, o, h, l, c)) {
      this.fold();
      this.level.add(x.time, o, h, l, c);
    }
  }
  /**
   * Replaces the full level by the finest coarser one that holds its candles and one more bucket
   * (weekly, the last, holds any number).
   */
  fold(): void {
    const from = this.level;
    while (this.#next < COARSER.length) {
      const [step, name] = COARSER[this.#next++]!;
      const to = new Level(step * 1000, name, this.#next === COARSER.length ? Infinity : this.cap);
      let fits = true;
      for (let i = 0; i < from.n && fits; i++)
        fits = to.add(from.t[i]!, from.o[i]!, from.h[i]!, from.l[i]!, from.c[i]!);
      if (fits && to.n < to.cap) {
        this.level = to;
        return;
      }
    }
    throw new Error('CandleRecorder: a weekly level refused a candle (cannot happen: it has no cap)');
  }
  /** Numbers kept (candle columns and the benchmark's days): what the recorder's memory grows with. */
  retained(): number {
    return this.level.t.length * 5 + this.days.length * 2;
  }
}

/**
 * Keeps the mid candles a backtest replays, for the report's price charts: the candle sources pass
 * through `tap` unchanged, and `write` saves them compactly (see candle-codec.ts). Bounded: a series
 * keeps at most `cap` candles (see SeriesBuffer), five numbers each, so a year of M1 (372k candles)
 * is 15 MB and ten years the same.
 */
export class CandleRecorder {
  readonly #series: SeriesBuffer[] = [];
  constructor(readonly cap = DEFAULT_CANDLE_CAP) {}

  /** Passes a source through, keeping a copy of its complete candles. `stepMs`: the series' granularity. */
  async *tap(
    source: AsyncIterable<readonly Candle[]>,
    instrument: string,
    granularity: string,
    precision: number,
    stepMs = 60_000,
  ): AsyncIterable<readonly Candle[]> {
    const s = this.series(instrument, granularity, precision, stepMs);
    for await (const batch of source) {
      for (let i = 0; i < batch.length; i++) {
        const c = batch[i]!;
        if (c.complete) s.add(c);
      }
      yield batch;
    }
  }

  /** A series to record into directly (tap does this for a source). */
  series(
    instrument: string,
    granularity: string,
    precision: number,
    stepMs: number,
  ): { add(c: Candle): void } {
    const s = new SeriesBuffer(instrument, granularity, precision, stepMs, this.cap);
    this.#series.push(s);
    return s;
  }

  /** Numbers the recorder holds now, all series together. */
  retained(): number {
    return this.#series.reduce((a, s) => a + s.retained(), 0);
  }

  /** The recorded series, encoded; a series folded to a coarser granularity says so in `recorded`. */
  encode(): ChartCandles {
    return {
      version: 1,
      series: this.#series.map((s) => ({
        ...encodeCandles(
          { instrument: s.instrument, granularity: s.level.granularity, precision: s.precision },
          s.level.t,
          s.level.o,
          s.level.h,
          s.level.l,
          s.level.c,
          s.level.n,
        ),
        ...(s.level.stepMs > 0 ? { recorded: s.granularity } : {}),
      })),
      benchmarks: this.#series
        .filter((s) => s.first >= 0)
        .map((s) => ({
          instrument: s.instrument,
          from: s.first / 1000,
          ask: s.firstAsk,
          t: s.days,
          bid: s.bids,
        })),
    };
  }

  /** Writes chart-candles.json into the run folder. */
  write(runDir: string): void {
    writeFileSync(join(runDir, CHART_CANDLES_FILE), `${JSON.stringify(this.encode())}\n`);
  }
}
