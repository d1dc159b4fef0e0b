import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { IANAZone } from 'luxon';
import { packageFile } from './package-root.ts';
import { forEachOpenTradingDay, newYorkDate, nextRollover, rolloverOfDay } from './new-york.ts';
import type { UnixMs } from './time.ts';

/**
 * When an instrument trades: weekly sessions in the local time of its market. v20's Instrument has
 * no such field; fxflow keeps it beside the definitions in data/instruments.json (`tradingHours`):
 *
 * ```json
 * "tradingHours": { "timeZone": "America/New_York", "sessions": ["Sun 17:00-Fri 17:00"] }
 * ```
 *
 * Each session is `Day HH:MM-Day HH:MM` (Sun … Sat) within one week from Sunday 00:00, and sessions
 * may not overlap. The FX week is one session from Sunday to Friday 17:00 New York; metals and US
 * index CFDs have a daily break from 17:00 to 18:00 New York, so five sessions; European indices
 * trade a day-time session in their exchange's zone. The days the whole market closes (Christmas,
 * New Year) are the market calendar's (`MarketCalendar`, data/market-calendar.json), which every
 * instrument's hours take.
 */
export interface TradingHours {
  readonly timeZone: string;
  /** The session texts as given (for messages and the wire). */
  readonly sessions: readonly string[];
}

/** A bad `tradingHours` entry: names where it came from and the expected form. */
export class TradingHoursError extends Error {
  readonly code = 'TRADING_HOURS' as const;
  constructor(message: string) {
    super(message);
    this.name = 'TradingHoursError';
  }
}

/** The FX week: Sunday 17:00 to Friday 17:00 New York. What an instrument without hours gets. */
export const FX_WEEK: TradingHours = { timeZone: 'America/New_York', sessions: ['Sun 17:00-Fri 17:00'] };

/**
 * Sunday 18:00 to Friday 17:00 New York with a daily break from 17:00 to 18:00: metals, and what a
 * CFD without its own hours gets (the US futures day).
 */
export const DAILY_BREAK_WEEK: TradingHours = {
  timeZone: 'America/New_York',
  sessions: [
    'Sun 18:00-Mon 17:00',
    'Mon 18:00-Tue 17:00',
    'Tue 18:00-Wed 17:00',
    'Wed 18:00-Thu 17:00',
    'Thu 18:00-Fri 17:00',
  ],
};

/** The hours of an instrument that has none of its own: by its v20 type. */
export function defaultHours(type: string): TradingHours {
  return type === 'CURRENCY' ? FX_WEEK : DAILY_BREAK_WEEK;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MINUTE = 60_000;
const DAY = 86_400_000;
const WEEK_MIN = 7 * 24 * 60;
const SESSION = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) (\d\d):(\d\d)-(Sun|Mon|Tue|Wed|Thu|Fri|Sat) (\d\d):(\d\d)$/;

/**
 * The open/closed calendar of one instrument. `isOpen(t)` remembers the interval of the last answer
 * (open or closed, until the next boundary), so a clock that moves forward asks the time-zone
 * database about once per boundary, not per call: the simulator asks on every market order.
 */
export class MarketHours {
  readonly hours: TradingHours;
  readonly #zone: IANAZone;
  /** Sessions as [from, to) minutes of the local week (Sunday 00:00 = 0), sorted. */
  readonly #sessions: readonly (readonly [number, number])[];
  readonly #calendar: MarketCalendar;
  #weekly: MarketHours | undefined;
  #from = Infinity;
  #to = -Infinity;
  #open = true;

