import { DateTime } from 'luxon';
import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';
import { MarketCalendar, SHIPPED_CALENDAR } from '../../domain/market-hours.ts';
import type { UnixMs } from '../../domain/time.ts';
import { aggregateBatches } from './aggregate.ts';

/**
 * SYNTHETIC market data: a deterministic, seeded generator of M1 bid/ask candles. It is not real
 * data and says nothing about real markets; it exists so that fxflow ships a sample that runs with
 * no download, and so that benchmarks and tests have unlimited, reproducible input.
 *
 * The model, per minute, on the log of the mid price:
 * - a Gaussian step with the instrument's annual volatility, scaled by an intraday profile
 *   (quiet Asian session, busiest London / New York overlap);
 * - occasional jumps (fat tails) and weak mean reversion to the start level, so prices stay
 *   plausible over years;
 * - high and low beyond the open/close by a half-normal excursion;
 * - a spread in pips that follows an hourly profile (widest around the 17:00 New York rollover)
 *   with a little noise; ask = bid + spread, both snapped to the instrument's decimals;
 * - tick volume correlated with the size of the move;
 * - no candles from Friday 17:00 New York to Sunday 17:00 New York (DST-aware; boundaries are
 *   computed once per week), nor in the closures of the shipped market calendar
 *   (data/market-calendar.json: Christmas, New Year, the Mondays they are observed on, the early
 *   closes): the price moves on through a holiday (its minutes are drawn and not kept), so the
 *   market reopens with a gap and every other candle is the one a generator without holidays gives.
 *   The shipped calendar only, not a user's (--market-calendar): the same arguments give the same
 *   candles on every machine.
 * The same (instrument, from, seed) always gives the same candles, byte for byte.
 */
export interface SyntheticSpec {
  readonly instrument: string;
  /** M1, or any coarser granularity (aggregated from the M1 stream with v20 alignment). */
  readonly granularity: Granularity;
  readonly from: UnixMs;
  readonly to: UnixMs;
  readonly seed: number;
  /**
   * Candles per batch (default 1024, about what a catalog month file gives per 64 KiB chunk). A
   * batch's candles stay alive until it is consumed and every young-generation collection in that
   * time copies them: 4096 made the benchmark's backtest with exits about a tenth slower.
   */
  readonly batchSize?: number;
}

interface Profile {
  readonly start: number;
  readonly vol: number;
  readonly spreadPips: number;
  readonly pipLocation: number;
  readonly decimals: number;
}

const PROFILES: Readonly<Record<string, Partial<Profile>>> = {
  EUR_USD: { start: 1.1, vol: 0.07, spreadPips: 0.8 },
  GBP_USD: { start: 1.27, vol: 0.08, spreadPips: 1.2 },
  USD_JPY: { start: 148, vol: 0.09, spreadPips: 1.0 },
  AUD_USD: { start: 0.66, vol: 0.09, spreadPips: 1.1 },
  NZD_USD: { start: 0.61, vol: 0.09, spreadPips: 1.5 },
  USD_CAD: { start: 1.35, vol: 0.06, spreadPips: 1.4 },
  USD_CHF: { start: 0.88, vol: 0.07, spreadPips: 1.3 },
  EUR_GBP: { start: 0.86, vol: 0.05, spreadPips: 1.1 },
  EUR_JPY: { start: 160, vol: 0.09, spreadPips: 1.5 },
  XAU_USD: { start: 2000, vol: 0.14, spreadPips: 30, pipLocation: -2, decimals: 3 },
};

function profileOf(instrument: string): Profile {
  const p = PROFILES[instrument] ?? {};
  const jpy = instrument.endsWith('_JPY');
  const pipLocation = p.pipLocation ?? (jpy ? -2 : -4);
  return {
    start: p.start ?? 1,
    vol: p.vol ?? 0.08,
    spreadPips: p.spreadPips ?? 1.5,
    pipLocation,
    decimals: p.decimals ?? -pipLocation + 1,
  };
}

