import { IANAZone } from 'luxon';

/**
 * The clock a data file's times are written in, turned into UTC. A file's times without an offset
 * (HistData's `20190607 083000`, Dukascopy's and MetaTrader's local times, `2024-03-08 21:00:00`)
 * are read as a wall clock: `localMs` below is that wall clock read as if it were UTC (Date.UTC of
 * its fields), and `toUtc` gives the instant.
 *
 * Three kinds of clock, named as `--timezone` takes them:
 * - a fixed offset `±HH:MM` (`-05:00`; `UTC` is `+00:00`);
 * - an IANA zone (`Europe/Berlin`), daylight saving time included;
 * - an IANA zone shifted by a fixed offset (`Europe/London-05:00`: London's clock five hours back,
 *   i.e. UTC−5 in winter and UTC−4 during European summer time, as HistData's 2019 EURUSD).
 *
 * Around a change of offset: a wall-clock time that occurs twice (the hour after clocks fall back)
 * is resolved by file order, the first instant after the previous row's (so a file that lists the
 * repeated hour twice reads as two hours); a time that does not occur (the hour clocks spring
 * forward over) is read with the offset before the change, as luxon does, and the hole itself is
 * simply an hour without rows.
 */
export interface FileClock {
  /** As given (`Europe/Berlin`, `-05:00`, `Europe/London-05:00`). */
  readonly name: string;
  /** The instant (epoch ms) of a wall-clock time read as if UTC; file order resolves a repeated hour. */
  toUtc(localMs: number): number;
  /** The clock's offset from UTC at an instant, in ms (UTC−5 is −18,000,000). */
  offsetAt(utcMs: number): number;
}

const HOUR = 3_600_000;
const OFFSET = /^(?:UTC|GMT)?([+-−])(\d{1,2})(?::?(\d{2}))?$/;

/** A `±HH:MM` offset in ms, or undefined when `s` is not one. */
function parseOffset(s: string): number | undefined {
  const m = OFFSET.exec(s);
  if (!m) return undefined;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? 0);
  if (h > 14 || mi > 59) return undefined;
  return (m[1] === '+' ? 1 : -1) * (h * HOUR + mi * 60_000);
}

/** An offset in ms as `UTC−05:00` (`UTC+00:00` for zero). */
export function formatOffset(ms: number): string {
  const sign = ms < 0 ? '−' : '+';
  const a = Math.abs(ms);
  const h = Math.floor(a / HOUR);
  const mi = Math.round((a % HOUR) / 60_000);
  return `UTC${sign}${String(h).padStart(2, '0')}:${String(mi).padStart(2, '0')}`;
}

/** An offset in ms as `--timezone` takes it: `-05:00`, `+01:00`. */
export function offsetFlag(ms: number): string {
  return formatOffset(ms).slice(3).replace('−', '-');
}

/** Thrown for a `--timezone` that names no clock: says what forms are taken. */
export class ClockSpecError extends Error {
  readonly code = 'USAGE' as const;
}

/**
 * The clock `spec` names: `UTC`, `±HH:MM`, an IANA zone, or an IANA zone followed by `±HH:MM`.
 * Throws a ClockSpecError saying what is taken.
 */
export function parseClock(spec: string): FileClock {
  const s = spec.trim();
  if (s === 'UTC' || s === 'Z' || s === 'GMT') return fixedClock(s, 0);
  const fixed = parseOffset(s);
  if (fixed !== undefined) return fixedClock(s, fixed);
  // A zone, then optionally its shift as ±HH:MM (Etc/GMT+5 stays a zone name).
  const m = /^([A-Za-z].*?)([+-−]\d{2}:\d{2})?$/.exec(s);
  const zoneName = m?.[1];
  const shift = m?.[2] !== undefined ? parseOffset(m[2]) : 0;
  const zone = zoneName !== undefined ? IANAZone.create(zoneName) : undefined;
  if (!zone || !zone.isValid || shift === undefined) {
    throw new ClockSpecError(
      `--timezone '${spec}' is not a clock fxflow reads: give an IANA zone (Europe/Berlin, America/New_York), a fixed offset (-05:00, +02:00, UTC), or a zone shifted by an offset (Europe/London-05:00: London's clock 5 hours back)`,
    );
  }
  return new ZoneClock(s, zone, shift);
}

function fixedClock(name: string, offset: number): FileClock {
  return { name, toUtc: (local) => local - offset, offsetAt: () => offset };
}

/** An IANA zone (plus a fixed shift), its offsets looked up once per quarter hour and remembered. */
class ZoneClock implements FileClock {
  readonly #zone: IANAZone;
  readonly #shift: number;
  readonly #cache = new Map<number, number>();
  #last = -Infinity;

  constructor(
    readonly name: string,
    zone: IANAZone,
    shift: number,
  ) {
    this.#zone = zone;
    this.#shift = shift;
  }

  offsetAt(utc: number): number {
    // Offsets change on whole quarter hours in every zone in use: one lookup per quarter hour.
    const k = Math.floor(utc / 900_000);
    let o = this.#cache.get(k);
    if (o === undefined) {
      o = this.#zone.offset(k * 900_000) * 60_000 + this.#shift;
      if (this.#cache.size > 100_000) this.#cache.clear();
      this.#cache.set(k, o);
    }
    return o;
  }

  toUtc(local: number): number {
    // The instant lies within 15 hours of the wall clock read as UTC; a zone changes its offset at
    // most once in that window, so the offsets at both ends are the only candidates.
    const before = this.offsetAt(local - 15 * HOUR);
    const after = this.offsetAt(local + 15 * HOUR);
    const a = local - before;
    const b = local - after;
    const aValid = this.offsetAt(a) === before;
    const bValid = before !== after && this.offsetAt(b) === after;
    let t: number;
    if (aValid && bValid) {
      // The repeated hour: the first of the two instants after the previous row's, in file order.
      const lo = Math.min(a, b);
      const hi = Math.max(a, b);
      t = lo > this.#last ? lo : hi;
    } else if (aValid) t = a;
    else if (bValid) t = b;
    else t = a; // the hour skipped when clocks spring forward: read with the offset before
    this.#last = t;
    return t;
  }
}
