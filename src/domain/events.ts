import type { Candle } from './candle.ts';
import type { Tick } from './tick.ts';
import type { UnixMs } from './time.ts';

/** A labs signal (chart pattern, sentiment...): typed direction and horizon. */
export interface SignalEvent {
  readonly kind: 'signal';
  readonly at: UnixMs;
  readonly instrument: string;
  readonly source: string;
  readonly direction: 'up' | 'down' | 'flat';
  /** How long the signal is expected to hold, in ms (0 when unknown). */
  readonly horizonMs: number;
  readonly strength?: number;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** An economic calendar entry at its release time. */
export interface CalendarEvent {
  readonly kind: 'calendar';
  readonly at: UnixMs;
  readonly currency: string;
  readonly title: string;
  readonly impact: number;
  readonly actual?: string;
  readonly forecast?: string;
  readonly previous?: string;
  /**
   * When replayed or polled, `at` is when the entry became known (never before its release for an
   * actual value) and `releaseAt` the scheduled release time; absent when `at` is the release.
   */
  readonly releaseAt?: UnixMs;
  /** True when this is a later version of an entry already delivered (for example the actual arrived). */
  readonly update?: boolean;
}

/**
 * An OANDA labs spread interval of an instrument (min, average, max spread in pips), delivered when
 * it became known (`at`; never before the interval started: `intervalAt`).
 */
export interface SpreadEvent {
  readonly kind: 'spread';
  readonly at: UnixMs;
  readonly instrument: string;
  /** Start of the interval the figures are for. */
  readonly intervalAt: UnixMs;
  readonly min: number;
  readonly avg: number;
  readonly max: number;
}

/**
 * A CFTC Commitments of Traders report of an instrument, delivered when it became known (`at`;
 * never before the report's date: `reportAt`). Counts are contracts of `unit`.
 */
export interface CotEvent {
  readonly kind: 'cot';
  readonly at: UnixMs;
  readonly instrument: string;
  readonly reportAt: UnixMs;
  /** Open interest. */
  readonly openInterest: number;
  /** Non-commercial long and short positions. */
  readonly nonCommercialLong: number;
  readonly nonCommercialShort: number;
  /** The instrument's price on the report date. */
  readonly price: number;
  /** What a contract is, e.g. `Contracts Of EUR 125,000`. */
  readonly unit: string;
}

/** A timer the strategy asked for (for example every 15 minutes), fired on the engine clock. */
export interface TimerEvent {
  readonly kind: 'timer';
  readonly at: UnixMs;
  readonly name: string;
}

/**
 * Everything the engine delivers, in `at` order. Candles are delivered at their close.
 * Each member carries `kind` and `at` itself, so the hot path allocates no wrapper.
 */
export type MarketEvent = Candle | Tick | SignalEvent | CalendarEvent | SpreadEvent | CotEvent | TimerEvent;