/** Volatility multiplier by UTC hour: Asia quiet, London and the New York overlap busy. */
const VOL_BY_HOUR = [
  0.6, 0.55, 0.55, 0.6, 0.6, 0.65, 0.8, 1.1, 1.4, 1.35, 1.2, 1.15, 1.4, 1.6, 1.55, 1.35, 1.1, 0.9, 0.8, 0.7,
  0.6, 0.5, 0.55, 0.6,
];
/** Spread multiplier by UTC hour: widest around the 21:00-22:00 UTC rollover. */
const SPREAD_BY_HOUR = [
  1.3, 1.2, 1.1, 1.1, 1.1, 1.0, 1.0, 0.9, 0.85, 0.85, 0.9, 0.9, 0.85, 0.85, 0.85, 0.9, 1.0, 1.1, 1.2, 1.3,
  1.6, 3.0, 2.5, 1.5,
];

const MINUTE = 60_000;
const MINUTES_PER_YEAR = 252 * 1440;

function hashSeed(seed: number, text: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x85ebca6b);
    h ^= h >>> 13;
  }
  return h >>> 0;
}

const U32 = 4294967296;
const TABLE_BITS = 16;

/**
 * 65,536 standard normal draws (Box-Muller over the seeded PRNG), sampled by 16-bit index: two
 * normals per PRNG call and no logarithms in the per-candle loop.
 */
function normalTable(rnd: () => number): Float64Array {
  const n = 1 << TABLE_BITS;
  const t = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const u = Math.max(rnd() / U32, 1e-12);
    const r = Math.sqrt(-2 * Math.log(u));
    const th = (2 * Math.PI * rnd()) / U32;
    t[i] = r * Math.cos(th);
    t[i + 1] = r * Math.sin(th);
  }
  return t;
}

/** The trading week around `t`: [open, close) in ms, Sunday 17:00 to Friday 17:00 New York. */
function tradingWeek(t: UnixMs): { open: UnixMs; close: UnixMs } {
  const ny = DateTime.fromMillis(t, { zone: 'America/New_York' });
  // Sunday 17:00 of this week (luxon weeks start Monday; Sunday is weekday 7).
  let open = ny.set({ hour: 17, minute: 0, second: 0, millisecond: 0 }).minus({ days: ny.weekday % 7 });
  if (open.toMillis() > t) open = open.minus({ weeks: 1 });
  const close = open.plus({ days: 5 });
  return { open: open.toMillis(), close: close.toMillis() };
}

let shipped: MarketCalendar | undefined;

/**
 * The closure of the shipped calendar containing `t` or the next one after it, as [from, to);
 * none within eight days: an empty one eight days on (asked again there).
 */
function closureFrom(t: UnixMs): { readonly from: UnixMs; readonly to: UnixMs } {
  const cal = (shipped ??= MarketCalendar.load([SHIPPED_CALENDAR]));
  const at = cal.closureAt(t);
  if (at !== undefined) return at;
  const next = cal.nextClosure(t);
  if (next === Infinity) return { from: t + 8 * 86_400_000, to: t + 8 * 86_400_000 };
  return cal.closureAt(next)!;
}

