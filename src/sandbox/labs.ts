import {
  AUTOCHARTIST_PERIODS,
  LABS_PERIODS,
  adjustPeriod,
  type AutochartistSignal,
  type LabsCalendarEntry,
  type LabsCotEntry,
} from '../adapters/v20/labs.ts';
import { readFileSync } from 'node:fs';
import {
  cotPublishedAt,
  visibleAt,
  type CalendarItem,
  type CotItem,
  type LabsItem,
  type LabsKind,
  type SignalItem,
  type SpreadItem,
} from '../adapters/catalog/labs-items.ts';
import { labsFiles, parseLabsLine } from '../adapters/catalog/labs-store.ts';
import { loadInstruments, type InstrumentRegistry } from '../domain/instrument.ts';
import type { SandboxReply, SandboxRoute } from './route.ts';

/**
 * The sandbox's `/labs/v1` endpoints. OANDA's labs data cannot be recorded at length, so the
 * sandbox GENERATES it, deterministically: every value is a function of the instrument, the
 * endpoint and the time slot (a hash, no Math.random), laid out around the sandbox clock
 * (`now`), in the shapes of the recorded responses. Asking twice at the same sandbox time gives
 * the same answer; advancing the clock slides the window.
 *
 * - calendar: per currency of the instrument (all currencies when absent), each UTC hour slot
 *   has a release with probability 1/6; entries in [now − period, now], oldest first.
 * - spreads: min/avg/max in pips per bucket of max(15 min, period / 96), in [now − period, now).
 * - commitments_of_traders: the last 5 weekly reports (Tuesdays 21:00 UTC) before now, for the
 *   instruments the CFTC covers; `{}` for others.
 * - signal/autochartist: per instrument (a default list when absent), each 4-hour slot has a
 *   signal with probability 1/3, completed at the slot end; chart patterns carry support and
 *   resistance lines and a prediction box, key levels a price. `type` filters; period defaults to 1 week.
 *
 * With a recording (`fxflow sandbox --labs <catalog>`), every kind is served from it instead, as it
 * was known at the sandbox's time: calendar entries (their latest version by then), signals, spread
 * intervals and COT reports (nothing generated between recorded items).
 *
 * Periods are adjusted by OANDA's rule (`adjustPeriod`). A missing or malformed instrument is a
 * 400, a well-formed unknown one a 404, both with a v20 `errorMessage`. The removed endpoints
 * (historical_position_ratios, orderbook_data) answer 404.
 */
