import { DateTime } from 'luxon';

/**
 * Time inside fxflow is epoch milliseconds held in a plain number (`UnixMs`).
 * On the v20 wire times are RFC 3339 strings with up to nanosecond precision, or UNIX seconds
 * with a fraction ("1502463871.639182000") when `Accept-Datetime-Format: UNIX` is used.
 * Sub-millisecond digits are dropped on parse; formatting always writes nine fraction digits
 * as OANDA does.
 */
export type UnixMs = number;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
const UNIX = /^\d{1,12}(?:\.\d{1,9})?$/;

let lastParsedText = '';
let lastParsedMs = Number.NaN;
/** The last time formatted (formatTime's cache, also read by parseTime: the simulator's transactions are parsed right after). */
let lastFormattedMs = Number.NaN;
let lastFormattedText = '';
/** formatTime's text parses back to its ms for years 1000 to 9999 (four digits, v20's form). */
const REVERSIBLE_FROM = Date.UTC(1000, 0, 1);
const REVERSIBLE_TO = Date.UTC(10_000, 0, 1);

/** Reads `n` decimal digits at `i`, or NaN when one is not a digit. */
function digits(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return Number.NaN;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Epoch ms of v20's own time form (`2017-03-09T13:22:13.832587780Z`, what the simulator writes),
 * with integer civil-date arithmetic (H. Hinnant's days-from-civil): about 10× cheaper than
 * `Date.UTC`, and the same result, out-of-range fields included (days, hours... carry over
 * linearly in both). NaN for anything else, and for years below 100, which `Date.UTC` reads as
 * 19xx: those take the general path.
 */
function v20Time(text: string): UnixMs {
  if (
    text.length !== 30 ||
    text.charCodeAt(29) !== 90 ||
    text.charCodeAt(19) !== 46 ||
    text.charCodeAt(10) !== 84
  )
    return Number.NaN;
  const y0 = digits(text, 0, 4);
  const m = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  const hh = digits(text, 11, 2);
  const mm = digits(text, 14, 2);
  const ss = digits(text, 17, 2);
  const ms = digits(text, 20, 3);
  // NaN in a field (a non-digit) fails every comparison below.
  if (!(
    y0 >= 100 &&
    m >= 1 &&
    m <= 12 &&
    d >= 0 &&
    hh >= 0 &&
    mm >= 0 &&
    ss >= 0 &&
    ms >= 0 &&
    digits(text, 23, 6) >= 0
  ))
    return Number.NaN;
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  const days = era * 146_097 + doe - 719_468;
  return days * 86_400_000 + hh * 3_600_000 + mm * 60_000 + ss * 1000 + ms;
}

/**
 * Parses an RFC 3339 or UNIX-seconds time; returns NaN when the text is neither. The last result
 * is cached: a batch's transactions share one time string, read by both ledgers and the portfolio.
 */
export function parseTime(text: string): UnixMs {
  if (text === lastParsedText) return lastParsedMs;
  // The text formatTime just wrote (usually the very same string object, compared by reference):
  // its ms, without reading the digits back.
  if (text === lastFormattedText && lastFormattedMs >= REVERSIBLE_FROM && lastFormattedMs < REVERSIBLE_TO)
    return lastFormattedMs;
  const fast = v20Time(text);
  if (!Number.isNaN(fast)) {
    lastParsedText = text;
    lastParsedMs = fast;
    return fast;
  }
  return parseGeneral(text);
}

function parseGeneral(text: string): UnixMs {
  // v20's own form with a year below 100 (see v20Time).
  if (
    text.length === 30 &&
    text.charCodeAt(29) === 90 &&
    text.charCodeAt(19) === 46 &&
    text.charCodeAt(10) === 84
  ) {
    const t = Date.UTC(
      digits(text, 0, 4),
      digits(text, 5, 2) - 1,
      digits(text, 8, 2),
      digits(text, 11, 2),
      digits(text, 14, 2),
      digits(text, 17, 2),
      digits(text, 20, 3),
    );
    if (!Number.isNaN(t) && digits(text, 23, 6) >= 0) return t;
  }
  const m = RFC3339.exec(text);
  if (m) {
    const frac = m[7] ?? '';
    const ms = frac.length === 0 ? 0 : Number((frac + '00').slice(0, 3));
    let t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms);
    const zone = m[8]!;
    if (zone !== 'Z') {
      const sign = zone[0] === '-' ? -1 : 1;
      t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
    }
    return t;
  }
  if (UNIX.test(text)) {
    const dot = text.indexOf('.');
    if (dot < 0) return Number(text) * 1000;
    const ms = Number((text.slice(dot + 1) + '00').slice(0, 3));
    return Number(text.slice(0, dot)) * 1000 + ms;
  }
  return Number.NaN;
}

/** The date part ("2017-08-11T") of the last day formatted, and that day (days since the epoch). */
let lastDay = Number.NaN;
let lastDayText = '';

/** "00" … "99", and "000" … "999": no string building per field. */
const PAD2 = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
const PAD3 = Array.from({ length: 1000 }, (_, i) => `${i}`.padStart(3, '0'));

/** Formats as OANDA does: `2017-08-11T15:04:31.639182000Z` (always nine fraction digits). */
export function formatTime(t: UnixMs): string {
  if (t === lastFormattedMs) return lastFormattedText;
  const ms = ((t % 86_400_000) + 86_400_000) % 86_400_000;
  const days = (t - ms) / 86_400_000;
  if (days !== lastDay) {
    lastDay = days;
    lastDayText = civilDate(days);
  }
  const hh = Math.floor(ms / 3_600_000);
  const mm = Math.floor((ms % 3_600_000) / 60_000);
  const ss = Math.floor((ms % 60_000) / 1000);
  lastFormattedMs = t;
  lastFormattedText = `${lastDayText}${PAD2[hh]}:${PAD2[mm]}:${PAD2[ss]}.${PAD3[ms % 1000]}000000Z`;
  return lastFormattedText;
}

/**
 * `Date.prototype.toISOString`'s form, `2017-08-11T15:04:31.639Z`, for a whole millisecond of the
 * years 0000-9999, without a Date object (the run folder's trades.csv writes two per closed trade).
 */
export function formatIsoMs(t: UnixMs): string {
  return `${formatTime(t).slice(0, 23)}Z`;
}

/** "YYYY-MM-DDT" of a day counted from the epoch (H. Hinnant's civil-from-days: no Date object). */
function civilDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${PAD2[m]}-${PAD2[d]}T`;
}

/** UNIX seconds with nine fraction digits, the `Accept-Datetime-Format: UNIX` form. */
export function formatUnixTime(t: UnixMs): string {
  const s = Math.floor(t / 1000);
  const ms = t - s * 1000;
  return `${s}.${String(ms).padStart(3, '0')}000000`;
}

const ZONELESS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;

/**
 * A time in an order request. v20 accepts an RFC 3339 time without a zone and reads it as
 * America/New_York local time (a recorded real response: gtdTime "2018-07-02T00:00:00" came back
 * as 2018-07-02T04:00:00Z). Everything else is as `parseTime`.
 */
/** A date, or an RFC 3339 time whose seconds (and fraction) may be left out. */
const USER_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|([+-])(\d{2}):(\d{2})))?$/;

/**
 * Why a time a user wrote (a flag, a config field) is not one, or undefined when it is: a date
 * ("2024-01-02", UTC midnight), an RFC 3339 time, or one without its seconds ("2024-01-02T00:00Z",
 * "2024-01-02T17:30+01:00"); each field in its range (no February 30th, no 27 o'clock: JavaScript's
 * Date would roll them over without a word), years 1900 to 2200.
 */
export function timeProblem(text: string): string | undefined {
  const m = USER_TIME.exec(text);
  if (!m)
    return 'must be a date like "2024-01-01" or an RFC 3339 time like "2024-01-01T17:00:00Z" (the seconds may be left out: "2024-01-01T17:00Z")';
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1900 || y > 2200) return `has year ${y}: the valid years are 1900 to 2200`;
  if (mo < 1 || mo > 12) return `has month ${m[2]}: months are 01 to 12`;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > days) return `has day ${m[3]}: ${y}-${m[2]} has days 01 to ${days}`;
  if (m[4] !== undefined) {
    if (Number(m[4]) > 23) return `has hour ${m[4]}: hours are 00 to 23`;
    if (Number(m[5]) > 59) return `has minute ${m[5]}: minutes are 00 to 59`;
    if (m[6] !== undefined && Number(m[6]) > 59) return `has second ${m[6]}: seconds are 00 to 59`;
    if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59))
      return `has offset ${m[8]}: offsets are -23:59 to +23:59`;
  }
  return undefined;
}

/**
 * A time as a user writes one (`timeProblem` says which), in ms; NaN for anything else. The one
 * parser of the times every command and config takes; v20's wire times are parseTime's.
 */
export function parseUserTime(text: string): UnixMs {
  if (timeProblem(text) !== undefined) return Number.NaN;
  const m = USER_TIME.exec(text)!;
  const ms = m[7] === undefined ? 0 : Number(`${m[7]}00`.slice(0, 3));
  const t = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
    ms,
  );
  const offset =
    m[9] === undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) * 60_000;
  return t - offset;
}

export function parseRequestTime(text: string): UnixMs {
  if (ZONELESS.test(text)) {
    const dt = DateTime.fromISO(text.slice(0, 23), { zone: 'America/New_York' });
    return dt.isValid ? dt.toMillis() : Number.NaN;
  }
  return parseTime(text);
}
