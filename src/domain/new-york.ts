import { IANAZone } from 'luxon';
import type { UnixMs } from './time.ts';

/**
 * New York trading-day arithmetic: the 17:00 New York boundaries of v20 (daily financing, GFD
 * expiry, the Friday-to-Sunday weekend closure) as epoch ms.
 *
 * Only the UTC offset comes from the time-zone database (luxon's IANAZone, through Intl); the
 * calendar arithmetic is plain integer math on "local" milliseconds. A boundary is always at 17:00
 * local, fifteen hours away from the 02:00 daylight-saving switch, so converting it back to UTC is
 * never ambiguous. Much cheaper than building luxon DateTimes, which matters because a backtest
 * asks for a boundary every week (market hours) or every day (financing).
 */
const ZONE = IANAZone.create('America/New_York');
const HOUR = 3_600_000;
const DAY = 86_400_000;
const CLOSE = 17 * HOUR;

/**
 * Offsets are cached per 64-day bucket: the offset at the bucket's start and end and, when they
 * differ, the instant of the switch (found by bisection to the minute). New York's switches are
 * at least 120 days apart, so a bucket holds at most one. A few Intl calls per bucket instead of
 * several per lookup.
 */
const BUCKET = 64 * DAY;
interface Bucket {
  readonly before: number;
  readonly after: number;
  /** First ms with the `after` offset (Infinity when the bucket has no switch). */
  readonly switchAt: number;
}
const buckets = new Map<number, Bucket>();

function zoneOffset(t: UnixMs): number {
  return ZONE.offset(t) * 60_000;
}

function bucketOf(k: number): Bucket {
  let b = buckets.get(k);
  if (b === undefined) {
    const start = k * BUCKET;
    const before = zoneOffset(start);
    const after = zoneOffset(start + BUCKET - 1);
    let switchAt = Infinity;
    if (before !== after) {
      // Bisection on whole minutes: lo has the old offset, hi the new one.
      let lo = start;
      let hi = start + BUCKET - 60_000;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (zoneOffset(mid) === before) lo = mid;
        else hi = mid;
      }
      switchAt = hi;
    }
    b = { before, after, switchAt };
    buckets.set(k, b);
  }
  return b;
}

/** Offset of New York from UTC at `t`, in ms (-5 h or -4 h). */
function offsetAt(t: UnixMs): number {
  const b = bucketOf(Math.floor(t / BUCKET));
  return t >= b.switchAt ? b.after : b.before;
}

/** The UTC instant of a New York wall-clock time given as ms since 1970-01-01T00:00 local. */
function toUtc(local: number): UnixMs {
  // Guess with the offset half a day later, then confirm at the result (no switch happens near 17:00).
  let utc = local - offsetAt(local + 12 * HOUR);
  const off = offsetAt(utc);
  if (local - off !== utc) utc = local - off;
  return utc;
}

/** New York local ms (wall clock read as if it were UTC) at `t`. */
function toLocal(t: UnixMs): number {
  return t + offsetAt(t);
}

/**
 * The open trading days of the FX market overlapping [a, b), each as its start and end (17:00 New
 * York the day before its date, 17:00 on its date), in order. Closed days are skipped: those dated
 * Saturday or Sunday, and those `closed` names (the market calendar's, domain/market-hours.ts;
 * `weekday` 0 Sunday … 6 Saturday).
 */
export function forEachOpenTradingDay(
  a: UnixMs,
  b: UnixMs,
  closed: (year: number, month: number, day: number, weekday: number) => boolean,
  each: (start: UnixMs, end: UnixMs) => void,
): void {
  // The trading day containing a starts at 17:00 local on a's local date, or the day before.
  let local = Math.floor(toLocal(a) / DAY) * DAY;
  let start = toUtc(local + CLOSE);
  if (start > a) {
    local -= DAY;
    start = toUtc(local + CLOSE);
  }
  while (start < b) {
    const next = local + DAY; // the trading day's date, local midnight
    const end = toUtc(next + CLOSE);
    const date = new Date(next);
    const wd = date.getUTCDay(); // 0 Sunday … 6 Saturday, of the New York date
    const m = date.getUTCMonth() + 1;
    const d = date.getUTCDate();
    if (wd !== 6 && wd !== 0 && !closed(date.getUTCFullYear(), m, d, wd)) each(start, end);
    local = next;
    start = end;
  }
}

/**
 * The FX weekend closure that ends first after `t`: from Friday 17:00 to Sunday 17:00 New York
 * (local time, so the UTC hours follow daylight saving). `to` is strictly after `t`.
 */
export function weekendClosure(t: UnixMs): { from: UnixMs; to: UnixMs } {
  const localDay = Math.floor(toLocal(t) / DAY);
  // 1970-01-01 was a Thursday: (day + 4) mod 7 is 0 on Sundays.
  const dow = (((localDay + 4) % 7) + 7) % 7;
  let sunday = (localDay + ((7 - dow) % 7)) * DAY;
  let to = toUtc(sunday + CLOSE);
  if (to <= t) {
    sunday += 7 * DAY;
    to = toUtc(sunday + CLOSE);
  }
  return { from: toUtc(sunday - 2 * DAY + CLOSE), to };
}

/** The first 17:00 New York strictly after `t`: v20's trading-day boundary (financing, GFD expiry). */
export function nextRollover(t: UnixMs): UnixMs {
  const day = Math.floor(toLocal(t) / DAY) * DAY;
  const r = toUtc(day + CLOSE);
  return r > t ? r : toUtc(day + DAY + CLOSE);
}

/** The New York calendar date (`YYYY-MM-DD`) at `t`. */
export function newYorkDate(t: UnixMs): string {
  return new Date(Math.floor(toLocal(t) / DAY) * DAY).toISOString().slice(0, 10);
}

/**
 * The v20 trading day `t` falls in, named by the date of the 17:00 New York rollover that ends it
 * (`YYYY-MM-DD`): from 17:00 New York on the day before to 17:00 on that day. Rates read during a
 * trading day are the ones its rollover charges; a rollover at `at` charges trading day
 * `newYorkDate(at)`.
 */
export function tradingDayOf(t: UnixMs): string {
  return newYorkDate(nextRollover(t));
}

/** The 17:00 New York rollover that ends trading day `day` (`YYYY-MM-DD`), epoch ms; NaN for a malformed day. */
export function rolloverOfDay(day: string): UnixMs {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return Number.NaN;
  return toUtc(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) + CLOSE);
}