export function labsRoute(opts: {
  now: () => number;
  instruments?: InstrumentRegistry;
  recorded?: string;
}): SandboxRoute {
  const registry = opts.instruments ?? loadInstruments();
  const recorded = opts.recorded !== undefined ? loadRecorded(opts.recorded) : undefined;
  const route: SandboxRoute = (req) => {
    const path = req.url.pathname;
    if (!path.startsWith('/labs/v1/')) return undefined;
    if (req.method !== 'GET')
      return { status: 405, body: { errorMessage: `${req.method} is not allowed on ${path}` } };
    const q = req.url.searchParams;
    const nowS = Math.floor(opts.now() / 1000);
    const instrumentParam = (required: boolean): string | undefined | SandboxReply => {
      const i = q.get('instrument');
      if (i === null || i === '')
        return required
          ? { status: 400, body: { errorMessage: "Invalid value specified for 'instrument'" } }
          : undefined;
      if (!/^[A-Z0-9]+_[A-Z0-9]+$/.test(i))
        return { status: 400, body: { errorMessage: "Invalid value specified for 'instrument'" } };
      if (!registry.has(i)) return { status: 404, body: { errorMessage: `Instrument ${i} not found` } };
      return i;
    };
    const periodParam = (allowed: readonly number[], dflt?: number): number | SandboxReply => {
      const p = q.get('period');
      if (p === null || p === '') {
        if (dflt !== undefined) return dflt;
        return { status: 400, body: { errorMessage: "Invalid value specified for 'period'" } };
      }
      const n = Number(p);
      if (!Number.isFinite(n) || n <= 0)
        return { status: 400, body: { errorMessage: "Invalid value specified for 'period'" } };
      return adjustPeriod(n, allowed);
    };
    switch (path) {
      case '/labs/v1/calendar': {
        const inst = instrumentParam(false);
        if (typeof inst === 'object') return inst;
        const period = periodParam(LABS_PERIODS);
        if (typeof period === 'object') return period;
        const currencies = inst ? inst.split('_') : CURRENCIES;
        if (recorded)
          return { status: 200, body: recordedCalendarAt(recorded, currencies, nowS - period, opts.now()) };
        return { status: 200, body: calendar(currencies, nowS - period, nowS) };
      }
      case '/labs/v1/spreads': {
        const inst = instrumentParam(true);
        if (typeof inst === 'object' || inst === undefined) return inst ?? undefined;
        const period = periodParam(LABS_PERIODS);
        if (typeof period === 'object') return period;
        if (recorded)
          return { status: 200, body: recordedSpreadsAt(recorded, inst, nowS - period, opts.now()) };
        return { status: 200, body: spreads(inst, nowS - period, nowS, period) };
      }
      case '/labs/v1/commitments_of_traders': {
        const inst = instrumentParam(true);
        if (typeof inst === 'object' || inst === undefined) return inst ?? undefined;
        if (recorded) {
          const reports = recorded.cot
            .filter((i) => i.instrument === inst && visibleAt(i) <= opts.now())
            .map((i) => i.report);
          return {
            status: 200,
            body: reports.length > 0 ? { [inst]: reports.sort((a, b) => a.date - b.date) } : {},
          };
        }
        return { status: 200, body: COT_INSTRUMENTS.includes(inst) ? { [inst]: cot(inst, nowS) } : {} };
      }
      case '/labs/v1/signal/autochartist': {
        const inst = instrumentParam(false);
        if (typeof inst === 'object') return inst;
        const period = periodParam(AUTOCHARTIST_PERIODS, 604800);
        if (typeof period === 'object') return period;
        const type = q.get('type');
        if (type !== null && type !== 'chartpattern' && type !== 'keylevel')
          return { status: 400, body: { errorMessage: "Invalid value specified for 'type'" } };
        const list = inst ? [inst] : SIGNAL_INSTRUMENTS.filter((i) => registry.has(i));
        if (recorded) {
          const known = recorded.signals.filter(
            (i) =>
              i.knownAt <= opts.now() &&
              i.signal.data.patternendtime >= nowS - period &&
              (inst === undefined || i.signal.instrument === inst) &&
              (type === null || i.signal.type === type),
          );
          return { status: 200, body: { provider: 'autochartist', signals: known.map((i) => i.signal) } };
        }
        const signals = list
          .flatMap((i) => autochartist(i, nowS - period, nowS))
          .filter((s) => type === null || s.type === type);
        return { status: 200, body: { provider: 'autochartist', signals } };
      }
      case '/labs/v1/historical_position_ratios':
      case '/labs/v1/orderbook_data':
        return {
          status: 404,
          body: {
            errorMessage: `${path} was removed by OANDA; use /v3/instruments/{instrument}/positionBook or orderBook`,
          },
        };
      default:
        return { status: 404, body: { errorMessage: `${path} is not a labs endpoint` } };
    }
  };
  // Every answer carries the sandbox's time as its Date header, as OANDA's carry OANDA's: a labs
  // client (the recorder, the runner's poller) stamps and windows what it asks on the server's
  // clock, whatever the sandbox's speed.
  return async (req) => {
    const reply = await route(req);
    return reply === undefined
      ? undefined
      : { ...reply, headers: { ...reply.headers, Date: new Date(opts.now()).toUTCString() } };
  };
}

/** Recorded labs items (a catalog's labs/ folder) the sandbox serves instead of generated ones. */
interface Recorded {
  readonly calendar: CalendarItem[];
  readonly signals: SignalItem[];
  readonly spreads: SpreadItem[];
  readonly cot: CotItem[];
}

function loadRecorded(root: string): Recorded {
  const load = <T extends LabsItem>(kind: LabsKind): T[] => {
    const out: T[] = [];
    for (const { file } of labsFiles(root, kind)) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, n) => {
          if (text.trim() !== '') out.push(parseLabsLine(text, file, n + 1, kind) as T);
        });
    }
    return out;
  };
  return {
    calendar: load<CalendarItem>('calendar'),
    signals: load<SignalItem>('signals'),
    spreads: load<SpreadItem>('spreads'),
    cot: load<CotItem>('cot'),
  };
}

/**
 * The recorded spread history of `instrument` known by `nowMs`, over [fromS, now]: the recorded
 * intervals as they are (a recording holds what OANDA answered; nothing is generated between them).
 */
function recordedSpreadsAt(
  r: Recorded,
  instrument: string,
  fromS: number,
  nowMs: number,
): { max: [number, number][]; avg: [number, number][]; min: [number, number][] } {
  const known = r.spreads
    .filter((i) => i.instrument === instrument && i.knownAt <= nowMs && i.t >= fromS && i.t * 1000 <= nowMs)
    .sort((a, b) => a.t - b.t);
  return {
    max: known.map((i) => [i.t, i.max]),
    avg: known.map((i) => [i.t, i.avg]),
    min: known.map((i) => [i.t, i.min]),
  };
}

