import { describe, expect, it } from 'vitest';
import { syntheticBatches } from '../adapters/catalog/synthetic.ts';
import { loadConfig } from '../app/config.ts';
import { loadStrategy } from '../app/load-strategy.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { runBacktest, type PricedSeries } from '../app/backtest.ts';
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
    const series = await decodeSeries(
      'EUR_USD',
      'H1',
      (async function* () {
        for (const b of syntheticBatches({
          instrument: 'EUR_USD',
          granularity: 'H1',
          from: FROM,
          to: TO,
          seed: 3,
        }))
          yield b.filter((c) => c.time < HOLE_FROM || c.time >= HOLE_TO);
      })(),
    );
    const loaded = await loadStrategy('strategies/sma-cross.ts', []);
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-04-01' },
      costs: { financing: false },
    });
    const instruments = loadInstruments();
    const shared = new Map([['EUR_USD:H1', series]]);
    const trial = (fast: number, map = shared) =>
      runTrial({
        loaded,
        params: { ...loaded.params, fast, slow: 30, granularity: 'H1' },
        config,
        instruments,
        series: map,
      });
    // The second and third trials reuse the first's watch; a new map (another sweep) watches again.
    const first = await trial(5);
    const second = await trial(10);
    const third = await trial(5);
    const fresh10 = await trial(10, new Map(shared));
    expect(first.metrics.data!.coverage.holes).toEqual([
      {
        instrument: 'EUR_USD',
        granularity: 'H1',
        from: expect.stringMatching(/^2024-02-0[67]T/),
        to: expect.stringMatching(/^2024-02-0[89]T/),
        openHours: expect.any(Number),
      },
    ]);
    expect(third).toEqual({
      ...first,
      wallMs: third.wallMs,
      candleMs: third.candleMs,
      setupMs: third.setupMs,
    });
    expect(second).toEqual({
      ...fresh10,
      wallMs: second.wallMs,
      candleMs: second.candleMs,
      setupMs: second.setupMs,
    });
    expect(second.metrics.data).toEqual(first.metrics.data);
    expect(second.metrics.trades).toBeGreaterThan(0);

    // runBacktest's hook: the first run adds its finished watch; the next reuses it (the same object, not watched again).
    const watches = new Map<string, SeriesWatch>();
    const run = () =>
      runBacktest({
        loaded: { ...loaded, params: { ...loaded.params, fast: 5, slow: 30, granularity: 'H1' } },
        config,
        instruments,
        log: { debug() {}, info() {}, warn() {}, error() {} },
        watches,
        candles: (req) =>
          (async function* () {
            yield* seriesBatches(series, req.from, req.to);
          })(),
      });
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

