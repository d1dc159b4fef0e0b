import { DateTime } from 'luxon';
import type { CalendarEvent, CotEvent, SignalEvent, SpreadEvent } from '../../domain/events.ts';
import type { UnixMs } from '../../domain/time.ts';
import {
  toCalendarEvent,
  toSignalEvent,
  type AutochartistSignal,
  type LabsCalendarEntry,
  type LabsCotEntry,
} from '../v20/labs.ts';

/**
 * Labs items as recorded domain facts: each carries the time it became known (`knownAt`, UNIX ms)
 * beside its own times, an identity (`key`) and, for the calendar, a version (1 for the first
 * sighting, +1 each time its content changes, e.g. when the actual arrives).
 *
 * Identity rules (pure, property-tested in labs-items.test.ts):
 * - calendar: currency + title + release time. A later sighting with different content
 *   (actual, forecast, previous, market, impact, unit) is an update: a new version of the same entry.
 * - Autochartist signal: its id (and instrument). Seen again, it is not new, whatever changed.
 * - spreads: instrument + interval start; a point is recorded once.
 * - COT: instrument + report date; a report is recorded once.
 */
export type LabsKind = 'calendar' | 'signals' | 'spreads' | 'cot';
export const LABS_KINDS: readonly LabsKind[] = ['calendar', 'signals', 'spreads', 'cot'];

export interface CalendarItem {
  readonly kind: 'calendar';
  readonly knownAt: UnixMs;
  readonly key: string;
  readonly version: number;
  readonly entry: LabsCalendarEntry;
}
export interface SignalItem {
  readonly kind: 'signals';
  readonly knownAt: UnixMs;
  readonly key: string;
  readonly signal: AutochartistSignal;
}
export interface SpreadItem {
  readonly kind: 'spreads';
  readonly knownAt: UnixMs;
  readonly key: string;
  readonly instrument: string;
  /** UNIX seconds of the interval, and the min/avg/max spread in pips. */
  readonly t: number;
  readonly min: number;
  readonly avg: number;
  readonly max: number;
}
export interface CotItem {
  readonly kind: 'cot';
  readonly knownAt: UnixMs;
  readonly key: string;
  readonly instrument: string;
  readonly report: LabsCotEntry;
}
export type LabsItem = CalendarItem | SignalItem | SpreadItem | CotItem;

export const calendarKey = (e: LabsCalendarEntry): string => `${e.currency}|${e.timestamp}|${e.title}`;
export const signalKey = (s: AutochartistSignal): string => `${s.instrument}|${s.id}`;
export const spreadKey = (instrument: string, t: number): string => `${instrument}|${t}`;
export const cotKey = (instrument: string, date: number): string => `${instrument}|${date}`;

/** The content of a calendar entry that, when it changes, makes a new version. */
export function calendarContent(e: LabsCalendarEntry): string {
  const s = (v: string | undefined | null): string => (v === undefined || v === null ? '' : v);
  return `${e.impact}|${s(e.actual)}|${s(e.forecast)}|${s(e.previous)}|${s(e.market)}|${s(e.unit)}`;
}

/**
 * What has been recorded (or delivered) so far, by identity: decides whether a sighting is new,
 * an update, or already known. Memory is bounded by `forget(before)`: identities whose own time
 * (release, pattern end, interval, report date) is older than `before` are dropped; the labs
 * windows never return them again once older than the longest period polled.
 */
export class LabsIdentity {
  readonly #calendar = new Map<string, { version: number; content: string; at: number }>();
  readonly #seen = new Map<string, number>();
  #newest = -Infinity;

  /** The latest own time (UNIX ms) of any identity held: cut-offs for forget() are taken from it, not a local clock. */
  get newest(): number {
    return this.#newest;
  }