/** Each recorded entry as it was known at `nowMs` (its latest version by then), released from `fromS` on. */
function recordedCalendarAt(
  r: Recorded,
  currencies: readonly string[],
  fromS: number,
  nowMs: number,
): LabsCalendarEntry[] {
  const latest = new Map<string, LabsCalendarEntry>();
  for (const i of r.calendar) {
    if (i.knownAt > nowMs) break; // files are in knownAt order
    if (currencies.includes(i.entry.currency) && i.entry.timestamp >= fromS) latest.set(i.key, i.entry);
  }
  return [...latest.values()].sort((a, b) => a.timestamp - b.timestamp);
}

const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'AUD', 'CAD', 'CHF', 'NZD'];
const COT_INSTRUMENTS = [
  'AUD_USD',
  'GBP_USD',
  'USD_CAD',
  'EUR_USD',
  'USD_JPY',
  'USD_MXN',
  'NZD_USD',
  'USD_CHF',
  'XAU_USD',
  'XAG_USD',
];
const SIGNAL_INSTRUMENTS = ['EUR_USD', 'GBP_USD', 'USD_JPY', 'AUD_USD', 'USD_CAD'];
const REGION: Record<string, string> = {
  USD: 'americas',
  CAD: 'americas',
  EUR: 'europe',
  GBP: 'europe',
  CHF: 'europe',
  JPY: 'asia',
  AUD: 'asia',
  NZD: 'asia',
};
const TITLES = [
  'ISM Manufacturing',
  'CPI m/m',
  'Retail Sales m/m',
  'Unemployment Rate',
  'GDP q/q',
  'Trade Balance',
  'PMI Composite',
  'Interest Rate Decision',
];
const UNITS = ['index', '%', '%', '%', '%', 'B', 'index', '%'];
const PATTERNS = [
  ['Channel Down', 'Continuation'],
  ['Channel Up', 'Continuation'],
  ['Triangle', 'Continuation'],
  ['Rising Wedge', 'Reversal'],
  ['Falling Wedge', 'Reversal'],
  ['Head and Shoulders', 'Reversal'],
] as const;

