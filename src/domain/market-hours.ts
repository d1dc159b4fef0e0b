import { IANAZone } from 'luxon';
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
 * trade a day-time session in their exchange's zone. Holidays are not modelled.
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
  sessions: ['Sun 18:00-Mon 17:00', 'Mon 18:00-Tue 17:00', 'Tue 18:00-Wed 17:00', 'Wed 18:00-Thu 17:00', 'Thu 18:00-Fri 17:00'],
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
  #from = Infinity;
  #to = -Infinity;
  #open = true;

  constructor(hours: TradingHours, where = 'tradingHours') {
    const zone = IANAZone.create(hours.timeZone);
    if (!zone.isValid) throw new TradingHoursError(`${where}.timeZone: '${hours.timeZone}' is not an IANA time zone (e.g. "America/New_York", "Europe/Berlin")`);
    if (!Array.isArray(hours.sessions) || hours.sessions.length === 0) throw new TradingHoursError(`${where}.sessions: give at least one session like "Sun 17:00-Fri 17:00"`);
    const list = hours.sessions.map((s, i) => {
      const m = typeof s === 'string' ? SESSION.exec(s) : null;
      if (!m) throw new TradingHoursError(`${where}.sessions[${i}]: ${JSON.stringify(s)} is not a session like "Sun 17:00-Fri 17:00" (days Sun…Sat, 24-hour times)`);
      const at = (d: string, h: string, mi: string): number => DAYS.indexOf(d) * 1440 + Number(h) * 60 + Number(mi);
      const from = at(m[1]!, m[2]!, m[3]!);
      const to = at(m[4]!, m[5]!, m[6]!);
      if (Number(m[2]) > 23 || Number(m[5]) > 24 || Number(m[3]) > 59 || Number(m[6]) > 59 || !(to > from)) {
        throw new TradingHoursError(`${where}.sessions[${i}]: ${JSON.stringify(s)} must end after it starts within one week from Sunday 00:00`);
      }
      return [from, to] as const;
    });
    list.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < list.length; i++) {
      if (list[i]![0] < list[i - 1]![1]) throw new TradingHoursError(`${where}.sessions: sessions overlap (${hours.sessions.join(', ')})`);
    }
    this.hours = hours;
    this.#zone = zone;
    this.#sessions = list;
  }

  /** Whether the market is open at `t` (epoch ms): inside a session, start included, end excluded. */
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
    this.#open = open;
    this.#from = t;
    this.#to = this.#toUtc(weekStart + next * MINUTE);
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
