import { DateTime } from 'luxon';
import type { UnixMs } from './time.ts';

/** v20 CandlestickGranularity. */
export const GRANULARITIES = [
  'S5',
  'S10',
  'S15',
  'S30',
  'M1',
  'M2',
  'M4',
  'M5',
  'M10',
  'M15',
  'M30',
  'H1',
  'H2',
  'H3',
  'H4',
  'H6',
  'H8',
  'H12',
  'D',
  'W',
  'M',
] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const FIXED: Record<Exclude<Granularity, 'M'>, number> = {
  S5: 5 * S,
  S10: 10 * S,
  S15: 15 * S,
  S30: 30 * S,
  M1: MIN,
  M2: 2 * MIN,
  M4: 4 * MIN,
  M5: 5 * MIN,
  M10: 10 * MIN,
  M15: 15 * MIN,
  M30: 30 * MIN,
  H1: H,
  H2: 2 * H,
  H3: 3 * H,
  H4: 4 * H,
  H6: 6 * H,
  H8: 8 * H,
  H12: 12 * H,
  D: 24 * H,
  W: 7 * 24 * H,
};

export function isGranularity(x: string): x is Granularity {
  return (GRANULARITIES as readonly string[]).includes(x);
}

/**
 * Nominal length of one candle in ms. For `M` (month) this is 31 days: use `candleClose` for the
 * exact close of a given candle. D and W are nominal too: a D candle that spans a DST change in
 * New York is 23 or 25 hours long.
 */
export function granularityMs(g: Granularity): number {
  return g === 'M' ? 31 * 24 * H : FIXED[g];
}

/** Close time (exclusive end) of the candle that opens at `open`. */
export function candleClose(g: Granularity, open: UnixMs, zone = 'America/New_York'): UnixMs {
  if (g === 'D' || g === 'W' || g === 'M') {
    const dt = DateTime.fromMillis(open, { zone });
    const next =
      g === 'D' ? dt.plus({ days: 1 }) : g === 'W' ? dt.plus({ weeks: 1 }) : dt.plus({ months: 1 });
    return next.toMillis();
  }
  return open + FIXED[g];
}

/** v20 candle alignment parameters. */
export interface Alignment {
  /** Hour of day (0-23) in `alignmentTimezone` where D candles start. v20 default 17. */
  readonly dailyAlignment: number;
  /** IANA zone of the daily alignment. v20 default America/New_York. */
  readonly alignmentTimezone: string;
  /** Day of week on which W candles start. v20 default Friday. */
  readonly weeklyAlignment:
    'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday' | 'Sunday';
}

export const DEFAULT_ALIGNMENT: Alignment = {
  dailyAlignment: 17,
  alignmentTimezone: 'America/New_York',
  weeklyAlignment: 'Friday',
};

const WEEKDAY: Record<Alignment['weeklyAlignment'], number> = {
  Monday: 1,
  Tuesday: 2,
  Wednesday: 3,
  Thursday: 4,
  Friday: 5,
  Saturday: 6,
  Sunday: 7,
};

/**
 * Open time of the candle of granularity `g` that contains `t`, under v20's alignment rules.
 * Sub-daily candles align to UTC multiples of their length (as v20 does for S5..H12 with the default
 * alignment); D/W/M align to `dailyAlignment` in `alignmentTimezone`.
 */
export function alignOpen(g: Granularity, t: UnixMs, a: Alignment = DEFAULT_ALIGNMENT): UnixMs {
  if (g !== 'D' && g !== 'W' && g !== 'M') {
    const len = FIXED[g];
    return t - (((t % len) + len) % len);
  }
  let dt = DateTime.fromMillis(t, { zone: a.alignmentTimezone });
  let day = dt.set({ hour: a.dailyAlignment, minute: 0, second: 0, millisecond: 0 });
  if (day > dt) day = day.minus({ days: 1 });
  if (g === 'D') return day.toMillis();
  if (g === 'W') {
    const back = (day.weekday - WEEKDAY[a.weeklyAlignment] + 7) % 7;
    return day.minus({ days: back }).toMillis();
  }
  dt = day.set({ day: 1 });
  return dt.toMillis();
}
