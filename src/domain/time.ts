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

/** Parses an RFC 3339 or UNIX-seconds time; returns NaN when the text is neither. */
export function parseTime(text: string): UnixMs {
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

/** Formats as OANDA does: `2017-08-11T15:04:31.639182000Z` (always nine fraction digits). */
export function formatTime(t: UnixMs): string {
  const iso = new Date(t).toISOString(); // 2017-08-11T15:04:31.639Z
  return `${iso.slice(0, 23)}000000Z`;
}

/** UNIX seconds with nine fraction digits, the `Accept-Datetime-Format: UNIX` form. */
export function formatUnixTime(t: UnixMs): string {
  const s = Math.floor(t / 1000);
  const ms = t - s * 1000;
  return `${s}.${String(ms).padStart(3, '0')}000000`;
}
