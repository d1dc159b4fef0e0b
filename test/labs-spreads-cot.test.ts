import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cotPublishedAt } from '../src/adapters/catalog/labs-items.ts';
import { LabsWriter, catalogLabs } from '../src/adapters/catalog/labs-store.ts';
import type { LabsCotEntry } from '../src/adapters/v20/labs.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import type { Candle } from '../src/domain/candle.ts';
import type { CotEvent, SpreadEvent } from '../src/domain/events.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * Strategies subscribe to OANDA labs spreads and Commitments of Traders: a backtest hands each
 * recorded item of a subscribed instrument to `onSpread` / `onCot` once, at the time it became
 * known (never before, nor before the interval or report it describes), merged by time with the
 * candles; an instrument with no recording stops the backtest naming the command that records it.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const HOUR = 3_600_000;
const FROM = Date.UTC(2024, 0, 8); // a Monday
const TO = FROM + 4 * 24 * HOUR;
const config = loadConfig(undefined, {
  run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
} as never);

async function* candles(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
  const out: Candle[] = [];
  for (let t = q.from; t < q.to; t += HOUR) {
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
  }
  yield out;
}

type Heard = { e: SpreadEvent | CotEvent; now: number; lastCandleAt: number };

function watcher(heard: Heard[], subs: { spreads: readonly string[]; cot: readonly string[] }) {
  return defineStrategy({
    name: 'spread-cot-watcher',
    description: 'keeps the spread and COT events it gets, and when',
    params: {},
    subscribe: () => ({ candles: ['EUR_USD:H1'], spreads: subs.spreads, cot: subs.cot }),
    init: () => ({ last: 0 }),
    onCandle: (ctx) => ({ state: { last: ctx.candle!.at } }),
    onSpread(ctx, s) {
      heard.push({ e: ctx.spread!, now: ctx.now, lastCandleAt: s.last });
      return { state: s };
    },
    onCot(ctx, s) {
      heard.push({ e: ctx.cot!, now: ctx.now, lastCandleAt: s.last });
      return { state: s };
    },
  });
}

const report = (date: number, n: number): LabsCotEntry => ({
  oi: String(500000 + n),
  price: (1.09 + n / 10000).toFixed(5),
  ncs: String(100000 + n),
  ncl: String(200000 + n),
  date,
  unit: 'Contracts Of EUR 125,000',
});

const backtest = (
  heard: Heard[],
  root: string,
  subs: { spreads: readonly string[]; cot: readonly string[] },
) =>
  runBacktest({
    loaded: {
      file: 'inline',
      name: 'spread-cot-watcher',
      strategy: watcher(heard, subs) as never,
      params: {},
    },
    config,
    instruments: loadInstruments(),
    candles,
    available: () => true,
    log: silent,
    labs: catalogLabs(root),
  });

