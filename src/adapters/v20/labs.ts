import type { CalendarEvent, SignalEvent } from '../../domain/events.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { Labs } from '../../ports/labs.ts';
import { V20Error } from './errors.ts';
import type { V20Http } from './http.ts';

// ---- wire types (the recorded /labs/v1 responses) ----

/** One economic calendar entry (`GET /labs/v1/calendar`). Numbers as the strings OANDA sends. */
export interface LabsCalendarEntry {
  readonly title: string;
  /** UNIX seconds of the release. */
  readonly timestamp: number;
  readonly currency: string;
  /** 1 (low) to 3 (high). */
  readonly impact: number;
  readonly region?: string;
  readonly unit?: string;
  readonly actual?: string;
  readonly forecast?: string;
  readonly previous?: string;
  readonly market?: string;
}

/** `[UNIX seconds, spread in pips]`. */
export type LabsSpreadPoint = readonly [number, number];

/** `GET /labs/v1/spreads`: minimum, average and maximum spread per interval. */
export interface LabsSpreads {
  readonly max: readonly LabsSpreadPoint[];
  readonly avg: readonly LabsSpreadPoint[];
  readonly min: readonly LabsSpreadPoint[];
}

/** One weekly Commitments of Traders report (`GET /labs/v1/commitments_of_traders`). */
export interface LabsCotEntry {
  /** Open interest. */
  readonly oi: string;
  readonly price: string;
  /** Non-commercial short. */
  readonly ncs: string;
  /** Non-commercial long. */
  readonly ncl: string;
  /** UNIX seconds. */
  readonly date: number;
  readonly unit: string;
}

export type LabsCot = Readonly<Record<string, readonly LabsCotEntry[]>>;

export interface AutochartistStats {
  readonly total: number;
  readonly percent: number;
  readonly correct: number;
}

/** One Autochartist signal: a chart pattern (lines + prediction box) or a key level (a price). */
export interface AutochartistSignal {
  readonly id: number;
  readonly instrument: string;
  readonly type: 'chartpattern' | 'keylevel';
  readonly meta: {
    /** 1 bullish, -1 bearish. */
    readonly direction: number;
    /** Percent. */
    readonly probability: number;
    readonly pattern: string;
    /** Minutes per bar of the chart the pattern was found on. */
    readonly interval: number;
    readonly completed: number;
    readonly length?: number;
    readonly trendtype?: string;
    readonly scores?: Readonly<Record<string, number>>;
    readonly historicalstats?: Readonly<Record<string, AutochartistStats>>;
  };
  readonly data: {
    readonly patternendtime: number;
    readonly price?: number;
    readonly points?: Readonly<
      Record<string, { readonly x0: number; readonly x1: number; readonly y0: number; readonly y1: number }>
    >;
    readonly prediction?: {
      readonly timefrom: number;
      readonly timeto: number;
      readonly pricelow: number;
      readonly pricehigh: number;
    };
  };
}

export interface AutochartistResponse {
  readonly provider: string;
  readonly signals: readonly AutochartistSignal[];
}

// ---- the period adjustment rule ----

/** Periods (seconds) the calendar and spreads endpoints accept: 1 h, 12 h, 1 d, 1 w, 30 d, 90 d, 180 d, 365 d. */
export const LABS_PERIODS = [3600, 43200, 86400, 604800, 2592000, 7776000, 15552000, 31536000] as const;
/** Periods (seconds) the Autochartist endpoint accepts: 4 h, 8 h, 12 h, 1 d, 1 w. */
export const AUTOCHARTIST_PERIODS = [14400, 28800, 43200, 86400, 604800] as const;

/**
 * OANDA's labs rule: a period that is not in the allowed list "is automatically adjusted to the
 * nearest valid value". Nearest by absolute difference in seconds; a value exactly halfway between
 * two allowed periods goes to the larger (more data rather than less); below the smallest gives
 * the smallest, above the largest the largest. The sandbox applies the same rule, and the client
 * sends the adjusted value so that what it asked is what it gets.
 */