  /** Registers an item already recorded (on resume): later sightings of it are not new. */
  remember(item: LabsItem): void {
    if (item.kind === 'calendar') {
      const prev = this.#calendar.get(item.key);
      this.#newest = Math.max(this.#newest, item.entry.timestamp * 1000);
      if (!prev || item.version >= prev.version)
        this.#calendar.set(item.key, {
          version: item.version,
          content: calendarContent(item.entry),
          at: item.entry.timestamp * 1000,
        });
    } else {
      this.#seen.set(`${item.kind}|${item.key}`, ownTime(item));
      this.#newest = Math.max(this.#newest, ownTime(item));
    }
  }

  /** A calendar entry seen at `knownAt`: a new item (first version or an update), or undefined when nothing changed. */
  calendar(e: LabsCalendarEntry, knownAt: UnixMs): CalendarItem | undefined {
    const key = calendarKey(e);
    const content = calendarContent(e);
    const prev = this.#calendar.get(key);
    if (prev && prev.content === content) return undefined;
    const version = prev ? prev.version + 1 : 1;
    this.#calendar.set(key, { version, content, at: e.timestamp * 1000 });
    this.#newest = Math.max(this.#newest, e.timestamp * 1000);
    return { kind: 'calendar', knownAt, key, version, entry: e };
  }

  /** An Autochartist signal seen at `knownAt`: a new item the first time, undefined after. */
  signal(s: AutochartistSignal, knownAt: UnixMs): SignalItem | undefined {
    const key = signalKey(s);
    if (this.#seen.has(`signals|${key}`)) return undefined;
    this.#seen.set(`signals|${key}`, s.data.patternendtime * 1000);
    this.#newest = Math.max(this.#newest, s.data.patternendtime * 1000);
    return { kind: 'signals', knownAt, key, signal: s };
  }

  spread(
    instrument: string,
    t: number,
    min: number,
    avg: number,
    max: number,
    knownAt: UnixMs,
  ): SpreadItem | undefined {
    const key = spreadKey(instrument, t);
    if (this.#seen.has(`spreads|${key}`)) return undefined;
    this.#seen.set(`spreads|${key}`, t * 1000);
    this.#newest = Math.max(this.#newest, t * 1000);
    return { kind: 'spreads', knownAt, key, instrument, t, min, avg, max };
  }

  cot(instrument: string, report: LabsCotEntry, knownAt: UnixMs): CotItem | undefined {
    const key = cotKey(instrument, report.date);
    if (this.#seen.has(`cot|${key}`)) return undefined;
    this.#seen.set(`cot|${key}`, report.date * 1000);
    this.#newest = Math.max(this.#newest, report.date * 1000);
    return { kind: 'cot', knownAt, key, instrument, report };
  }

  /** Drops identities whose own time is before `before` (UNIX ms). */
  forget(before: UnixMs): void {
    for (const [k, v] of this.#calendar) if (v.at < before) this.#calendar.delete(k);
    for (const [k, at] of this.#seen) if (at < before) this.#seen.delete(k);
  }

  get size(): number {
    return this.#calendar.size + this.#seen.size;
  }
}

/** The item's own time (UNIX ms): release, pattern end, interval start, report date. */
export function ownTime(item: LabsItem): UnixMs {
  switch (item.kind) {
    case 'calendar':
      return item.entry.timestamp * 1000;
    case 'signals':
      return item.signal.data.patternendtime * 1000;
    case 'spreads':
      return item.t * 1000;
    case 'cot':
      return item.report.date * 1000;
  }
}

/**
 * When the CFTC publishes the Commitments of Traders report whose as-of date is `reportDateMs`:
 * 15:30 New York on the first Friday after the report's day in New York (the report of Tuesday is
 * out on Friday; OANDA dates it Tuesday 00:00 New York, the sandbox Tuesday 21:00 UTC, the same
 * New York day). New York's own clock, so the UTC hour follows its daylight saving (19:30 or 20:30
 * UTC). A release the CFTC moves for a US holiday (to the Monday after) is not modelled: it is
 * known later than this, never earlier.
 */
export function cotPublishedAt(reportDateMs: UnixMs): UnixMs {
  const day = DateTime.fromMillis(reportDateMs, { zone: 'America/New_York' }).startOf('day');
  const ahead = (5 - day.weekday + 7) % 7 || 7; // luxon: Monday 1 … Friday 5 … Sunday 7
  return day.plus({ days: ahead }).set({ hour: 15, minute: 30 }).toMillis();
}

/**
 * When a strategy may see an item: never before it became known, and never before it could be
 * known when what it says could not exist earlier (an actual value before its release; a pattern
 * before it completed; a spread before its interval's time, which v20 gives as the interval's end;
 * a COT report before the CFTC publishes it, `cotPublishedAt`, three days after its as-of date).
 * Items recorded live satisfy this by construction; a hand-made, clock-skewed or generated
 * recording, or one stamped with the items' own dates, is held back to the later of the two.
 */
export function visibleAt(item: LabsItem): UnixMs {
  switch (item.kind) {
    case 'calendar': {
      const a = item.entry.actual;
      return a !== undefined && a !== null && a !== ''
        ? Math.max(item.knownAt, item.entry.timestamp * 1000)
        : item.knownAt;
    }
    case 'signals':
      return Math.max(item.knownAt, item.signal.data.patternendtime * 1000);
    case 'spreads':
      return Math.max(item.knownAt, item.t * 1000);
    case 'cot':
      return Math.max(item.knownAt, cotPublishedAt(item.report.date * 1000));
  }
}

/** A calendar item as the engine event a strategy sees: `at` when it became visible, `releaseAt` its release. */
export function calendarItemEvent(item: CalendarItem): CalendarEvent {
  const e = toCalendarEvent(item.entry);
  return { ...e, at: visibleAt(item), releaseAt: e.at, ...(item.version > 1 ? { update: true } : {}) };
}

/** A signal item as the engine event a strategy sees: `at` when first seen; `data.patternEndAt` the pattern's end. */
export function signalItemEvent(item: SignalItem): SignalEvent {
  const e = toSignalEvent(item.signal);
  return { ...e, at: visibleAt(item), data: { ...e.data, patternEndAt: e.at } };
}

/** A spread item as the engine event a strategy sees: `at` when it became visible, `intervalAt` the interval's start. */
export function spreadItemEvent(item: SpreadItem): SpreadEvent {
  return {
    kind: 'spread',
    at: visibleAt(item),
    instrument: item.instrument,
    intervalAt: item.t * 1000,
    min: item.min,
    avg: item.avg,
    max: item.max,
  };
}

/** A COT item as the engine event a strategy sees: `at` when it became visible, `reportAt` the report's date; counts as numbers. */
export function cotItemEvent(item: CotItem): CotEvent {
  const r = item.report;
  return {
    kind: 'cot',
    at: visibleAt(item),
    instrument: item.instrument,
    reportAt: r.date * 1000,
    openInterest: Number(r.oi),
    nonCommercialLong: Number(r.ncl),
    nonCommercialShort: Number(r.ncs),
    price: Number(r.price),
    unit: r.unit,
  };
}
