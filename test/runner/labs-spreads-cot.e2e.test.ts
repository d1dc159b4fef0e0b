import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogLabs } from '../../src/adapters/catalog/labs-store.ts';
import { V20Labs, type LabsCotEntry } from '../../src/adapters/v20/labs.ts';
import { runBacktest } from '../../src/app/backtest.ts';
import { loadConfig } from '../../src/app/config.ts';
import type { Candle } from '../../src/domain/candle.ts';
import type { CotEvent, SpreadEvent } from '../../src/domain/events.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { rig, until, type Rig } from './harness.ts';

/**
 * `fxflow run` with a strategy that subscribes to labs spreads and COT: the runner polls the
 * sandbox's /labs/v1/spreads and /labs/v1/commitments_of_traders, hands each interval and report
 * to onSpread/onCot once with what the sandbox serves, stamped on the sandbox's clock; what it
 * delivered (kept in the journal in the catalog's labs format) backtests into the same events.
 */

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const START = Date.UTC(2024, 0, 2, 12); // a Tuesday; the next COT report is dated 2024-01-09 21:00, published 2024-01-12 20:30 UTC
const DAY = 86_400_000;

function watcher(got: (SpreadEvent | CotEvent)[], prices: 'ticks' | 'candles') {
  return defineStrategy({
    name: 'spread-cot-watcher',
    description: 'keeps the spread and COT events it gets',
    params: {},
    subscribe: () => ({
      ...(prices === 'ticks' ? { ticks: ['EUR_USD'] } : { candles: ['EUR_USD:H1'] }),
      spreads: ['EUR_USD'],
      cot: ['EUR_USD'],
    }),
    init: () => ({}),
    onSpread(ctx, s) {
      got.push(ctx.spread!);
      return { state: s };
    },
    onCot(ctx, s) {
      got.push(ctx.cot!);
      return { state: s };
    },
  });
}

const keyOf = (e: SpreadEvent | CotEvent): string =>
  `${e.kind}|${e.instrument}|${e.kind === 'spread' ? e.intervalAt : e.reportAt}`;