export function adjustPeriod(seconds: number, allowed: readonly number[] = LABS_PERIODS): number {
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new V20Error({
      code: 'V20_UNSUPPORTED',
      method: 'GET',
      path: '/labs/v1',
      message: `labs period ${seconds} must be a positive number of seconds (allowed: ${allowed.join(', ')})`,
    });
  }
  let best = allowed[0]!;
  for (const p of allowed) {
    const d = Math.abs(p - seconds);
    const bd = Math.abs(best - seconds);
    if (d < bd || (d === bd && p > best)) best = p;
  }
  return best;
}

/** The smallest allowed period that covers `seconds` (the largest when none does): for "everything since T". */
export function coveringPeriod(seconds: number, allowed: readonly number[] = LABS_PERIODS): number {
  for (const p of allowed) if (p >= seconds) return p;
  return allowed[allowed.length - 1]!;
}

// ---- validation of the wire shapes ----

const parseError = (path: string, field: string, what: string): V20Error =>
  new V20Error({
    code: 'V20_PARSE',
    method: 'GET',
    path,
    message: `GET ${path}: ${field} must be ${what}; the response is not a labs ${path.split('/').pop()} document`,
  });

function num(path: string, field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw parseError(path, field, 'a number');
  return v;
}
function str(path: string, field: string, v: unknown): string {
  if (typeof v !== 'string') throw parseError(path, field, 'a string');
  return v;
}
function obj(path: string, field: string, v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw parseError(path, field, 'an object');
  return v as Record<string, unknown>;
}
function arr(path: string, field: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) throw parseError(path, field, 'an array');
  return v;
}

/** Checks a calendar response (an array of entries). */
export function parseCalendar(body: unknown, path = '/labs/v1/calendar'): LabsCalendarEntry[] {
  return arr(path, '(body)', body).map((e, i) => {
    const o = obj(path, `[${i}]`, e);
    str(path, `[${i}].title`, o.title);
    num(path, `[${i}].timestamp`, o.timestamp);
    str(path, `[${i}].currency`, o.currency);
    num(path, `[${i}].impact`, o.impact);
    for (const k of ['actual', 'forecast', 'previous', 'market', 'unit', 'region'])
      if (o[k] !== undefined && o[k] !== null) str(path, `[${i}].${k}`, o[k]);
    return o as unknown as LabsCalendarEntry;
  });
}

/** Checks a spreads response. */
export function parseSpreads(body: unknown, path = '/labs/v1/spreads'): LabsSpreads {
  const o = obj(path, '(body)', body);
  for (const k of ['max', 'avg', 'min']) {
    arr(path, k, o[k]).forEach((p, i) => {
      const t = arr(path, `${k}[${i}]`, p);
      num(path, `${k}[${i}][0]`, t[0]);
      num(path, `${k}[${i}][1]`, t[1]);
    });
  }
  return o as unknown as LabsSpreads;
}

/** Checks a commitments-of-traders response (`{ INSTRUMENT: [reports] }`). */
export function parseCot(body: unknown, path = '/labs/v1/commitments_of_traders'): LabsCot {
  const o = obj(path, '(body)', body);
  for (const [inst, list] of Object.entries(o)) {
    arr(path, inst, list).forEach((e, i) => {
      const r = obj(path, `${inst}[${i}]`, e);
      for (const k of ['oi', 'price', 'ncs', 'ncl', 'unit']) str(path, `${inst}[${i}].${k}`, r[k]);
      num(path, `${inst}[${i}].date`, r.date);
    });
  }
  return o as unknown as LabsCot;
}

