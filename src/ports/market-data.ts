import type { Candle } from '../domain/candle.ts';
import type { Granularity } from '../domain/granularity.ts';
import type { Tick } from '../domain/tick.ts';
import type { UnixMs } from '../domain/time.ts';

export interface CandleRequest {
  readonly instrument: string;
  readonly granularity: Granularity;
  /** Inclusive lower bound on the candle's open time. */
  readonly from?: UnixMs;
  /** Exclusive upper bound on the candle's open time. */
  readonly to?: UnixMs;
}

export interface TickRequest {
  readonly instrument: string;
  readonly from?: UnixMs;
  readonly to?: UnixMs;
}

/**
 * Historical or live market data as batches in strictly increasing time order.
 * Batches keep the async boundary off the per-candle path: consumers iterate a batch synchronously.
 */
export interface MarketData {
  candles(req: CandleRequest): AsyncIterable<readonly Candle[]>;
  ticks(req: TickRequest): AsyncIterable<readonly Tick[]>;
}
