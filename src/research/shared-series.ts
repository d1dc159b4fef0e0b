import type { SeriesOrigin } from '../engine/report.ts';
import { createHash } from 'node:crypto';
import type { Candle } from '../domain/candle.ts';
import type { Granularity } from '../domain/granularity.ts';

/**
 * One candle series decoded once into typed arrays over SharedArrayBuffers, so every worker of a
 * sweep reads the same memory and no trial parses text. Prices are interleaved per candle
 * (bo, bh, bl, bc, ao, ah, al, ac). Structured-clone safe: post it to a worker as it is.
 */
export interface SharedSeries {
  readonly instrument: string;
  readonly granularity: Granularity;
  /** Number of candles. */
  readonly length: number;
  /** Open times (epoch ms). */
  readonly time: Float64Array;
  /** Close times (epoch ms): when each candle is delivered. */
  readonly at: Float64Array;
  readonly prices: Float64Array;
  readonly volume: Float64Array;
  readonly complete: Uint8Array;
  /** Where the series was read (the catalog's or a file's account of it), for the trials' data report. */
  readonly origin?: SeriesOrigin;
}

const shared = (n: number, bytes: number): SharedArrayBuffer => new SharedArrayBuffer(Math.max(1, n) * bytes);

/** Reads a candle source to the end into a SharedSeries (the one decode of a sweep). */
export async function decodeSeries(
  instrument: string,
  granularity: Granularity,
  source: AsyncIterable<readonly Candle[]>,
): Promise<SharedSeries> {
  // Grow plain arrays of chunks, then copy once into shared memory of the exact size.
  const chunks: (readonly Candle[])[] = [];
  let n = 0;
  for await (const batch of source) {
    if (batch.length === 0) continue;
    chunks.push(batch);
    n += batch.length;
  }
  const time = new Float64Array(shared(n, 8));
  const at = new Float64Array(shared(n, 8));
  const prices = new Float64Array(shared(n * 8, 8));
  const volume = new Float64Array(shared(n, 8));
  const complete = new Uint8Array(shared(n, 1));
  let i = 0;
  for (const batch of chunks) {
    for (const c of batch) {
      time[i] = c.time;
      at[i] = c.at;
      const p = i * 8;
      prices[p] = c.bo;
      prices[p + 1] = c.bh;
      prices[p + 2] = c.bl;
      prices[p + 3] = c.bc;
      prices[p + 4] = c.ao;
      prices[p + 5] = c.ah;
      prices[p + 6] = c.al;
      prices[p + 7] = c.ac;
      volume[i] = c.volume;
      complete[i] = c.complete ? 1 : 0;
      i++;
    }
  }
  return { instrument, granularity, length: n, time, at, prices, volume, complete };
}

/** The series by `INSTRUMENT:GRANULARITY`, as a trial looks them up. */
export function seriesMap(series: readonly SharedSeries[]): Map<string, SharedSeries> {
  return new Map(series.map((s) => [`${s.instrument}:${s.granularity}`, s]));
}

/** Index of the first candle with open time ≥ t (binary search). */
function lowerBound(time: Float64Array, n: number, t: number): number {
  let lo = 0,
    hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The candles of [from, to) (by open time) as batches of Candle objects, built from the typed arrays
 * as the engine reads them: one object per candle, no parsing.
 */
export function* seriesBatches(
  s: SharedSeries,
  from: number,
  to: number,
  size = 1024,
): Generator<readonly Candle[]> {
  const end = lowerBound(s.time, s.length, to);
  const { instrument, granularity, time, at, prices, volume, complete } = s;
  for (let i = lowerBound(s.time, s.length, from); i < end;) {
    const m = Math.min(size, end - i);
    const out = new Array<Candle>(m);
    for (let k = 0; k < m; k++, i++) {
      const p = i * 8;
      out[k] = {
        kind: 'candle',
        instrument,
        granularity,
        time: time[i]!,
        at: at[i]!,
        bo: prices[p]!,
        bh: prices[p + 1]!,
        bl: prices[p + 2]!,
        bc: prices[p + 3]!,
        ao: prices[p + 4]!,
        ah: prices[p + 5]!,
        al: prices[p + 6]!,
        ac: prices[p + 7]!,
        volume: volume[i]!,
        complete: complete[i] === 1,
      };
    }
    yield out;
  }
}

/** SHA-256 of the series' content (names and every array): the "data" part of a trial's identity. */
export function hashSeries(series: readonly SharedSeries[]): string {
  const h = createHash('sha256');
  for (const s of [...series].sort((a, b) =>
    `${a.instrument}:${a.granularity}` < `${b.instrument}:${b.granularity}` ? -1 : 1,
  )) {
    h.update(`${s.instrument}:${s.granularity}:${s.length}\n`);
    for (const a of [s.time, s.at, s.prices, s.volume, s.complete])
      h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice());
  }
  return h.digest('hex');
}