  /** `calendar`: the days the whole market closes (default the shipped calendar and the user's, `marketCalendar()`). */
  constructor(hours: TradingHours, where = 'tradingHours', calendar: MarketCalendar = marketCalendar()) {
    const zone = IANAZone.create(hours.timeZone);
    if (!zone.isValid)
      throw new TradingHoursError(
        `${where}.timeZone: '${hours.timeZone}' is not an IANA time zone (e.g. "America/New_York", "Europe/Berlin")`,
      );
    if (!Array.isArray(hours.sessions) || hours.sessions.length === 0)
      throw new TradingHoursError(`${where}.sessions: give at least one session like "Sun 17:00-Fri 17:00"`);
    const list = hours.sessions.map((s, i) => {
      const m = typeof s === 'string' ? SESSION.exec(s) : null;
      if (!m)
        throw new TradingHoursError(
          `${where}.sessions[${i}]: ${JSON.stringify(s)} is not a session like "Sun 17:00-Fri 17:00" (days Sun…Sat, 24-hour times)`,
        );
      const at = (d: string, h: string, mi: string): number =>
        DAYS.indexOf(d) * 1440 + Number(h) * 60 + Number(mi);
      const from = at(m[1]!, m[2]!, m[3]!);
      const to = at(m[4]!, m[5]!, m[6]!);
      if (Number(m[2]) > 23 || Number(m[5]) > 24 || Number(m[3]) > 59 || Number(m[6]) > 59 || !(to > from)) {
        throw new TradingHoursError(
          `${where}.sessions[${i}]: ${JSON.stringify(s)} must end after it starts within one week from Sunday 00:00`,
        );
      }
      return [from, to] as const;
    });
    list.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < list.length; i++) {
      if (list[i]![0] < list[i - 1]![1])
        throw new TradingHoursError(`${where}.sessions: sessions overlap (${hours.sessions.join(', ')})`);
    }
    this.hours = hours;
    this.#zone = zone;
    this.#sessions = list;
    this.#calendar = calendar;
  }

  /**
   * These hours without the calendar's closed days: the weekly rule alone, what a file's clock is
   * checked against (providers differ on holidays; a holiday says nothing about a clock).
   */
  get weekly(): MarketHours {
    if (this.#calendar.empty) return this;
    return (this.#weekly ??= new MarketHours(this.hours, 'tradingHours', MarketCalendar.NONE));
  }

  /** Whether the market is open at `t` (epoch ms): inside a session (start included, end excluded) and not on a closed day of the calendar. */
  isOpen(t: UnixMs): boolean {
    if (t >= this.#from && t < this.#to) return this.#open;
    const off = this.#zone.offset(t) * MINUTE;
    const local = t + off;
    const day = Math.floor(local / DAY);
    // 1970-01-01 was a Thursday: (day + 4) mod 7 is 0 on Sundays.
    const dow = (((day + 4) % 7) + 7) % 7;
    const weekStart = (day - dow) * DAY; // local ms of this week's Sunday 00:00
    const minute = (local - weekStart) / MINUTE;
    let open = false;
    let next = Infinity; // minute of the week (may pass WEEK_MIN) of the next boundary
    for (const [from, to] of this.#sessions) {
      if (minute < from) {
        next = from;
        break;
      }
      if (minute < to) {
        open = true;
        next = to;
        break;
      }
    }
    if (next === Infinity) next = this.#sessions[0]![0] + WEEK_MIN;
    let to = this.#toUtc(weekStart + next * MINUTE);
    const cal = this.#calendar;
    if (!cal.empty) {
      const closed = cal.closureAt(t);
      if (closed !== undefined) {
        open = false;
        to = closed.to;
      } else if (open) to = Math.min(to, cal.nextClosure(t));
    }
    this.#open = open;
    this.#from = t;
    this.#to = to;
    return open;
  }

  /** The UTC instant of a local wall-clock time (a boundary; the offset is looked up at the result). */
  #toUtc(local: number): UnixMs {
    let utc = local - this.#zone.offset(local) * MINUTE;
    const off = this.#zone.offset(utc) * MINUTE;
    if (local - off !== utc) utc = local - off;
    return utc;
  }
}

/**
 * A day the whole market closes: a trading day, from 17:00 New York the day before its date to
 * 17:00 on it (v20's trading day, the one a rollover ends). With `closes`, an early close: the
 * trading day opens as usual and the market closes at that New York time on its date, until the
 * day's end (17:00 New York) and the closures that follow it.
 */
export interface ClosedDay {
  /** What it is, for messages ("Christmas"). */
  readonly name: string;
  /** `MM-DD` every year, or `YYYY-MM-DD` that one year. */
  readonly date: string;
  /** Only when the date falls on this weekday (Sun … Sat): `Mon` for a holiday observed on the Monday after. */
  readonly weekday?: string;
  /** An early close: `HH:MM` New York (03:00 to 16:59) on the date; the day is open before it. */
  readonly closes?: string;
}

/** A bad market calendar: names the file, the entry and the expected form. */
export class MarketCalendarError extends Error {
  readonly code = 'MARKET_CALENDAR' as const;
  constructor(message: string) {
    super(message);
    this.name = 'MarketCalendarError';
  }
}

const DATE = /^(?:(\d{4})-)?(\d\d)-(\d\d)$/;
const CLOSES = /^(\d\d):(\d\d)$/;
const HOUR_MS = 3_600_000;

/**
 * The days the market closes, beyond its weekly hours: OANDA has no prices from 17:00 New York on
 * 24 December to 17:00 on 25 December, nor on 31 December to 1 January (its candles show these
 * holes, year after year), and none on the Monday after when the day falls on a Sunday. Some
 * years it also closed early on 24 and 31 December (and on 30 December 2016, the Friday before a
 * Saturday New Year's Eve): its last candle of the day opens at 13:00 New York, in 2012 to 2016;
 * in 2007 to 2010 and 2018 to 2019 those days trade to 17:00, thinly. Early closes are entries
 * with `closes` ("14:00"). fxflow ships them as data (data/market-calendar.json); a user adds their own days with
 * `--market-calendar <file>` (or FXFLOW_MARKET_CALENDAR, several files joined by the path
 * delimiter). Every instrument's `MarketHours` takes the calendar: the simulator halts a market
 * order decided on a closed day (MARKET_HALTED), the sandbox serves its prices untradeable, and
 * `fxflow data check` does not count a closed day as a hole.
 */
export class MarketCalendar {
  /** No closed days: the weekly hours alone. */
  static readonly NONE = new MarketCalendar([]);
  readonly days: readonly ClosedDay[];
  /** `MM-DD` → the weekday it must fall on (-1: any). */
  readonly #yearly = new Map<string, number[]>();
  readonly #dated = new Set<string>();

  /** Early closes: `MM-DD` or `YYYY-MM-DD` → the weekday it must fall on (-1: any) and the minutes before 17:00 New York it closes. */
  readonly #early = new Map<string, { weekday: number; before: number }[]>();

  constructor(days: readonly ClosedDay[]) {
    this.days = days;
    for (const d of days) {
      const m = DATE.exec(d.date)!;
      const wd = d.weekday === undefined ? -1 : DAYS.indexOf(d.weekday);
      if (d.closes !== undefined) {
        const c = CLOSES.exec(d.closes)!;
        const key = m[1] !== undefined ? `${m[1]}-${m[2]}-${m[3]}` : `${m[2]}-${m[3]}`;
        const list = this.#early.get(key) ?? [];
        list.push({ weekday: wd, before: 17 * 60 - (Number(c[1]) * 60 + Number(c[2])) });
        this.#early.set(key, list);
      } else if (m[1] !== undefined) this.#dated.add(`${m[1]}-${m[2]}-${m[3]}|${wd}`);
      else {
        const key = `${m[2]}-${m[3]}`;
        const list = this.#yearly.get(key) ?? [];
        list.push(wd);
        this.#yearly.set(key, list);
      }
    }
  }

  /** Reads a calendar file (`{"closedDays": [{"name", "date", "weekday"?}, …]}`); a bad one is refused naming the entry and field. */
  static fromJson(raw: unknown, where: string): MarketCalendar {
    const list = (raw as { closedDays?: unknown } | null)?.closedDays;
    if (typeof raw !== 'object' || raw === null || !Array.isArray(list)) {
      throw new MarketCalendarError(
        `${where}: must be an object with a list "closedDays", e.g. {"closedDays": [{"name": "Christmas", "date": "12-25"}]}`,
      );
    }
    const days = list.map((e: unknown, i): ClosedDay => {
      const at = `${where}: closedDays[${i}]`;
      const d = e as Record<string, unknown> | null;
      if (typeof d !== 'object' || d === null || typeof d.name !== 'string' || d.name === '')
        throw new MarketCalendarError(`${at}: give {"name": "…", "date": "MM-DD" or "YYYY-MM-DD"}`);
      const m = typeof d.date === 'string' ? DATE.exec(d.date) : null;
      const month = m ? Number(m[2]) : 0;
      const day = m ? Number(m[3]) : 0;
      if (!m || month < 1 || month > 12 || day < 1 || day > 31)
        throw new MarketCalendarError(
          `${at} (${d.name}): date ${JSON.stringify(d.date)} is not "MM-DD" (every year) or "YYYY-MM-DD" (that year)`,
        );
      if (d.weekday !== undefined && (typeof d.weekday !== 'string' || !DAYS.includes(d.weekday)))
        throw new MarketCalendarError(
          `${at} (${d.name}): weekday ${JSON.stringify(d.weekday)} is not one of ${DAYS.join(', ')}`,
        );
      if (d.closes !== undefined) {
        const c = typeof d.closes === 'string' ? CLOSES.exec(d.closes) : null;
        const minute = c ? Number(c[1]) * 60 + Number(c[2]) : -1;
        if (!c || Number(c[2]) > 59 || minute < 3 * 60 || minute >= 17 * 60)
          throw new MarketCalendarError(
            `${at} (${d.name}): closes ${JSON.stringify(d.closes)} is not an early close "HH:MM" New York time between 03:00 and 16:59 (e.g. "14:00")`,
          );
      }
      return {
        name: d.name,
        date: d.date as string,
        ...(d.weekday !== undefined ? { weekday: d.weekday as string } : {}),
        ...(d.closes !== undefined ? { closes: d.closes as string } : {}),
      };
    });
    return new MarketCalendar(days);
  }

  /** Reads calendar files (JSON) and joins their days. */
  static load(paths: readonly string[]): MarketCalendar {
    const days: ClosedDay[] = [];
    for (const path of paths) {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch (e) {
        throw new MarketCalendarError(`${path}: cannot read the market calendar: ${(e as Error).message}`);
      }
      days.push(...MarketCalendar.fromJson(raw, path).days);
    }
    return new MarketCalendar(days);
  }

  /** Whether there is any closed day at all. */
  get empty(): boolean {
    return this.days.length === 0;
  }

  /** Whether the trading day dated `year`-`month`-`day` (New York; `weekday` 0 Sunday … 6 Saturday) is closed all day. */
  closesDay(year: number, month: number, day: number, weekday: number): boolean {
    const mmdd = `${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
    const yearly = this.#yearly.get(mmdd);
    if (yearly !== undefined && (yearly.includes(-1) || yearly.includes(weekday))) return true;
    if (this.#dated.size === 0) return false;
    return this.#dated.has(`${year}-${mmdd}|-1`) || this.#dated.has(`${year}-${mmdd}|${weekday}`);
  }

  /**
   * The closure containing `t`, as [from, to) epoch ms, or undefined: a closed trading day, or the
   * end of a day that closes early (from its early close to its 17:00 New York end).
   */
  closureAt(t: UnixMs): { readonly from: UnixMs; readonly to: UnixMs; readonly name: string } | undefined {
    if (this.empty) return undefined;
    const to = nextRollover(t);
    const date = newYorkDate(to);
    const name = this.#closedName(date);
    if (name !== undefined) return { from: dayStart(to), to, name };
    const early = this.#earlyClose(date, to);
    if (early !== undefined && t >= early.at) return { from: early.at, to, name: early.name };
    return undefined;
  }

  /** The start of the first closure after `t` within `horizon` ms (Infinity when none): a closed trading day's start, or an early close. */
  nextClosure(t: UnixMs, horizon = 8 * DAY): UnixMs {
    if (this.empty) return Infinity;
    let end = nextRollover(t);
    const early = this.#earlyClose(newYorkDate(end), end);
    if (early !== undefined && early.at > t) return early.at;
    while (end - t <= horizon + DAY) {
      end = nextRollover(end);
      const date = newYorkDate(end);
      if (this.#closedName(date) !== undefined) return dayStart(end);
      const e = this.#earlyClose(date, end);
      if (e !== undefined) return e.at;
    }
    return Infinity;
  }

  /** The early close of the trading day dated `date` that ends at rollover `end`: its instant and name, or undefined. */
  #earlyClose(date: string, end: UnixMs): { readonly at: UnixMs; readonly name: string } | undefined {
    if (this.#early.size === 0) return undefined;
    const wd = new Date(`${date}T00:00:00Z`).getUTCDay();
    for (const key of [date, date.slice(5)]) {
      const hit = this.#early.get(key)?.find((e) => e.weekday === -1 || e.weekday === wd);
      if (hit === undefined) continue;
      const name = this.days.find(
        (c) =>
          c.closes !== undefined && c.date === key && (c.weekday === undefined || c.weekday === DAYS[wd]),
      )!.name;
      // The early close and 17:00 are on one New York date, after the 02:00 daylight-saving switch.
      return { at: end - hit.before * MINUTE, name };
    }
    return undefined;
  }

  /** The name of the closed day dated `date` (`YYYY-MM-DD`), or undefined when it is open. */
  #closedName(date: string): string | undefined {
    const y = Number(date.slice(0, 4));
    const m = Number(date.slice(5, 7));
    const d = Number(date.slice(8, 10));
    if (!this.closesDay(y, m, d, new Date(Date.UTC(y, m - 1, d)).getUTCDay())) return undefined;
    const wd = DAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()];
    return this.days.find(
      (c) =>
        c.closes === undefined &&
        (c.date === date || c.date === date.slice(5)) &&
        (c.weekday === undefined || c.weekday === wd),
    )?.name;
  }

  /**
   * The open time of the FX market in [a, b), in ms: the trading days of [a, b) less those dated
   * Saturday or Sunday and this calendar's closed days, each day that closes early to its close.
   */
  openFxMs(a: UnixMs, b: UnixMs): number {
    if (b <= a) return 0;
    let open = 0;
    forEachOpenTradingDay(
      a,
      b,
      (y, m, d, wd) => this.closesDay(y, m, d, wd),
      (start, end) => {
        const close = this.#early.size === 0 ? end : (this.#earlyClose(newYorkDate(end), end)?.at ?? end);
        open += Math.max(0, Math.min(close, b) - Math.max(start, a));
      },
    );
    return open;
  }
}

/** 17:00 New York the day before the trading day that ends at rollover `end`. */
function dayStart(end: UnixMs): UnixMs {
  // 20 hours before 17:00 New York is the evening of the day before, whatever daylight saving does.
  return rolloverOfDay(newYorkDate(end - 20 * HOUR_MS));
}

/** data/market-calendar.json: the closed days fxflow ships. */
export const SHIPPED_CALENDAR = packageFile('data/market-calendar.json');
/** The environment variable naming a user's own calendar files (joined by the path delimiter), added to the shipped one. */
export const CALENDAR_ENV = 'FXFLOW_MARKET_CALENDAR';

let defaultCalendar: { readonly key: string; readonly calendar: MarketCalendar } | undefined;

/** The calendar every instrument's hours take unless given another: the shipped days and the user's (FXFLOW_MARKET_CALENDAR). */
export function marketCalendar(): MarketCalendar {
  const key = process.env[CALENDAR_ENV] ?? '';
  if (defaultCalendar?.key !== key) {
    const extra = key.split(delimiter).filter((p) => p !== '');
    defaultCalendar = { key, calendar: MarketCalendar.load([SHIPPED_CALENDAR, ...extra]) };
  }
  return defaultCalendar.calendar;
}
