import { DateTime } from 'luxon';
import { Aggregator, type Catalog } from '../adapters/catalog/index.ts';
import type { Candle } from '../domain/candle.ts';
import {
  DEFAULT_ALIGNMENT,
  alignOpen,
  granularityMs,
  isGranularity,
  type Alignment,
  type Granularity,
} from '../domain/granularity.ts';
import { loadInstruments, type Instrument } from '../domain/instrument.ts';
import { formatTime, parseRequestTime, type UnixMs } from '../domain/time.ts';
import type { SandboxReply } from './route.ts';

const DAY = 86_400_000;
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
let registry: ReturnType<typeof loadInstruments> | undefined;

const bad = (message: string, errorCode?: string): SandboxReply => ({
  status: 400,
  body: errorCode ? { errorMessage: message, errorCode } : { errorMessage: message },
});

/** The finest catalog series that aggregates exactly into `g`. */
function sourceOf(catalog: Catalog, instrument: string, g: Granularity): Granularity | undefined {
  if (catalog.has(instrument, g)) return g;
  const ms = g === 'M' || g === 'W' || g === 'D' ? Infinity : granularityMs(g);
  for (const s of ['S5', 'M1', 'M5', 'H1'] as const) {
    if (!catalog.has(instrument, s)) continue;
    if (granularityMs(s) < ms && (ms === Infinity || ms % granularityMs(s) === 0)) return s;
  }
  return undefined;
}

/** Month files parsed per catalog, most recent use last (a sandbox serves a few months over and over). */
const months = new WeakMap<Catalog, Map<string, Promise<readonly Candle[]>>>();
const MONTHS_KEPT = 4;