/** Synthetic M1 candles as synchronous batches: the fast path the benchmark uses. */
export function* syntheticM1Batches(
  instrument: string,
  from: UnixMs,
  to: UnixMs,
  seed: number,
  batchSize = 1024,
): Generator<readonly Candle[]> {
  const p = profileOf(instrument);
  const s = hashSeed(seed, instrument);
  // sfc32 (a small, fast, well-distributed PRNG of unsigned 32-bit integers), its state seeded and used for the normal table through `rnd`, then carried on inline in the
  // per-candle loop (locals of this generator rather than a closure's context: about twice as fast).
  let ra = s | 0,
    rb = (s ^ 0xdeadbeef) | 0,
    rc = (s ^ 0x1234567) | 0,
    rd = 0x6d2b79f5 | 0;
  const rnd = (): number => {
    const t = (((ra + rb) | 0) + rd) | 0;
    rd = (rd + 1) | 0;
    ra = rb ^ (rb >>> 9);
    rb = (rc + (rc << 3)) | 0;
    rc = (rc << 21) | (rc >>> 11);
    rc = (rc + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 20; i++) rnd();
  const normals = normalTable(rnd);
  let a = ra,
    b = rb,
    c = rc,
    d = rd;
  const mask = (1 << TABLE_BITS) - 1;
  const scale = 10 ** p.decimals;
  const pip = 10 ** p.pipLocation;
  const sigma = p.vol / Math.sqrt(MINUTES_PER_YEAR);
  const start = p.start;
  let mid = start;

  let t = Math.ceil(from / MINUTE) * MINUTE;
  let week = tradingWeek(t);
  let holiday = closureFrom(t);
  let batch: Candle[] = [];
  while (t < to) {
    if (t >= week.close) {
      week = tradingWeek(week.close + 2 * 86_400_000 + 3_600_000);
      if (t < week.open) t = week.open;
      continue;
    }
    if (t < week.open) {
      t = week.open;
      continue;
    }
    if (t >= holiday.to) holiday = closureFrom(t);
    const hour = ((t / 3_600_000) | 0) % 24;
    const vh = VOL_BY_HOUR[hour]!;
    const vs = sigma * vh;
    // Three sfc32 draws, inline.
    let x = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + x) | 0;
    const r1 = x >>> 0;
    x = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + x) | 0;
    const r2 = x >>> 0;
    x = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + x) | 0;
    const r3 = x >>> 0;
    const z = normals[r1 & mask]!;
    let step = vs * z;
    // Fat tails: about one minute in 2,000 carries a jump of several sigmas.
    if (r1 >>> 16 < 33) step += vs * 8 * normals[(r3 >>> 16) & mask]!;
    // Weak mean reversion towards the start level keeps prices plausible over years.
    step -= 2e-6 * (mid / start - 1);
    const open = mid;
    mid = mid * (1 + step + 0.5 * step * step);
    const close = mid;
    const up = Math.abs(normals[r2 & mask]!) * vs * 0.6 * open;
    const down = Math.abs(normals[r2 >>> 16]!) * vs * 0.6 * open;
    const spread =
      Math.max(0.1, p.spreadPips * SPREAD_BY_HOUR[hour]! * (0.85 + 0.3 * ((r3 & 0xffff) / 65536))) * pip;
    const half = spread / 2;
    const bo = Math.round((open - half) * scale) / scale;
    const bc = Math.round((close - half) * scale) / scale;
    let bh = Math.round((Math.max(open, close) + up - half) * scale) / scale;
    let bl = Math.round((Math.min(open, close) - down - half) * scale) / scale;
    if (bh < bo) bh = bo;
    if (bh < bc) bh = bc;
    if (bl > bo) bl = bo;
    if (bl > bc) bl = bc;
    const sp = Math.round(spread * scale);
    // A holiday's minute: drawn (the price moves on while the market is closed), not kept.
    if (t >= holiday.from) {
      t += MINUTE;
      continue;
    }
    batch.push({
      kind: 'candle',
      instrument,
      granularity: 'M1',
      time: t,
      at: t + MINUTE,
      bo,
      bh,
      bl,
      bc,
      ao: (Math.round(bo * scale) + sp) / scale,
      ah: (Math.round(bh * scale) + sp) / scale,
      al: (Math.round(bl * scale) + sp) / scale,
      ac: (Math.round(bc * scale) + sp) / scale,
      volume: 1 + Math.round(Math.abs(z) * 20 * vh + ((r3 >>> 8) & 15)),
      complete: true,
    });
    if (batch.length === batchSize) {
      yield batch;
      batch = [];
    }
    t += MINUTE;
  }
  if (batch.length > 0) yield batch;
}

/** Synthetic candles of any granularity (coarser ones aggregated from M1), synchronously. */
export function syntheticBatches(spec: SyntheticSpec): Iterable<readonly Candle[]> {
  const m1 = syntheticM1Batches(spec.instrument, spec.from, spec.to, spec.seed, spec.batchSize);
  return spec.granularity === 'M1' ? m1 : aggregateBatches(m1, spec.granularity);
}

/** Synthetic candles as an async source (the catalog and engine contract). */
export async function* syntheticCandles(spec: SyntheticSpec): AsyncIterable<readonly Candle[]> {
  for (const b of syntheticBatches(spec)) yield b;
}