/** Checks an Autochartist response. */
export function parseAutochartist(
  body: unknown,
  path = '/labs/v1/signal/autochartist',
): AutochartistResponse {
  const o = obj(path, '(body)', body);
  arr(path, 'signals', o.signals).forEach((s, i) => {
    const r = obj(path, `signals[${i}]`, s);
    num(path, `signals[${i}].id`, r.id);
    str(path, `signals[${i}].instrument`, r.instrument);
    if (r.type !== 'chartpattern' && r.type !== 'keylevel')
      throw parseError(path, `signals[${i}].type`, '"chartpattern" or "keylevel"');
    const m = obj(path, `signals[${i}].meta`, r.meta);
    num(path, `signals[${i}].meta.direction`, m.direction);
    num(path, `signals[${i}].meta.probability`, m.probability);
    str(path, `signals[${i}].meta.pattern`, m.pattern);
    const d = obj(path, `signals[${i}].data`, r.data);
    num(path, `signals[${i}].data.patternendtime`, d.patternendtime);
    if (d.prediction !== undefined) {
      const p = obj(path, `signals[${i}].data.prediction`, d.prediction);
      for (const k of ['timefrom', 'timeto', 'pricelow', 'pricehigh'])
        num(path, `signals[${i}].data.prediction.${k}`, p[k]);
    }
  });
  return {
    provider: typeof o.provider === 'string' ? o.provider : 'autochartist',
    signals: o.signals as AutochartistSignal[],
  };
}

// ---- conversion to engine events ----

/** A calendar entry as an engine event at its release time. Empty strings become absent fields. */
export function toCalendarEvent(e: LabsCalendarEntry): CalendarEvent {
  const opt = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);
  const actual = opt(e.actual);
  const forecast = opt(e.forecast);
  const previous = opt(e.previous);
  return {
    kind: 'calendar',
    at: e.timestamp * 1000,
    currency: e.currency,
    title: e.title,
    impact: e.impact,
    ...(actual !== undefined ? { actual } : {}),
    ...(forecast !== undefined ? { forecast } : {}),
    ...(previous !== undefined ? { previous } : {}),
  };
}

/**
 * An Autochartist signal as an engine event. It happens when the pattern was complete
 * (`patternendtime`), which is when Autochartist could know it; the direction is the sign of
 * `meta.direction`; the horizon runs to the end of the prediction box (`timeto`), 0 when none;
 * strength is the probability as a fraction. `data` keeps the pattern, its levels and the box.
 */
export function toSignalEvent(s: AutochartistSignal): SignalEvent {
  const end = s.data.patternendtime;
  const to = s.data.prediction?.timeto;
  return {
    kind: 'signal',
    at: end * 1000,
    instrument: s.instrument,
    source: 'autochartist',
    direction: s.meta.direction > 0 ? 'up' : s.meta.direction < 0 ? 'down' : 'flat',
    horizonMs: to !== undefined && to > end ? (to - end) * 1000 : 0,
    strength: s.meta.probability / 100,
    data: {
      id: s.id,
      type: s.type,
      pattern: s.meta.pattern,
      interval: s.meta.interval,
      completed: s.meta.completed,
      ...(s.data.price !== undefined ? { price: s.data.price } : {}),
      ...(s.data.prediction !== undefined ? { prediction: s.data.prediction } : {}),
    },
  };
}

// ---- the client ----

const unsupported = (path: string, what: string): V20Error =>
  new V20Error({
    code: 'V20_UNSUPPORTED',
    method: 'GET',
    path,
    message: `${path} (${what}) was removed by OANDA and is not served any more; no request was sent. Use the v20 instrument order book and position book (GET /v3/instruments/{instrument}/orderBook and /positionBook) instead`,
  });

/**
 * OANDA's labs endpoints (`/labs/v1`), typed, with the period rule applied, and the `Labs` port
 * for the engine (calendar releases and Autochartist signals as events).
 *
 * Labs windows always end "now" (the server's clock): the port asks for the smallest allowed
 * period that reaches back to `from` and keeps the events in `[from, to)`, so data older than a
 * year (calendar) or a week (Autochartist) cannot be had live.
 */
export class V20Labs implements Labs {
  constructor(
    private readonly http: V20Http,
    private readonly now: () => UnixMs = Date.now,
  ) {}

  #serverTime: UnixMs | undefined;

