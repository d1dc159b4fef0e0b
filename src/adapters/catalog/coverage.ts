import type { Candle } from '../../domain/candle.ts';
import { candleClose, granularityMs, type Granularity } from '../../domain/granularity.ts';
import { marketCalendar, type MarketCalendar } from '../../domain/market-hours.ts';
import type { UnixMs } from '../../domain/time.ts';

/**
 * Holes in a series: stretches where the market was open and the series has no candle. The FX
 * market's own closures are not holes: the weekend (Friday 17:00 to Sunday 17:00 New York) and
 * the days the market calendar closes (domain/market-hours.ts `MarketCalendar`: shipped, the
 * trading days of 25 December and 1 January, 17:00 New York the day before to 17:00 on the day,
 * and the Monday after when the day falls on a Sunday; and the user's own). A stretch is a
 * hole when the open-market time in it is longer than one candle and longer than 6 hours: minutes
 * without a quote change (Lean leaves them out), gold's daily break, early closes on 24 and 31
 * December and thin holidays (HistData's 5 hours on Memorial Day 2019) are not holes; a missing
 * day, month or year is.
 */
export interface Hole {
  /** First instant with no candle (the close of the candle before, or the period's start). */
  readonly from: UnixMs;
  /** Open of the next candle (or the period's end). */
  readonly to: UnixMs;
  /** Hours the market was open inside it. */
  readonly openHours: number;
}

const HOUR = 3_600_000;

/**
 * The time in [a, b) when the FX market is open: each trading day runs from 17:00 New York the day
 * before its date to 17:00 on its date; the days dated Saturday and Sunday and the calendar's
 * closed days are closed.
 */
export function openMarketMs(a: UnixMs, b: UnixMs, calendar: MarketCalendar = marketCalendar()): number {
  // Cached New York offsets and integer date arithmetic (domain/new-york.ts), not luxon DateTimes:
  // a backtest asks this at every weekend of every series (0.17 s of a 1M-candle run with luxon).
  return calendar.openFxMs(a, b);
}

/** The threshold of open-market time beyond which a stretch without candles is a hole. */
export function holeThreshold(g: Granularity): number {
  return Math.max(granularityMs(g), 6 * HOUR);
}

/**
 * Follows a series as it streams and records its holes, its first and last candle. `feed` is
 * called per candle time in order (cheap: one subtraction unless the gap exceeds the threshold);
 * `end` closes the period (a hole after the last candle counts).
 */
export class CoverageTracker {
  readonly holes: Hole[] = [];
  first = Number.NaN;
  last = Number.NaN;
  #covered: UnixMs;
  readonly #limit: number;
  readonly #span: number;

  constructor(
    readonly granularity: Granularity,
    readonly from: UnixMs,
    readonly onHole?: (h: Hole) => void,
  ) {
    this.#covered = from;
    this.#limit = holeThreshold(granularity);
    this.#span =
      granularity === 'D' || granularity === 'W' || granularity === 'M' ? 0 : granularityMs(granularity);
  }

  feed(c: Candle): void {
    const t = c.time;
    if (this.first !== this.first) this.first = t;
    this.last = t;
    if (t - this.#covered > this.#limit) this.#gap(this.#covered, t);
    const close = this.#span > 0 ? t + this.#span : candleClose(this.granularity, t);
    if (close > this.#covered) this.#covered = close;
  }

  end(to: UnixMs): void {
    if (to - this.#covered > this.#limit) this.#gap(this.#covered, to);
  }

  #gap(a: UnixMs, b: UnixMs): void {
    const open = openMarketMs(a, b);
    if (open <= this.#limit) return;
    const h = { from: a, to: b, openHours: Math.round((open / HOUR) * 10) / 10 };
    this.holes.push(h);
    this.onHole?.(h);
  }
}

/** One hole as text: `2019-05-27T10:00:00Z → 2019-05-27T16:00:00Z (6 h of open market)`. */
export function formatHole(h: Hole): string {
  const iso = (t: number): string => `${new Date(t).toISOString().slice(0, 19)}Z`;
  const open = h.openHours >= 48 ? `${Math.round(h.openHours / 24)} trading days` : `${h.openHours} h`;
  return `${iso(h.from)} → ${iso(h.to)} (${open} of open market)`;
}