describe('spreads and COT in fxflow run', () => {
  it(
    'each spread interval and COT report reaches the strategy once, as the sandbox serves it, never before it existed; the journal backtests into the same events',
    { timeout: 60_000 },
    async () => {
      const live: (SpreadEvent | CotEvent)[] = [];
      r = await rig({ clock: 'manual', start: START });
      const runner = r.runner({
        strategy: watcher(live, 'ticks') as never,
        name: 'spread-cot-watcher',
        params: {},
        labs: new V20Labs(r.http),
        labsPoll: { every: { spreads: 30, cot: 30 }, tickMs: 20, requestsPerMinute: 6000 },
      });
      await runner.start();
      await until(
        () =>
          runner.labsPoller!.stats.polls >= 6 &&
          live.some((e) => e.kind === 'spread') &&
          live.some((e) => e.kind === 'cot'),
        'spreads and COT in the run',
      );
      // What the sandbox serves now, asked of it directly (15-minute intervals for any period up to a day).
      const url = r.sandbox.url;
      const truthSpreads = (await (
        await fetch(`${url}/labs/v1/spreads?instrument=EUR_USD&period=86400`)
      ).json()) as { min: [number, number][]; avg: [number, number][]; max: [number, number][] };
      const truthCot = (
        (await (await fetch(`${url}/labs/v1/commitments_of_traders?instrument=EUR_USD`)).json()) as Record<
          string,
          LabsCotEntry[]
        >
      ).EUR_USD!;
      const firstRound = live.slice();
      expect(firstRound.filter((e) => e.kind === 'cot')).toHaveLength(truthCot.length);
      for (const e of firstRound) {
        if (e.kind === 'spread') {
          const k = truthSpreads.avg.findIndex(([t]) => t * 1000 === e.intervalAt);
          expect(k, `interval ${new Date(e.intervalAt).toISOString()}`).toBeGreaterThanOrEqual(0);
          expect([e.min, e.avg, e.max]).toEqual([
            truthSpreads.min[k]![1],
            truthSpreads.avg[k]![1],
            truthSpreads.max[k]![1],
          ]);
          expect(e.at).toBeGreaterThanOrEqual(e.intervalAt);
        } else {
          const c = truthCot.find((x) => x.date * 1000 === e.reportAt)!;
          expect(e).toMatchObject({
            openInterest: Number(c.oi),
            nonCommercialLong: Number(c.ncl),
            nonCommercialShort: Number(c.ncs),
            price: Number(c.price),
            unit: c.unit,
          });
          expect(e.at).toBeGreaterThanOrEqual(e.reportAt + 3 * DAY);
        }
        // Stamped on the sandbox's clock (2024), not the machine's.
        expect(e.at).toBeLessThanOrEqual(r.sandbox.time());
        expect(e.at).toBeGreaterThan(START - DAY);
      }
      // Past the next report's publication on the sandbox (dated 2024-01-09 21:00, published Friday
      // 2024-01-12 15:30 New York): the new report and the new intervals, each once.
      r.sandbox.advance(11 * DAY);
      await until(
        () => live.some((e) => e.kind === 'cot' && e.reportAt === Date.UTC(2024, 0, 9, 21)),
        'the next COT report',
      );
      const polls = runner.labsPoller!.stats.polls;
      await until(() => runner.labsPoller!.stats.polls >= polls + 4, 'more polls');
      await runner.stop('end');
      const keys = live.map(keyOf);
      expect(new Set(keys).size).toBe(keys.length);
      const report = live.find(
        (e): e is CotEvent => e.kind === 'cot' && e.reportAt === Date.UTC(2024, 0, 9, 21),
      )!;
      expect(report.at).toBeGreaterThanOrEqual(Date.UTC(2024, 0, 12, 20, 30));
      expect(report.at).toBeLessThanOrEqual(r.sandbox.time());
      expect(runner.labsPoller!.stats).toMatchObject({ failures: 0, items: live.length });

      // The same strategy backtested on what the run delivered (the journal's labs folder is a catalog): the same events.
      const bt: (SpreadEvent | CotEvent)[] = [];
      const HOUR = 3_600_000;
      const from = START - 30 * DAY;
      const to = START + 13 * DAY;
      async function* candles(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
        const out: Candle[] = [];
        for (let t = q.from; t < q.to; t += HOUR)
          out.push({
            kind: 'candle',
            instrument: 'EUR_USD',
            granularity: 'H1',
            time: t,
            at: t + HOUR,
            bo: 1.1,
            bh: 1.1005,
            bl: 1.0995,
            bc: 1.1,
            ao: 1.1002,
            ah: 1.1007,
            al: 1.0997,
            ac: 1.1002,
            volume: 10,
            complete: true,
          });
        yield out;
      }
      const config = loadConfig(undefined, {
        run: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
      } as never);
      const silent = { debug() {}, info() {}, warn() {}, error() {} };
      await runBacktest({
        loaded: {
          file: 'inline',
          name: 'spread-cot-watcher',
          strategy: watcher(bt, 'candles') as never,
          params: {},
        },
        config,
        instruments: loadInstruments(),
        candles,
        available: () => true,
        log: silent,
        labs: catalogLabs(join(r.journalDir, 'labs')),
      });
      const byKey = (xs: readonly (SpreadEvent | CotEvent)[]): (SpreadEvent | CotEvent)[] =>
        [...xs].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
      expect(byKey(bt)).toEqual(byKey(live));
    },
  );

  it(
    "before the first price, items are stamped with the labs server's time (the sandbox's 2024), not the machine's clock",
    { timeout: 30_000 },
    async () => {
      const live: (SpreadEvent | CotEvent)[] = [];
      r = await rig({ clock: 'manual', start: START, feed: false }); // no prices: the run's event clock has not started
      const runner = r.runner({
        strategy: watcher(live, 'ticks') as never,
        name: 'spread-cot-watcher',
        params: {},
        labs: new V20Labs(r.http),
        labsPoll: { every: { spreads: 30, cot: 30 }, tickMs: 20 },
      });
      await runner.start();
      await until(() => live.some((e) => e.kind === 'cot'), 'COT reports');
      await runner.stop('end');
      for (const e of live) {
        expect(e.at, `${keyOf(e)} at ${new Date(e.at).toISOString()}`).toBeLessThanOrEqual(r.sandbox.time());
        expect(e.at).toBeGreaterThanOrEqual(e.kind === 'spread' ? e.intervalAt : e.reportAt);
      }
    },
  );
});