  async #get(path: string, query: Record<string, string | number | undefined>): Promise<unknown> {
    const r = await this.http.request({ method: 'GET', path, query });
    const date = r.headers.date;
    const t = typeof date === 'string' ? Date.parse(date) : Number.NaN;
    if (Number.isFinite(t)) this.#serverTime = t as UnixMs;
    return r.body;
  }

  /**
   * The server's time (its Date header, to the second) when it sent the latest labs answer:
   * OANDA's clock, or a sandbox's (which may run faster than the wall clock, or stand still).
   * Undefined until an answer carried one.
   */
  serverTime(): UnixMs | undefined {
    return this.#serverTime;
  }

  /** Economic calendar for the currencies of `instrument` (all when absent) over the last `period` seconds (adjusted). */
  async calendarEntries(instrument: string | undefined, period: number): Promise<LabsCalendarEntry[]> {
    return parseCalendar(await this.#get('/labs/v1/calendar', { instrument, period: adjustPeriod(period) }));
  }

  /** Spread history (pips) of `instrument` over the last `period` seconds (adjusted). */
  async spreads(instrument: string, period: number): Promise<LabsSpreads> {
    return parseSpreads(await this.#get('/labs/v1/spreads', { instrument, period: adjustPeriod(period) }));
  }

  /** The weekly CFTC Commitments of Traders reports of `instrument`. */
  async commitmentsOfTraders(instrument: string): Promise<readonly LabsCotEntry[]> {
    const cot = parseCot(await this.#get('/labs/v1/commitments_of_traders', { instrument }));
    return cot[instrument] ?? [];
  }

  /** Autochartist signals, optionally for one instrument, over the last `period` seconds (adjusted), of one `type`. */
  async autochartist(
    o: { instrument?: string; period?: number; type?: 'chartpattern' | 'keylevel' } = {},
  ): Promise<AutochartistResponse> {
    return parseAutochartist(
      await this.#get('/labs/v1/signal/autochartist', {
        instrument: o.instrument,
        period: o.period === undefined ? undefined : adjustPeriod(o.period, AUTOCHARTIST_PERIODS),
        type: o.type,
      }),
    );
  }

  /** Removed by OANDA: throws V20_UNSUPPORTED without a request. */
  historicalPositionRatios(_instrument?: string, _period?: number): Promise<never> {
    return Promise.reject(unsupported('/labs/v1/historical_position_ratios', 'historical position ratios'));
  }

  /** Removed by OANDA: throws V20_UNSUPPORTED without a request. */
  orderbook(_instrument?: string, _period?: number): Promise<never> {
    return Promise.reject(unsupported('/labs/v1/orderbook_data', 'order book'));
  }

  calendar(req: {
    readonly instrument?: string;
    readonly from: UnixMs;
    readonly to: UnixMs;
  }): AsyncIterable<readonly CalendarEvent[]> {
    const self = this;
    return (async function* () {
      const period = coveringPeriod(Math.ceil((self.now() - req.from) / 1000));
      const entries = await self.calendarEntries(req.instrument, period);
      const events = entries.map(toCalendarEvent).filter((e) => e.at >= req.from && e.at < req.to);
      events.sort((a, b) => a.at - b.at);
      if (events.length > 0) yield events;
    })();
  }

  signals(req: {
    readonly instrument: string;
    readonly from: UnixMs;
    readonly to: UnixMs;
  }): AsyncIterable<readonly SignalEvent[]> {
    const self = this;
    return (async function* () {
      const period = coveringPeriod(Math.ceil((self.now() - req.from) / 1000), AUTOCHARTIST_PERIODS);
      const res = await self.autochartist({ instrument: req.instrument, period });
      // The endpoint has been seen to answer with other instruments' signals: keep the requested one.
      const events = res.signals
        .filter((s) => s.instrument === req.instrument)
        .map(toSignalEvent)
        .filter((e) => e.at >= req.from && e.at < req.to);
      events.sort((a, b) => a.at - b.at);
      if (events.length > 0) yield events;
    })();
  }
}
