import { DateTime, IANAZone } from 'luxon';
import type { Candle } from '../../domain/candle.ts';
import { granularityMs, type Granularity } from '../../domain/granularity.ts';
import type { MarketHours } from '../../domain/market-hours.ts';
import { formatOffset, offsetFlag, parseClock, type FileClock } from './file-clock.ts';

/**
 * What a file's own week says about its clock. An instrument's trading hours
 * (data/instruments.json `tradingHours`) say when its market is closed: bars inside those
 * closures, or a weekly open and close at the wrong hour, show that the times were read in the
 * wrong zone; a weekly open that moves by an hour on daylight-saving dates shows which zone's
 * rules the file follows.
 *
 * `ClockWatch` is fed the candles as read (UTC); it counts the bars that fall while the market is
 * closed and, for each weekly open (the first bar after a gap of a day or more), the shift that
 * puts it on the market's open. `report()` turns the shifts into the offset each stretch of the
 * file was written in, and names a clock (`--timezone`) that fits every week when there is one.
 * Daily and coarser candles are not checked (their times are alignments, not the market's hours).
 */

/** More bars than this inside closures: the clock the file was read in does not fit it. */
export const CLOSED_BARS_ALLOWED = 10;

const HOUR = 3_600_000;
const HALF_HOUR = HOUR / 2;
const DAY = 24 * HOUR;
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** One stretch of a file written in one offset. */
export interface ClockStretch {
  /** The first and last weekly opens of the stretch (UTC, once corrected). */
  readonly from: number;
  readonly to: number;
  readonly weeks: number;
  /** The offset the file's clock had (ms; UTC−5 is −18,000,000). */
  readonly offset: number;
}

export interface ClockReport {
  /** The clock the rows were read in (`--timezone` form; 'UTC'). */
  readonly read: string;
  readonly bars: number;
  /** Bars that fall while the market is closed, and the first few of them (UTC as read). */
  readonly closed: number;
  readonly closedExamples: readonly number[];
  /** Weekly opens found, and the stretches of one offset they make (empty when no weekly open was seen). */
  readonly weeks: number;
  readonly stretches: readonly ClockStretch[];
  /** Whether every weekly open sits on the market's open as read. */
  readonly readFits: boolean;
  /** A `--timezone` that puts every weekly open on the market's open, when the read one does not. */
  readonly fits?: string;
}