describe('spreads and COT in backtests', () => {
  let delivered = 0;
  it('property: every recorded spread interval and COT report of a subscribed instrument reaches onSpread/onCot once, at its knownAt (never before it, nor before its own time), with its content, merged in time with the candles', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            known: fc.integer({ min: -120, max: 4 * 24 * 60 + 120 }), // minutes from FROM: some before the run, some after it
            own: fc.integer({ min: -3 * 24 * 60, max: 30 }), // the interval's start or report's date, minutes from knownAt (a few after it: a skewed recording)
            cot: fc.boolean(),
            instrument: fc.constantFrom('EUR_USD', 'GBP_USD', 'USD_JPY'),
            avg: fc.integer({ min: 1, max: 400 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (rows) => {
          const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-sc-'));
          const w = await LabsWriter.open(root, { now: 0 });
          // Both subscribed instruments are recorded (a subscription to an unrecorded one is refused: the next test).
          w.append([
            w.identity.spread('EUR_USD', FROM / 1000 - 86_400 * 30, 1, 1, 1, FROM - 86_400_000 * 29)!,
            w.identity.spread('GBP_USD', FROM / 1000 - 86_400 * 30, 1, 1, 1, FROM - 86_400_000 * 29)!,
          ]);
          w.append([
            w.identity.cot('EUR_USD', report(FROM / 1000 - 86_400 * 30, 0), FROM - 86_400_000 * 29)!,
            w.identity.cot('GBP_USD', report(FROM / 1000 - 86_400 * 30, 0), FROM - 86_400_000 * 29)!,
          ]);
          const items = rows
            .map((r, n) => ({ ...r, n, knownAt: FROM + r.known * 60_000 }))
            .sort((a, b) => a.knownAt - b.knownAt)
            .map((r) => {
              const own = Math.floor(r.knownAt / 1000) + r.own * 60 + r.n; // distinct per row: each its own identity
              const item = r.cot
                ? w.identity.cot(r.instrument, report(own, r.n), r.knownAt)
                : w.identity.spread(
                    r.instrument,
                    own,
                    r.avg / 100 - 0.1,
                    r.avg / 100,
                    r.avg / 100 + 2,
                    r.knownAt,
                  );
              if (item === undefined) return undefined; // the same interval or report drawn twice: recorded once
              w.append([item]);
              return { ...r, own: own * 1000 };
            })
            .filter((r) => r !== undefined);
          const heard: Heard[] = [];
          await backtest(heard, root, { spreads: ['EUR_USD', 'GBP_USD'], cot: ['EUR_USD'] });
          const wanted = items.filter((r) =>
            r.cot ? r.instrument === 'EUR_USD' : r.instrument !== 'USD_JPY',
          );
          // Visible at the later of knownAt and its own time (a COT report's: its publication, the
          // Friday after its date, checked by hand in the next test); those visible in [FROM, TO), each once.
          const visible = (r: { cot: boolean; knownAt: number; own: number }): number =>
            Math.max(r.knownAt, r.cot ? cotPublishedAt(r.own) : r.own);
          const expected = wanted.filter((r) => visible(r) >= FROM && visible(r) < TO);
          const keyOf = (e: SpreadEvent | CotEvent): string =>
            `${e.kind}|${e.instrument}|${e.kind === 'spread' ? e.intervalAt : e.reportAt}`;
          expect(heard.map((h) => keyOf(h.e)).sort()).toEqual(
            expected.map((r) => `${r.cot ? 'cot' : 'spread'}|${r.instrument}|${r.own}`).sort(),
          );
          for (const h of heard) {
            const r = expected.find(
              (x) => `${x.cot ? 'cot' : 'spread'}|${x.instrument}|${x.own}` === keyOf(h.e),
            )!;
            // At the time it became known: never earlier, and not later either.
            expect(h.now).toBe(visible(r));
            expect(h.e.at).toBe(h.now);
            expect(h.now).toBeGreaterThanOrEqual(r.knownAt);
            if (h.e.kind === 'spread') {
              expect(h.now).toBeGreaterThanOrEqual(h.e.intervalAt);
              expect([h.e.min, h.e.avg, h.e.max]).toEqual([r.avg / 100 - 0.1, r.avg / 100, r.avg / 100 + 2]);
            } else {
              // Never before its publication (for a Tuesday's report the Friday after: 3 days and more;
              // the generated reports here fall on any weekday, so the rule, not the 3 days, is checked).
              expect(h.now).toBeGreaterThanOrEqual(cotPublishedAt(h.e.reportAt));
              expect(h.e).toMatchObject({
                openInterest: 500000 + r.n,
                nonCommercialShort: 100000 + r.n,
                nonCommercialLong: 200000 + r.n,
                price: Number((1.09 + r.n / 10000).toFixed(5)),
                unit: 'Contracts Of EUR 125,000',
              });
            }
            // Merged by time: the candles closed by then were seen first, none after it.
            expect(h.lastCandleAt).toBeLessThanOrEqual(h.now);
            if (h.lastCandleAt > 0) expect(h.now - h.lastCandleAt).toBeLessThan(HOUR);
          }
          for (let i = 1; i < heard.length; i++)
            expect(heard[i]!.now).toBeGreaterThanOrEqual(heard[i - 1]!.now);
          delivered += heard.length;
        },
      ),
      { numRuns: 20 },
    );
    // The runs delivered items at all (not a property that held because nothing came).
    expect(delivered).toBeGreaterThan(20);
  });

  it('a subscription to an instrument with no recorded spreads or COT stops the backtest naming fxflow record --labs spreads,cot', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-sc-missing-'));
    const w = await LabsWriter.open(root, { now: 0 });
    w.append([w.identity.spread('EUR_USD', FROM / 1000, 0.5, 0.8, 2, FROM + 60_000)!]);
    // Dated Tuesday 2024-01-02 (00:00 New York, as OANDA dates them), published Friday the 5th: known at FROM + 1 min.
    w.append([w.identity.cot('EUR_USD', report(Date.UTC(2024, 0, 2, 5) / 1000, 1), FROM + 60_000)!]);
    await expect(backtest([], root, { spreads: ['EUR_USD', 'GBP_USD'], cot: [] })).rejects.toThrow(
      `the strategy subscribes to spreads of GBP_USD but this catalog holds no recorded labs spreads of it: record them first (fxflow record --labs spreads,cot --instruments GBP_USD --catalog ${root})`,
    );
    await expect(backtest([], root, { spreads: [], cot: ['USD_JPY', 'GBP_USD'] })).rejects.toThrow(
      'the strategy subscribes to cot of GBP_USD,USD_JPY but this catalog holds no recorded labs COT reports of them: record them first (fxflow record --labs spreads,cot',
    );
    // An empty catalog: the same.
    const empty = mkdtempSync(join(tmpdir(), 'fxflow-labs-sc-empty-'));
    await expect(backtest([], empty, { spreads: [], cot: ['EUR_USD'] })).rejects.toThrow(
      'fxflow record --labs spreads,cot --instruments EUR_USD',
    );
    // Both recorded: runs, and hears both.
    const heard: Heard[] = [];
    await backtest(heard, root, { spreads: ['EUR_USD'], cot: ['EUR_USD'] });
    expect(heard.map((h) => [h.e.kind, h.now])).toEqual([
      ['spread', FROM + 60_000],
      ['cot', FROM + 60_000],
    ]);
  });

  it('a COT report is not seen before the CFTC publishes it: Friday 15:30 New York after its Tuesday, whatever its knownAt says', async () => {
    // A file stamped with the reports' own dates (knownAt = the Tuesday), as a hand-made import would be.
    const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-cot-release-'));
    const w = await LabsWriter.open(root, { now: 0 });
    const tuesday = Date.UTC(2024, 0, 9, 5); // Tuesday 2024-01-09 00:00 New York (EST)
    w.append([w.identity.cot('EUR_USD', report(tuesday / 1000, 7), tuesday)!]);
    const heard: Heard[] = [];
    const from = Date.UTC(2024, 0, 8);
    const to = Date.UTC(2024, 0, 15);
    const week = loadConfig(undefined, {
      run: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    } as never);
    await runBacktest({
      loaded: {
        file: 'inline',
        name: 'spread-cot-watcher',
        strategy: watcher(heard, { spreads: [], cot: ['EUR_USD'] }) as never,
        params: {},
      },
      config: week,
      instruments: loadInstruments(),
      candles,
      available: () => true,
      log: silent,
      labs: catalogLabs(root),
    });
    // Friday 2024-01-12 15:30 EST = 20:30 UTC; the candles of Tuesday to Friday afternoon came first.
    expect(heard.map((h) => [h.e.kind, new Date(h.now).toISOString()])).toEqual([
      ['cot', '2024-01-12T20:30:00.000Z'],
    ]);
    expect((heard[0]!.e as CotEvent).reportAt).toBe(tuesday);
    expect(heard[0]!.lastCandleAt).toBe(Date.UTC(2024, 0, 12, 20));
  });

  it("a run with no labs source (a sweep's trial) refuses a spreads or COT subscription instead of running without them", async () => {
    const run = (subs: { spreads: readonly string[]; cot: readonly string[] }) =>
      runBacktest({
        loaded: {
          file: 'inline',
          name: 'spread-cot-watcher',
          strategy: watcher([], subs) as never,
          params: {},
        },
        config,
        instruments: loadInstruments(),
        candles,
        available: () => true,
        log: silent,
      });
    await expect(run({ spreads: ['EUR_USD'], cot: [] })).rejects.toThrow(
      'subscribe.spreads needs recorded labs spreads, and this run has no labs source (sweeps and walk-forward do not read labs)',
    );
    await expect(run({ spreads: [], cot: ['EUR_USD'] })).rejects.toThrow(
      'fxflow record --labs spreads,cot --instruments EUR_USD',
    );
  });
});