const monthStart = (t: UnixMs): UnixMs => {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
const nextMonth = (m: UnixMs): UnixMs => {
  const d = new Date(m);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

/**
 * The catalog's candles of one UTC month, read once and kept (the last `MONTHS_KEPT` used). A live
 * runner asks for one candle per period; parsing a month file for each took ~50 ms. The catalog is
 * taken as fixed while a sandbox serves it.
 */
function month(
  catalog: Catalog,
  instrument: string,
  g: Granularity,
  start: UnixMs,
): Promise<readonly Candle[]> {
  let kept = months.get(catalog);
  if (kept === undefined) months.set(catalog, (kept = new Map()));
  const key = `${instrument}:${g}:${start}`;
  const hit = kept.get(key);
  if (hit !== undefined) {
    kept.delete(key);
    kept.set(key, hit);
    return hit;
  }
  const cache = kept;
  const p = (async () => {
    const out: Candle[] = [];
    for await (const batch of catalog.candles({
      instrument,
      granularity: g,
      from: start,
      to: nextMonth(start),
    }))
      for (const c of batch) out.push(c);
    return out;
  })();
  p.catch(() => cache.delete(key));
  cache.set(key, p);
  if (cache.size > MONTHS_KEPT) cache.delete(cache.keys().next().value!);
  return p;
}

/** Index of the first candle with `time >= t` in a time-ordered list. */
function firstAtOrAfter(list: readonly Candle[], t: UnixMs): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.time < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

async function read(
  catalog: Catalog,
  instrument: string,
  src: Granularity,
  g: Granularity,
  a: Alignment,
  from: UnixMs,
  to: UnixMs,
  now: UnixMs,
): Promise<Candle[]> {
  const out: Candle[] = [];
  const agg = src === g ? undefined : new Aggregator(g, a);
  // Start at the open of the candle that contains `from`, so its first bucket is whole.
  const start = alignOpen(g, from, a);
  for (let m = monthStart(start); m < to; m = nextMonth(m)) {
    const list = await month(catalog, instrument, src, m);
    for (let i = firstAtOrAfter(list, start); i < list.length; i++) {
      const c = list[i]!;
      if (c.time >= to) break;
      if (c.at > now) {
        // Source candles not yet closed at sandbox time are not known.
        continue;
      }
      if (!agg) out.push(c);
      else {
        const done = agg.push(c);
        if (done) out.push(done);
      }
    }
  }
  if (agg) {
    const last = agg.flush(now);
    if (last) out.push(last);
  }
  return out;
}

/**
 * GET /v3/instruments/{instrument}/candles from the catalog: coarser granularities are aggregated
 * from the finest series that divides them, with v20's alignment parameters. A candle whose period
 * has not ended at sandbox time `now` is partial (`complete: false`); nothing after `now` is served.
 * A served series candle (M1 from an M1 catalog) is only known once closed, so it is never partial:
 * `completeLagMs` (a sandbox fault) marks candles that closed less than that long before `now`
 * incomplete, as v20 may right after a period ends.
 */
export async function candlesReply(
  catalog: Catalog,
  instrument: string,
  q: URLSearchParams,
  now: UnixMs,
  completeLagMs = 0,
): Promise<SandboxReply> {
  registry ??= loadInstruments();
  const inst: Instrument = registry.get(instrument);
  const price = q.get('price') ?? 'M';
  if (!/^(?!.*(.).*\1)[MBA]{1,3}$/.test(price))
    return bad(
      `Invalid value specified for 'price': ${price} (a combination of M, B and A, e.g. "MBA")`,
      'INVALID_PRICE',
    );
  const gText = q.get('granularity') ?? 'S5';
  if (!isGranularity(gText))
    return bad(
      `Invalid value specified for 'granularity': ${gText} (S5, S10, ..., M1, ..., H1, ..., D, W or M)`,
      'INVALID_GRANULARITY',
    );
  const g = gText;
  const src = sourceOf(catalog, instrument, g);
  if (!src)
    return bad(
      `The sandbox has no ${instrument} data fine enough for ${g} candles in its catalog ${catalog.root} (it aggregates from S5, M1, M5 or H1 series; import one with fxflow data import)`,
      'INVALID_GRANULARITY',
    );
  const countText = q.get('count');
  const count = countText === null ? 500 : Number(countText);
  if (!Number.isInteger(count) || count < 1 || count > 5000)
    return bad(`Invalid value specified for 'count': ${countText}. Maximum value is 5000`, 'INVALID_COUNT');
  const time = (k: string): UnixMs | undefined | 'bad' => {
    const v = q.get(k);
    if (v === null) return undefined;
    const t = /^\d+(\.\d+)?$/.test(v) ? Math.round(Number(v) * 1000) : parseRequestTime(v);
    return Number.isFinite(t) ? t : 'bad';
  };
  const from = time('from');
  const to = time('to');
  if (from === 'bad')
    return bad(
      `Invalid value specified for 'from': ${q.get('from')} (RFC 3339 or UNIX seconds)`,
      'INVALID_FROM',
    );
  if (to === 'bad')
    return bad(`Invalid value specified for 'to': ${q.get('to')} (RFC 3339 or UNIX seconds)`, 'INVALID_TO');
  if (from !== undefined && to !== undefined && countText !== null)
    return bad("Cannot specify 'count' when both 'from' and 'to' are given");
  if (from !== undefined && to !== undefined && to < from)
    return bad("Invalid value specified for 'to': it is before 'from'");
  const dailyText = q.get('dailyAlignment');
  const dailyAlignment = dailyText === null ? DEFAULT_ALIGNMENT.dailyAlignment : Number(dailyText);
  if (!Number.isInteger(dailyAlignment) || dailyAlignment < 0 || dailyAlignment > 23)
    return bad(`Invalid value specified for 'dailyAlignment': ${dailyText} (0 to 23)`);
  const zone = q.get('alignmentTimezone') ?? DEFAULT_ALIGNMENT.alignmentTimezone;
  if (!DateTime.now().setZone(zone).isValid)
    return bad(
      `Invalid value specified for 'alignmentTimezone': ${zone} (an IANA zone such as America/New_York)`,
    );
  const weekly = q.get('weeklyAlignment') ?? DEFAULT_ALIGNMENT.weeklyAlignment;
  if (!(WEEKDAYS as readonly string[]).includes(weekly))
    return bad(`Invalid value specified for 'weeklyAlignment': ${weekly} (Monday ... Sunday)`);
  const alignment: Alignment = {
    dailyAlignment,
    alignmentTimezone: zone,
    weeklyAlignment: weekly as Alignment['weeklyAlignment'],
  };
  const includeFirst = q.get('includeFirst') !== 'false';
  const smooth = q.get('smooth') === 'true';
  const len = granularityMs(g);

  let list: Candle[];
  if (from !== undefined && to !== undefined) {
    list = await read(catalog, instrument, src, g, alignment, from, Math.min(to, now), now);
    list = list.filter((c) => c.time < to);
    if (list.length > 5000)
      return bad(
        `The range from ${q.get('from')} to ${q.get('to')} holds more than 5000 ${g} candles: narrow it or use 'count'`,
        'INVALID_COUNT',
      );
  } else if (from !== undefined) {
    let span = count * len * 1.6 + 4 * DAY;
    for (;;) {
      const end = Math.min(now, from + span);
      list = await read(catalog, instrument, src, g, alignment, from, end, now);
      if (!includeFirst) list = list.filter((c) => c.time > from);
      if (list.length >= count || end >= now || span > 800 * DAY) break;
      span *= 3;
    }
    list = list.slice(0, count);
  } else {
    const end = Math.min(to ?? now, now);
    let span = count * len * 1.6 + 4 * DAY;
    for (;;) {
      list = await read(catalog, instrument, src, g, alignment, end - span, end, now);
      list = list.filter((c) => c.time <= end);
      if (list.length >= count || span > 800 * DAY) break;
      span *= 3;
    }
    list = list.slice(-count);
  }
  if (from !== undefined && !includeFirst) list = list.filter((c) => c.time > from);

  const wire = list.map((c, i) => {
    const prev = i > 0 ? list[i - 1] : undefined;
    const out: Record<string, unknown> = {
      complete: c.complete && (completeLagMs <= 0 || c.at <= now - completeLagMs),
      volume: c.volume,
      time: formatTime(c.time),
    };
    const bo = smooth && prev ? prev.bc : c.bo;
    const ao = smooth && prev ? prev.ac : c.ao;
    const ohlc = (o: number, h: number, l: number, cl: number): Record<string, string> => ({
      o: inst.price(o),
      h: inst.price(h),
      l: inst.price(l),
      c: inst.price(cl),
    });
    if (price.includes('B')) out.bid = ohlc(bo, c.bh, c.bl, c.bc);
    if (price.includes('A')) out.ask = ohlc(ao, c.ah, c.al, c.ac);
    if (price.includes('M'))
      out.mid = ohlc((bo + ao) / 2, (c.bh + c.ah) / 2, (c.bl + c.al) / 2, (c.bc + c.ac) / 2);
    return out;
  });
  return { status: 200, body: { instrument, granularity: g, candles: wire } };
}
