import type { Granularity } from './granularity.ts';
import type { UnixMs } from './time.ts';

/**
 * A candle on the hot path: plain numbers parsed once from the wire, flat fields, no nesting.
 *
 * Invariants (checked by importers, relied on by the matching engine):
 * - `time` is the v20 open time; `at` is the close (`time + granularity`): the moment the candle is
 *   known, and the moment it is delivered to strategies. Nothing may act on a candle before `at`.
 * - Both sides are always present. Data that carries only mid or only bid prices is given the other
 *   side by a spread model when it is read (see `adapters/catalog/spread.ts`); with a zero spread
 *   bid = ask = the one series.
 * - low <= open, close <= high on each side; ask >= bid is not enforced (some real data is crossed).
 */
export interface Candle {
  readonly kind: 'candle';
  readonly instrument: string;
  readonly granularity: Granularity;
  /** Open time (v20 `time`). */
  readonly time: UnixMs;
  /** Close time: the candle becomes visible at this instant. */
  readonly at: UnixMs;
  readonly bo: number;
  readonly bh: number;
  readonly bl: number;
  readonly bc: number;
  readonly ao: number;
  readonly ah: number;
  readonly al: number;
  readonly ac: number;
  readonly volume: number;
  readonly complete: boolean;
}

/** Which price series a strategy reads from a candle: v20's price component letters. */
export type PriceComponent = 'M' | 'B' | 'A';

export const midOpen = (c: Candle): number => (c.bo + c.ao) / 2;
export const midHigh = (c: Candle): number => (c.bh + c.ah) / 2;
export const midLow = (c: Candle): number => (c.bl + c.al) / 2;
export const midClose = (c: Candle): number => (c.bc + c.ac) / 2;

/** The close of a candle on one component. */
export function closeOf(c: Candle, p: PriceComponent): number {
  return p === 'B' ? c.bc : p === 'A' ? c.ac : (c.bc + c.ac) / 2;
}

/** OHLC of one component as a small object (allocates: not for the hot path). */
export function ohlcOf(c: Candle, p: PriceComponent): { o: number; h: number; l: number; c: number } {
  if (p === 'B') return { o: c.bo, h: c.bh, l: c.bl, c: c.bc };
  if (p === 'A') return { o: c.ao, h: c.ah, l: c.al, c: c.ac };
  return { o: midOpen(c), h: midHigh(c), l: midLow(c), c: midClose(c) };
}