describe('candles built and priced once per worker', () => {
  const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
  // Bid-only data (ask = bid), as a one-sided source gives it: the spread model has work to do.
  const bidOnly = async () => ({
    ...(await decodeSeries(
      'EUR_USD',
      'H1',
      (async function* () {
        for (const b of syntheticBatches({
          instrument: 'EUR_USD',
          granularity: 'H1',
          from: FROM,
          to: TO,
          seed: 5,
        }))
          yield b.map((c) => ({ ...c, ao: c.bo, ah: c.bh, al: c.bl, ac: c.bc }));
      })(),
    )),
    origin: { source: 'test', sides: 'bid', synthetic: true },
  });
  const configAt = (spreadPips: number) =>
    loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-04-01' },
      costs: { financing: false },
      data: { spread: 'fixed', spreadPips },
    });

  it('a 20-point sweep on kept candles gives the answers of trials that each build their own', async () => {
    const series = await bidOnly();
    const loaded = await loadStrategy('strategies/sma-cross.ts', []);
    const config = configAt(1.2);
    const instruments = loadInstruments();
    const shared = new Map([['EUR_USD:H1', series]]);
    const points = [5, 10, 15, 20].flatMap((fast) =>
      [30, 40, 50, 60, 80].map((slow) => ({ ...loaded.params, fast, slow, granularity: 'H1' })),
    );
    const same = ({ wallMs, candleMs, setupMs, ...rest }: Awaited<ReturnType<typeof runTrial>>) => (
      void wallMs,
      void candleMs,
      void setupMs,
      rest
    );
    let trades = 0;
    for (const params of points) {
      const t0 = performance.now();
      const kept = await runTrial({ loaded, params, config, instruments, series: shared });
      const keptMs = performance.now() - t0;
      // A map of its own: nothing kept, the candles built from the columns and priced (the path before).
      const t1 = performance.now();
      const own = await runTrial({ loaded, params, config, instruments, series: new Map(shared) });
      const ownMs = performance.now() - t1;
      expect(same(kept)).toEqual(same(own));
      expect(kept.candleMs).toBeGreaterThanOrEqual(0);
      // The set-up holds the time spent getting the candles, and the whole trial holds the set-up.
      // Set-up and the strategy's run (wallMs less candleMs) make the whole trial, as timed here around it.
      for (const [t, ms] of [
        [kept, keptMs],
        [own, ownMs],
      ] as const) {
        expect(t.setupMs).toBeGreaterThanOrEqual(t.candleMs);
        expect(t.setupMs + t.wallMs - t.candleMs).toBeLessThanOrEqual(ms);
      }
      trades += kept.metrics.trades;
    }
    expect(trades).toBeGreaterThan(0);
  });

  it('runBacktest feeds the kept candles without reading the source again, and prices again when the spread model changes', async () => {
    const series = await bidOnly();
    const loaded = await loadStrategy('strategies/sma-cross.ts', []);
    const instruments = loadInstruments();
    const origin = () => series.origin;
    let reads = 0;
    const candles = (req: { from: number; to: number }) => {
      reads++;
      return (async function* () {
        yield* seriesBatches(series, req.from, req.to);
      })();
    };
    const run = (
      spreadPips: number,
      keep?: {
        watches: Map<string, SeriesWatch>;
        priced: Map<string, PricedSeries>;
        pricedMaxCandles?: number;
      },
    ) =>
      runBacktest({
        loaded: { ...loaded, params: { ...loaded.params, fast: 5, slow: 30, granularity: 'H1' } },
        config: configAt(spreadPips),
        instruments,
        log: SILENT,
        origin,
        candles,
        keepTransactions: true,
        ...keep,
      });
    const keep = { watches: new Map<string, SeriesWatch>(), priced: new Map<string, PricedSeries>() };
    const plain = await run(1.2);
    expect(reads).toBe(1);
    const first = await run(1.2, keep);
    expect(reads).toBe(2);
    expect([...keep.priced.keys()]).toEqual(['EUR_USD:H1']);
    const kept = keep.priced.get('EUR_USD:H1')!;
    const batches = kept.batches!;
    expect(batches.reduce((n, b) => n + b.length, 0)).toBe(series.length);
    // Priced: the ask is 1.2 pips above the bid (bid-only data keeps its bid).
    expect(batches[0]![0]!.ac - batches[0]![0]!.bc).toBeCloseTo(0.00012, 8);
    const second = await run(1.2, keep);
    expect(reads).toBe(2); // the source is not read again
    expect(keep.priced.get('EUR_USD:H1')).toBe(kept);
    for (const r of [first, second]) {
      expect(r.summary).toEqual(plain.summary);
      expect(r.transactions).toEqual(plain.transactions);
      expect(r.equity).toEqual(plain.equity);
    }
    expect(second.candleMs).toBeGreaterThanOrEqual(0);
    // Another spread: read and priced again, as a plain run at that spread; nothing kept, the spread marked.
    const plainWider = await run(3);
    expect(reads).toBe(3);
    const wider = await run(3, keep);
    expect(reads).toBe(4);
    expect(wider.transactions).toEqual(plainWider.transactions);
    expect(wider.summary).toEqual(plainWider.summary);
    expect(wider.summary).not.toEqual(plain.summary);
    expect(keep.priced.get('EUR_USD:H1')!.batches).toBeUndefined();
    // A spread that changes from run to run (swept) is never kept: each run reads and prices its own.
    for (const pips of [1.2, 3, 1.2]) {
      const before = reads;
      await run(pips, keep);
      expect(reads).toBe(before + 1);
      expect(keep.priced.get('EUR_USD:H1')!.batches).toBeUndefined();
    }
    // The same spread twice in a row: the second run keeps, the third reads nothing.
    await run(1.2, keep);
    expect(keep.priced.get('EUR_USD:H1')!.batches).toBeDefined();
    const at = reads;
    const again = await run(1.2, keep);
    expect(reads).toBe(at);
    expect(again.transactions).toEqual(plain.transactions);

    // More candles than pricedMaxCandles: nothing kept, every run reads and prices them, the same answers.
    const small = {
      watches: new Map<string, SeriesWatch>(),
      priced: new Map<string, PricedSeries>(),
      pricedMaxCandles: series.length - 1,
    };
    for (let i = 0; i < 3; i++) {
      const before = reads;
      const r = await run(1.2, small);
      expect(reads).toBe(before + 1);
      expect(small.priced.get('EUR_USD:H1')).toEqual({ key: expect.any(String), over: true });
      expect(r.transactions).toEqual(plain.transactions);
    }
  });
});