/** A deterministic uniform number in [0, 1) for a key (FNV-1a, then a mulberry32 round). */
function unit(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  let t = (h + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const fixed = (x: number, d: number): string => x.toFixed(d);

/** A plausible price level per instrument (generated data: not a real quote). */
function basePrice(instrument: string): number {
  if (instrument.endsWith('_JPY')) return 110 + 40 * unit(`${instrument}:level`);
  if (instrument.startsWith('XAU')) return 1800 + 400 * unit(`${instrument}:level`);
  return 0.6 + 0.8 * unit(`${instrument}:level`);
}

function calendar(currencies: readonly string[], fromS: number, toS: number): LabsCalendarEntry[] {
  const out: LabsCalendarEntry[] = [];
  const first = Math.ceil(fromS / 3600) * 3600;
  for (let t = first; t <= toS; t += 3600) {
    for (const c of currencies) {
      if (!CURRENCIES.includes(c) || unit(`cal:${c}:${t}`) >= 1 / 6) continue;
      const k = Math.floor(unit(`cal:${c}:${t}:title`) * TITLES.length);
      const previous = 50 * unit(`cal:${c}:${t}:prev`);
      const forecast = previous + (unit(`cal:${c}:${t}:fc`) - 0.5) * 2;
      const actual = forecast + (unit(`cal:${c}:${t}:act`) - 0.5) * 3;
      out.push({
        impact: 1 + Math.floor(unit(`cal:${c}:${t}:impact`) * 3),
        actual: fixed(actual, 1),
        title: TITLES[k]!,
        timestamp: t,
        region: REGION[c] ?? 'global',
        forecast: fixed(forecast, 1),
        currency: c,
        unit: UNITS[k]!,
        market: fixed(forecast + 0.3, 1),
        previous: fixed(previous, 1),
      });
    }
  }
  return out;
}

function spreads(
  instrument: string,
  fromS: number,
  toS: number,
  period: number,
): { max: [number, number][]; avg: [number, number][]; min: [number, number][] } {
  const step = Math.max(900, Math.floor(period / 96 / 900) * 900);
  const base = instrument.endsWith('_JPY') ? 1.2 : 0.9;
  const max: [number, number][] = [];
  const avg: [number, number][] = [];
  const min: [number, number][] = [];
  for (let t = Math.ceil(fromS / step) * step; t < toS; t += step) {
    const lo = base + unit(`spr:${instrument}:${t}:min`) * 0.8;
    const a = lo + unit(`spr:${instrument}:${t}:avg`) * 1.5;
    const hi = a + unit(`spr:${instrument}:${t}:max`) * 4;
    min.push([t, Math.floor(lo * 10) / 10]);
    avg.push([t, Number(a.toFixed(5))]);
    max.push([t, Math.ceil(hi * 10) / 10]);
  }
  return { max, avg, min };
}

function cot(instrument: string, nowS: number): LabsCotEntry[] {
  // Reports dated Tuesdays 21:00 UTC (1970-01-06 was a Tuesday), each served from its publication
  // (cotPublishedAt: the Friday after, 15:30 New York), not from its date: the latest five published.
  const week = 7 * 86400;
  const anchor = 5 * 86400 + 21 * 3600;
  let last = anchor + Math.floor((nowS - anchor) / week) * week;
  if (cotPublishedAt(last * 1000) > nowS * 1000) last -= week;
  const base = instrument.split('_')[0]!;
  const out: LabsCotEntry[] = [];
  for (let k = 4; k >= 0; k--) {
    const date = last - k * week;
    const oi = 400000 + Math.floor(unit(`cot:${instrument}:${date}:oi`) * 300000);
    out.push({
      oi: String(oi),
      price: fixed(basePrice(instrument) * (1 + (unit(`cot:${instrument}:${date}:px`) - 0.5) * 0.02), 5),
      ncs: String(Math.floor(oi * (0.1 + 0.2 * unit(`cot:${instrument}:${date}:ncs`)))),
      ncl: String(Math.floor(oi * (0.2 + 0.3 * unit(`cot:${instrument}:${date}:ncl`)))),
      date,
      unit: `Contracts Of ${base} 125,000`,
    });
  }
  return out;
}

function autochartist(instrument: string, fromS: number, toS: number): AutochartistSignal[] {
  const slot = 4 * 3600;
  const out: AutochartistSignal[] = [];
  for (let t = Math.ceil(fromS / slot) * slot; t <= toS; t += slot) {
    const k = `ac:${instrument}:${t}`;
    if (unit(k) >= 1 / 3) continue;
    const direction = unit(`${k}:dir`) < 0.5 ? 1 : -1;
    const price = basePrice(instrument) * (1 + (unit(`${k}:px`) - 0.5) * 0.02);
    const digits = instrument.endsWith('_JPY') ? 3 : 5;
    const round = (x: number): number => Number(x.toFixed(digits));
    const probability = Number((55 + 30 * unit(`${k}:prob`)).toFixed(2));
    const interval = [15, 30, 60, 240][Math.floor(unit(`${k}:iv`) * 4)]!;
    const stats = (tag: string): { total: number; percent: number; correct: number } => {
      const total = 200 + Math.floor(unit(`${k}:${tag}:n`) * 3000);
      const correct = Math.floor(total * (0.55 + 0.25 * unit(`${k}:${tag}:c`)));
      return { total, percent: Number(((100 * correct) / total).toFixed(2)), correct };
    };
    const id = Math.floor(unit(`${k}:id`) * 1e9);
    const box = price * 0.004;
    const prediction = {
      timefrom: t,
      pricelow: round(direction > 0 ? price + box * 0.5 : price - box * 1.5),
      timeto: t + interval * 60 * 48,
      pricehigh: round(direction > 0 ? price + box * 1.5 : price - box * 0.5),
    };
    const historicalstats = { hourofday: stats('h'), pattern: stats('p'), symbol: stats('s') };
    if (unit(`${k}:type`) < 0.7) {
      const [pattern, trendtype] = PATTERNS[Math.floor(unit(`${k}:pat`) * PATTERNS.length)]!;
      const length = 20 + Math.floor(unit(`${k}:len`) * 80);
      const start = t - length * interval * 60;
      out.push({
        type: 'chartpattern',
        meta: {
          direction,
          probability,
          pattern,
          historicalstats,
          interval,
          length,
          scores: {
            breakout: 1 + Math.floor(unit(`${k}:sb`) * 10),
            clarity: 1 + Math.floor(unit(`${k}:sc`) * 10),
            quality: 1 + Math.floor(unit(`${k}:sq`) * 10),
            initialtrend: 1 + Math.floor(unit(`${k}:si`) * 10),
            uniformity: 1 + Math.floor(unit(`${k}:su`) * 10),
          },
          trendtype,
          completed: 1,
        },
        data: {
          points: {
            support: { y1: round(price - box), y0: round(price - box * 0.8), x0: start, x1: t },
            resistance: { y1: round(price + box * 0.8), y0: round(price + box), x0: start, x1: t },
          },
          patternendtime: t,
          prediction,
        },
        id,
        instrument,
      });
    } else {
      out.push({
        type: 'keylevel',
        meta: {
          direction,
          probability,
          pattern: direction > 0 ? 'Support' : 'Resistance',
          historicalstats,
          interval,
          completed: 1,
        },
        data: { price: round(price), patternendtime: t, prediction },
        id,
        instrument,
      });
    }
  }
  return out;
}
