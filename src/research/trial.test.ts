import { describe, expect, it } from 'vitest';
import { syntheticBatches } from '../adapters/catalog/synthetic.ts';
import { loadConfig } from '../app/config.ts';
import { loadStrategy } from '../app/load-strategy.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { runBacktest } from '../app/backtest.ts';
import type { SeriesWatch } from '../app/series-watch.ts';
import { decodeSeries, seriesBatches } from './shared-series.ts';
import { runTrial } from './trial.ts';

const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2024, 3, 1);
// A hole beyond the weekend: Wednesday 2024-02-07 and Thursday 2024-02-08 are missing.
const HOLE_FROM = Date.UTC(2024, 1, 7);
const HOLE_TO = Date.UTC(2024, 1, 9);

describe('runTrial', () => {
  it('a worker watches a shared series once: later trials on it reuse its holes, coverage and sides, and their figures are those of a fresh run', async () => {
    const series = await decodeSeries('EUR_USD', 'H1', (async function* () {
      for (const b of syntheticBatches({ instrument: 'EUR_USD', granularity: 'H1', from: FROM, to: TO, seed: 3 })) yield b.filter((c) => c.time < HOLE_FROM || c.time >= HOLE_TO);
    })());
    const loaded = await loadStrategy('strategies/sma-cross.ts', []);
    const config = loadConfig(undefined, { run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-04-01' }, costs: { financing: false } });
    const instruments = loadInstruments();
    const shared = new Map([['EUR_USD:H1', series]]);
    const trial = (fast: number, map = shared) => runTrial({ loaded, params: { ...loaded.params, fast, slow: 30, granularity: 'H1' }, config, instruments, series: map });
    // The second and third trials reuse the first's watch; a new map (another sweep) watches again.
    const first = await trial(5);
    const second = await trial(10);
    const third = await trial(5);
    const fresh10 = await trial(10, new Map(shared));
    expect(first.metrics.data!.coverage.holes).toEqual([{ instrument: 'EUR_USD', granularity: 'H1', from: expect.stringMatching(/^2024-02-0[67]T/), to: expect.stringMatching(/^2024-02-0[89]T/), openHours: expect.any(Number) }]);
    expect(third).toEqual({ ...first, wallMs: third.wallMs });
    expect(second).toEqual({ ...fresh10, wallMs: second.wallMs });
    expect(second.metrics.data).toEqual(first.metrics.data);
    expect(second.metrics.trades).toBeGreaterThan(0);

    // runBacktest's hook: the first run adds its finished watch; the next reuses it (the same object, not watched again).
    const watches = new Map<string, SeriesWatch>();
    const run = () => runBacktest({ loaded: { ...loaded, params: { ...loaded.params, fast: 5, slow: 30, granularity: 'H1' } }, config, instruments, log: { debug() {}, info() {}, warn() {}, error() {} }, watches,
      candles: (req) => (async function* () {
        yield* seriesBatches(series, req.from, req.to);
      })() });
    const a = await run();
    expect([...watches.keys()]).toEqual([`EUR_USD:H1:${FROM}:${TO}:native:false`]);
    const w = watches.get(`EUR_USD:H1:${FROM}:${TO}:native:false`)!;
    expect(w.rows).toBe(series.length);
    const b = await run();
    expect(watches.get(`EUR_USD:H1:${FROM}:${TO}:native:false`)).toBe(w);
    expect(w.rows).toBe(series.length); // not read a second time
    expect(b.summary).toEqual(a.summary);
  });
});