/** Where the market's week opens and closes: the session after its longest closure. */
function weekBounds(hours: MarketHours): {
  open: { day: number; minute: number };
  close: { day: number; minute: number };
} {
  const parsed = hours.hours.sessions
    .map((s) => {
      const m = /^(\w{3}) (\d\d):(\d\d)-(\w{3}) (\d\d):(\d\d)$/.exec(s)!;
      const at = (d: string, h: string, mi: string): number =>
        (['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(d) * 24 + Number(h)) * 60 + Number(mi);
      return [at(m[1]!, m[2]!, m[3]!), at(m[4]!, m[5]!, m[6]!)] as const;
    })
    .sort((a, b) => a[0] - b[0]);
  const WEEK = 7 * 1440;
  let best = 0;
  let longest = -1;
  for (let i = 0; i < parsed.length; i++) {
    const prevEnd = i === 0 ? parsed[parsed.length - 1]![1] - WEEK : parsed[i - 1]![1];
    const gap = parsed[i]![0] - prevEnd;
    if (gap > longest) [best, longest] = [i, gap];
  }
  const open = parsed[best]![0];
  const close = (best === 0 ? parsed[parsed.length - 1]![1] : parsed[best - 1]![1]) % WEEK;
  const split = (m: number): { day: number; minute: number } => ({
    day: Math.floor(m / 1440),
    minute: m % 1440,
  });
  return { open: split(open), close: split(close) };
}

/** The instant of the given weekly moment (Sunday-based day, minute of day) in `zone` nearest `t`. */
function nearestWeekly(t: number, zone: string, at: { day: number; minute: number }): number {
  const local = DateTime.fromMillis(t, { zone });
  // luxon's weekday: 1 = Monday … 7 = Sunday; ours: 0 = Sunday.
  const sunday = local.startOf('day').minus({ days: local.weekday % 7 });
  let best = Number.NaN;
  for (const w of [-7, 0, 7]) {
    const x = sunday
      .plus({ days: w + at.day })
      .set({ hour: Math.floor(at.minute / 60), minute: at.minute % 60 })
      .toMillis();
    if (Number.isNaN(best) || Math.abs(x - t) < Math.abs(best - t)) best = x;
  }
  return best;
}

/** Zones tried, in order of preference, when a file's offset changes during the year. */
const ZONES = [
  'Europe/London',
  'Europe/Berlin',
  'Europe/Athens',
  'America/New_York',
  'America/Chicago',
  'Australia/Sydney',
  'Pacific/Auckland',
];

export class ClockWatch {
  readonly #span: number;
  readonly #check: boolean;
  readonly #bounds: ReturnType<typeof weekBounds>;
  readonly #read: FileClock | undefined;
  #prevEnd = Number.NaN;
  #bars = 0;
  #closed = 0;
  readonly #examples: number[] = [];
  /** Per weekly open: its time as read, and the shift (ms, to add) that puts it on the market's open. */
  readonly #weeks: { at: number; shift: number }[] = [];
  /** The open of the week being read, until its close is known. */
  #open: { at: number; shift: number } | undefined;

  constructor(
    readonly hours: MarketHours,
    readonly granularity: Granularity,
    /** The clock the rows were read in (`--timezone` form); 'UTC' for times read as instants. */
    readonly read: string = 'UTC',
  ) {
    this.#check = granularityMs(granularity) < DAY;
    this.#span = this.#check ? granularityMs(granularity) : 0;
    this.#bounds = weekBounds(hours);
    this.#read = read === 'UTC' ? undefined : parseClock(read);
  }

  feed(c: Candle): void {
    this.feedAt(c.time);
  }

  /** A bar (or, with granularity S5, a price) opening at `t`. */
  feedAt(t: number): void {
    if (!this.#check) return;
    this.#bars++;
    const span = this.#span;
    // A bar is inside a closure when the market is closed at its start and at its last instant
    // (the weekly hours: a bar on a holiday is the provider's, not a misread clock).
    const weekly = this.hours.weekly;
    if (!weekly.isOpen(t) && !weekly.isOpen(t + span - 1)) {
      this.#closed++;
      if (this.#examples.length < 5) this.#examples.push(t);
    }
    // A weekly break (the file's first bar is not one: it may be any time of the week). A trading
    // week's open (its first bar) and close (its last bar's end) are each compared with the
    // market's; clocks change over weekends, so both give the same shift unless a bar is missing
    // (a late first bar, a thin holiday close): the week counts only when they agree.
    if (t - this.#prevEnd >= DAY) {
      this.#closeWeek();
      const open =
        Math.round((nearestWeekly(t, this.hours.hours.timeZone, this.#bounds.open) - t) / HALF_HOUR) *
        HALF_HOUR;
      this.#open = { at: t, shift: open };
    }
    this.#prevEnd = t + span;
  }

  /** The week whose open was seen ends at the last bar before now: kept when its close agrees. */
  #closeWeek(): void {
    const o = this.#open;
    if (o === undefined) return;
    this.#open = undefined;
    const end = this.#prevEnd;
    const close =
      Math.round((nearestWeekly(end, this.hours.hours.timeZone, this.#bounds.close) - end) / HALF_HOUR) *
      HALF_HOUR;
    if (close === o.shift && Math.abs(close) <= 14 * HOUR) this.#weeks.push(o);
  }

  report(): ClockReport {
    this.#closeWeek();
    const offsetRead = (t: number): number => this.#read?.offsetAt(t) ?? 0;
    const weeks = this.#weeks.map((w) => ({ at: w.at + w.shift, offset: offsetRead(w.at) - w.shift }));
    const stretches: ClockStretch[] = [];
    for (const w of weeks) {
      const last = stretches[stretches.length - 1];
      if (last && last.offset === w.offset)
        stretches[stretches.length - 1] = { ...last, to: w.at, weeks: last.weeks + 1 };
      else stretches.push({ from: w.at, to: w.at, weeks: 1, offset: w.offset });
    }
    const readFits = this.#weeks.every((w) => w.shift === 0);
    const base = {
      read: this.#read?.name ?? 'UTC',
      bars: this.#bars,
      closed: this.#closed,
      closedExamples: this.#examples,
      weeks: weeks.length,
      stretches,
      readFits,
    };
    if (readFits || weeks.length === 0) return base;
    const fits = fittingClock(weeks);
    return fits === undefined ? base : { ...base, fits };
  }
}

/** A `--timezone` whose offset at each weekly open is the one the file had there. */
function fittingClock(weeks: readonly { at: number; offset: number }[]): string | undefined {
  const first = weeks[0]!.offset;
  if (weeks.every((w) => w.offset === first)) return first === 0 ? 'UTC' : offsetFlag(first);
  const zoneOffset = (zone: IANAZone, t: number): number => zone.offset(t) * 60_000;
  for (const name of ZONES) {
    const z = IANAZone.create(name);
    if (weeks.every((w) => zoneOffset(z, w.at) === w.offset)) return name;
  }
  for (const name of ZONES) {
    const z = IANAZone.create(name);
    const shift = first - zoneOffset(z, weeks[0]!.at);
    if (weeks.every((w) => zoneOffset(z, w.at) + shift === w.offset)) return `${name}${offsetFlag(shift)}`;
  }
  return undefined;
}

const day = (t: number): string => new Date(t).toISOString().slice(0, 10);

/** The stretches as text: `UTC−05:00 from 2019-01-06 (12 weeks), UTC−04:00 from 2019-03-31 (30 weeks), …`. */
export function describeStretches(r: ClockReport): string {
  return r.stretches
    .map(
      (s) =>
        `${formatOffset(s.offset)} ${s.weeks === 1 ? `the week of ${day(s.from)}` : `${day(s.from)} to the week of ${day(s.to)} (${s.weeks} weeks)`}`,
    )
    .join('; ');
}

/** The first bars inside closures, as text (day of week and UTC time). */
export function describeClosed(r: ClockReport): string {
  return r.closedExamples
    .map((t) => `${DAYS[(new Date(t).getUTCDay() + 6) % 7]} ${new Date(t).toISOString().slice(0, 16)}Z`)
    .join(', ');
}

/**
 * Whether the clock a source was read in fits it: a handful of bars (or prices) inside the market's
 * closures at most, or bars in closures while every weekly open sits on the market's: then they are
 * the source's own (Lean's gold trades into the daily break): listed, not refused.
 */
export function clockFits(r: ClockReport): boolean {
  return r.closed <= CLOSED_BARS_ALLOWED || (r.readFits && r.weeks > 0);
}

/**
 * Why the clock a file was read in does not fit it, or undefined when it does: more than a
 * handful of bars inside the market's closures, with weekly opens off the market's (or none
 * seen). Names the offsets the file's weeks fit and the
 * `--timezone` that reads it that way.
 */
export function clockProblem(r: ClockReport, instrument: string): string | undefined {
  if (clockFits(r)) return undefined;
  const read = r.read === 'UTC' ? 'UTC' : r.read;
  const fit =
    r.fits !== undefined
      ? `read it with --timezone ${r.fits}, which fits every week`
      : r.stretches.length > 0
        ? 'no single zone fits every week: import each stretch with its own --timezone and --from/--to'
        : 'pass the --timezone the file was written in';
  return `${r.closed.toLocaleString('en-US')} of its ${r.bars.toLocaleString('en-US')} bars fall while the ${instrument} market is closed when its times are read as ${read} (first: ${describeClosed(r)})${r.stretches.length > 0 ? `. Its weekly opens and closes fit ${describeStretches(r)}` : ''}: ${fit}`;
}
