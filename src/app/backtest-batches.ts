// The candle batches a backtest feeds: the spread model applied (withSpread), kept for the next run, timed.
import type { Candle } from '../domain/candle.ts';
import { formatIsoMs } from '../domain/time.ts';
import { ConfigError, type BacktestConfig } from './config.ts';

/**
 * Applies the configured spread model ('native' leaves candles as they are). The model is centred
 * on the mid; for bid-only data (bid = ask in the catalog) the bid is kept and the ask put above
 * it, for ask-only data the other way round.
 */
export async function* withSpread(
  source: AsyncIterable<readonly Candle[]>,
  data: BacktestConfig['data'],
  pip: number,
  snap: (x: number) => number,
  sides = 'bid/ask',
  labsPips?: (time: number) => number,
): AsyncIterable<readonly Candle[]> {
  const mode = data.spread;
  if (mode === 'native') {
    yield* source;
    return;
  }
  const byHour = mode === 'hourly' ? data.spreadPipsByHour! : undefined;
  const fixedHalf = mode === 'fixed' ? (data.spreadPips * pip) / 2 : 0;
  for await (const batch of source) {
    const out = new Array<Candle>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      const half = labsPips
        ? (labsPips(c.time) * pip) / 2
        : byHour
          ? (byHour[Math.floor(c.time / 3_600_000) % 24]! * pip) / 2
          : fixedHalf;
      const shift = sides === 'bid' ? half : sides === 'ask' ? -half : 0;
      const o = (c.bo + c.ao) / 2 + shift,
        h = (c.bh + c.ah) / 2 + shift,
        l = (c.bl + c.al) / 2 + shift,
        cl = (c.bc + c.ac) / 2 + shift;
      if (!(l - half > 0)) {
        const pips = (2 * half) / pip;
        throw new ConfigError(
          'configuration',
          mode === 'hourly' ? 'data.spreadPipsByHour' : '--spread-pips (data.spreadPips)',
          `${pips} pips is wider than the price: ${c.instrument}'s low ${l} at ${formatIsoMs(c.time)} would get a bid of ${snap(l - half)}; give a spread below ${Math.floor((2 * l) / pip)} pips`,
        );
      }
      // At a zero spread both sides are the mid: four snaps, not eight.
      const bo = snap(o - half),
        bh = snap(h - half),
        bl = snap(l - half),
        bc = snap(cl - half);
      const ao = half === 0 ? bo : snap(o + half),
        ah = half === 0 ? bh : snap(h + half),
        al = half === 0 ? bl : snap(l + half),
        ac = half === 0 ? bc : snap(cl + half);
      // A candle the model leaves as it is (one-sided data at a zero spread) is passed on, not copied.
      out[i] =
        bo === c.bo &&
        bh === c.bh &&
        bl === c.bl &&
        bc === c.bc &&
        ao === c.ao &&
        ah === c.ah &&
        al === c.al &&
        ac === c.ac
          ? c
          : {
              kind: 'candle',
              instrument: c.instrument,
              granularity: c.granularity,
              time: c.time,
              at: c.at,
              bo,
              bh,
              bl,
              bc,
              ao,
              ah,
              al,
              ac,
              volume: c.volume,
              complete: c.complete,
            };
    }
    yield out;
  }
}

/** Passes a source's batches on, keeping each in `into` (BacktestOptions.priced). */
export async function* keepBatches(
  source: AsyncIterable<readonly Candle[]>,
  into: (readonly Candle[])[],
  room: { left: number },
): AsyncIterable<readonly Candle[]> {
  for await (const batch of source) {
    // Past the room left: keep nothing (what was kept so far is dropped; the run reads on).
    if ((room.left -= batch.length) >= 0) into.push(batch);
    else into.length = 0;
    yield batch;
  }
}

/** Passes a source's batches on, adding the time spent waiting for each to `time.ms`. */
export async function* timeBatches(
  source: AsyncIterable<readonly Candle[]>,
  time: { ms: number },
): AsyncIterable<readonly Candle[]> {
  let t = performance.now();
  for await (const batch of source) {
    time.ms += performance.now() - t;
    yield batch;
    t = performance.now();
  }
  time.ms += performance.now() - t;
}
