import type { SeriesOrigin } from '../engine/report.ts';
import type { Candle } from '../domain/candle.ts';
import { conversionInstruments } from '../domain/conversion.ts';
import { granularityMs, type Granularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { parseCandleSeries, subscriptionsOf } from '../engine/engine.ts';
import type { Params, Strategy } from '../strategy/api.ts';
import { cachedSeries } from './series-cache.ts';
import { decodeSeries, hashSeries, type SharedSeries } from './shared-series.ts';

export type CandleFactory = (req: {
  instrument: string;
  granularity: Granularity;
  from: number;
  to: number;
}) => AsyncIterable<readonly Candle[]>;

/**
 * Decodes, once for the whole sweep, every series a trial reads: the strategy's candle
 * subscriptions (with the given params) and the conversion instruments a non-USD account needs,
 * over [from, to). Returns them with the hash of their content (the "data" of a trial's identity).
 */
export async function loadSweepData(o: {
  strategy: Strategy<Params, unknown>;
  name: string;
  params: Params;
  currency: string;
  instruments: InstrumentRegistry;
  candles: CandleFactory;
  available: (instrument: string, granularity: string) => boolean;
  /** Where each series is read from (recorded with it: a trial's data report, the out-of-sample record, names it). */
  origin?: (instrument: string, granularity: Granularity) => SeriesOrigin;
  from: number;
  to: number;
  /** The binary cache: where, and the hash of a series' source files (undefined: do not cache it). */
  cache?: { dir: string; sourceHash: (instrument: string, granularity: Granularity) => string | undefined };
}): Promise<{ series: SharedSeries[]; dataHash: string; candles: number; decodeMs: number; cached: number }> {
  const t0 = performance.now();
  const subs = subscriptionsOf(o.strategy, o.params, o.name);
  if ((subs.ticks ?? []).length > 0)
    throw new Error(`${o.name} subscribes to ticks; sweeps share candle data only (for now)`);
  const wanted = new Map<string, { instrument: string; granularity: Granularity }>();
  for (const spec of subs.candles ?? []) {
    const s = parseCandleSeries(spec, o.instruments);
    wanted.set(`${s.instrument}:${s.granularity}`, { instrument: s.instrument, granularity: s.granularity });
  }
  if (wanted.size === 0) throw new Error(`${o.name} subscribes to no candles`);
  // The same choice of conversion series as a backtest makes (finest granularity, held data).
  const finest = [...wanted.values()].reduce((a, b) =>
    granularityMs(b.granularity) < granularityMs(a.granularity) ? b : a,
  ).granularity;
  const traded = [...new Set([...wanted.values()].map((s) => s.instrument))];
  for (const name of conversionInstruments(
    traded,
    o.currency,
    (n) => o.instruments.has(n),
    (n) => o.available(n, finest),
  )) {
    wanted.set(`${name}:${finest}`, { instrument: name, granularity: finest });
  }
  const series: SharedSeries[] = [];
  let cached = 0;
  for (const s of wanted.values()) {
    const decode = (): Promise<SharedSeries> =>
      decodeSeries(s.instrument, s.granularity, o.candles({ ...s, from: o.from, to: o.to }));
    const sourceHash = o.cache?.sourceHash(s.instrument, s.granularity);
    let decoded: SharedSeries;
    if (o.cache && sourceHash) {
      const c = await cachedSeries(o.cache.dir, { ...s, from: o.from, to: o.to, sourceHash }, decode);
      if (c.hit) cached++;
      decoded = c.series;
    } else decoded = await decode();
    const origin = o.origin?.(s.instrument, s.granularity);
    series.push(origin ? { ...decoded, origin } : decoded);
  }
  return {
    series,
    dataHash: hashSeries(series),
    candles: series.reduce((n, s) => n + s.length, 0),
    decodeMs: performance.now() - t0,
    cached,
  };
}
