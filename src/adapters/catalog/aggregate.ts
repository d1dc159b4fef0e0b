import type { Candle } from '../../domain/candle.ts';
import {
  DEFAULT_ALIGNMENT,
  alignOpen,
  candleClose,
  type Alignment,
  type Granularity,
} from '../../domain/granularity.ts';

/**
 * Folds finer candles into coarser ones with v20's alignment (sub-daily candles on UTC multiples of
 * their length; D, W and M at `dailyAlignment` in `alignmentTimezone`). Per side: open = first open,
 * high = max, low = min, close = last close; volume is the sum. A bucket is emitted when a candle of
 * the next bucket arrives, or at the end of the input (only when `emitLast`; v20 would call that
 * last candle incomplete, so it is marked `complete: false` unless its period has fully passed).
 */
export class Aggregator {
  #bucket: { -readonly [K in keyof Candle]: Candle[K] } | undefined;
  #end = -Infinity;

  constructor(
    readonly granularity: Granularity,
    readonly alignment: Alignment = DEFAULT_ALIGNMENT,
  ) {}

  /** Adds a candle; returns the bucket it completed, if any. */
  push(c: Candle): Candle | undefined {
    const b = this.#bucket;
    if (b !== undefined && c.time < this.#end) {
      if (c.bh > b.bh) b.bh = c.bh;
      if (c.bl < b.bl) b.bl = c.bl;
      if (c.ah > b.ah) b.ah = c.ah;
      if (c.al < b.al) b.al = c.al;
      b.bc = c.bc;
      b.ac = c.ac;
      b.volume += c.volume;
      return undefined;
    }
    const done = b;
    const open = alignOpen(this.granularity, c.time, this.alignment);
    const close = candleClose(this.granularity, open, this.alignment.alignmentTimezone);
    this.#end = close;
    this.#bucket = {
      kind: 'candle',
      instrument: c.instrument,
      granularity: this.granularity,
      time: open,
      at: close,
      bo: c.bo,
      bh: c.bh,
      bl: c.bl,
      bc: c.bc,
      ao: c.ao,
      ah: c.ah,
      al: c.al,
      ac: c.ac,
      volume: c.volume,
      complete: true,
    };
    return done;
  }

  /** The bucket in progress (for live use), or undefined. */
  get pending(): Candle | undefined {
    return this.#bucket;
  }

  /** Ends the input: returns the last bucket, complete when `now` is past its close. */
  flush(now = -Infinity): Candle | undefined {
    const b = this.#bucket;
    this.#bucket = undefined;
    if (b && now < b.at) b.complete = false;
    return b;
  }
}

/** Aggregates synchronous batches (used by the synthetic generator). The last bucket is kept only if its period ended. */
export function* aggregateBatches(
  source: Iterable<readonly Candle[]>,
  g: Granularity,
  alignment?: Alignment,
): Generator<readonly Candle[]> {
  const agg = new Aggregator(g, alignment);
  let out: Candle[] = [];
  let lastAt = -Infinity;
  for (const batch of source) {
    for (const c of batch) {
      const done = agg.push(c);
      if (done) out.push(done);
      lastAt = c.at;
    }
    if (out.length >= 1024) {
      yield out;
      out = [];
    }
  }
  const last = agg.flush(lastAt);
  if (last && last.at <= lastAt) out.push(last);
  if (out.length > 0) yield out;
}

/** Aggregates an async source of batches. */
export async function* aggregate(
  source: AsyncIterable<readonly Candle[]>,
  g: Granularity,
  alignment?: Alignment,
): AsyncIterable<readonly Candle[]> {
  const agg = new Aggregator(g, alignment);
  let lastAt = -Infinity;
  for await (const batch of source) {
    const out: Candle[] = [];
    for (const c of batch) {
      const done = agg.push(c);
      if (done) out.push(done);
      lastAt = c.at;
    }
    if (out.length > 0) yield out;
  }
  const last = agg.flush(lastAt);
  if (last && last.at <= lastAt) yield [last];
}
