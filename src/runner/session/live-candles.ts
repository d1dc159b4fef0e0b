import type { Candle } from '../../domain/candle.ts';
import { alignOpen, candleClose, type Granularity } from '../../domain/granularity.ts';

interface Building {
  time: number;
  at: number;
  bo: number;
  bh: number;
  bl: number;
  bc: number;
  ao: number;
  ah: number;
  al: number;
  ac: number;
  volume: number;
}

/**
 * Builds complete bid/ask candles of one (instrument, granularity) from live ticks, with v20's
 * alignment (the same `alignOpen`/`candleClose` a backtest's catalog uses): open = first tick of the
 * bucket, high/low = extremes, close = last tick, volume = tick count. A candle is emitted, complete,
 * when the first tick (or heartbeat) at or after its close arrives; a bucket without ticks yields
 * no candle, as v20 gives none.
 *
 * Use one per subscribed series in a live run; `tick` and `heartbeat` return the candle that
 * completed, if any. Mutable scratch state, no allocation per tick except at a bucket change.
 */
export class CandleBuilder {
  readonly instrument: string;
  readonly granularity: Granularity;
  #b: Building | undefined;

  constructor(instrument: string, granularity: Granularity) {
    this.instrument = instrument;
    this.granularity = granularity;
  }

  /** Adds a tick; returns the previous candle when this tick opens a new bucket. */
  tick(at: number, bid: number, ask: number): Candle | undefined {
    const b = this.#b;
    if (b !== undefined && at < b.at) {
      if (bid > b.bh) b.bh = bid;
      if (bid < b.bl) b.bl = bid;
      if (ask > b.ah) b.ah = ask;
      if (ask < b.al) b.al = ask;
      b.bc = bid;
      b.ac = ask;
      b.volume++;
      return undefined;
    }
    const done = b === undefined ? undefined : this.#complete(b);
    const time = alignOpen(this.granularity, at);
    this.#b = {
      time,
      at: candleClose(this.granularity, time),
      bo: bid,
      bh: bid,
      bl: bid,
      bc: bid,
      ao: ask,
      ah: ask,
      al: ask,
      ac: ask,
      volume: 1,
    };
    return done;
  }

  /** Closes the bucket when `at` has passed its end (a heartbeat or a clock tick). */
  heartbeat(at: number): Candle | undefined {
    const b = this.#b;
    if (b === undefined || at < b.at) return undefined;
    this.#b = undefined;
    return this.#complete(b);
  }

  #complete(b: Building): Candle {
    return {
      kind: 'candle',
      instrument: this.instrument,
      granularity: this.granularity,
      time: b.time,
      at: b.at,
      bo: b.bo,
      bh: b.bh,
      bl: b.bl,
      bc: b.bc,
      ao: b.ao,
      ah: b.ah,
      al: b.al,
      ac: b.ac,
      volume: b.volume,
      complete: true,
    };
  }
}
