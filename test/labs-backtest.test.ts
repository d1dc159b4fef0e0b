import fc from 'fast-check';
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabsWriter, catalogLabs } from '../src/adapters/catalog/labs-store.ts';
import type { AutochartistSignal } from '../src/adapters/v20/labs.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import type { Candle } from '../src/domain/candle.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * `fxflow backtest` replays recorded labs items to strategies that subscribe to them, merged by
 * time with the candles, each at the time it became known and never earlier (an actual value not
 * before its release, a pattern not before it was first seen).
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const HOUR = 3_600_000;
const FROM = Date.UTC(2024, 0, 8); // a Monday
const TO = FROM + 4 * 24 * HOUR;

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

const sig = (id: number, end: number): AutochartistSignal => ({
  id,
  instrument: 'EUR_USD',
  type: 'chartpattern',
  meta: { direction: -1, probability: 60, pattern: 'Wedge', interval: 60, completed: 1 },
  data: { patternendtime: end },
});

interface Seen {
  kind: string;
  name: string;
  now: number;
  lastCandleAt: number;
  actual?: string;
  releaseAt?: number;
  patternEndAt?: number;
}

function watcher(seen: Seen[]) {
  return defineStrategy({
    name: 'labs-watcher',
    description: 'records what it is given and when',
    params: {},
    subscribe: () => ({ candles: ['EUR_USD:H1'], calendar: ['USD'], signals: ['EUR_USD'] }),
    init: () => ({ last: 0 }),
    onCandle: (ctx) => ({ state: { last: ctx.candle!.at } }),
    onCalendar(ctx, s) {
      const c = ctx.calendar!;
      seen.push({
        kind: 'calendar',
        name: c.title,
        now: ctx.now,
        lastCandleAt: s.last,
        ...(c.actual !== undefined ? { actual: c.actual } : {}),
        releaseAt: c.releaseAt!,
      });
      return { state: s };
    },
    onSignal(ctx, s) {
      const g = ctx.signal!;
      seen.push({
        kind: 'signal',
        name: String(g.data!.id),
        now: ctx.now,
        lastCandleAt: s.last,
        patternEndAt: g.data!.patternEndAt as number,
      });
      return { state: s };
    },
  });
}

describe('recorded labs in backtests', () => {
  it('property: every recorded item reaches the strategy once, never before it became known, an actual never before its release, in time order with the candles', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            known: fc.integer({ min: 0, max: 4 * 24 * 60 - 1 }),
            release: fc.integer({ min: -600, max: 600 }),
            actual: fc.boolean(),
            signal: fc.boolean(),
            other: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        async (rows) => {
          const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-bt-'));
          const w = await LabsWriter.open(root, { now: 0 });
          const sorted = rows
            .map((r, n) => ({ ...r, n, knownAt: FROM + r.known * 60_000 }))
            .sort((a, b) => a.knownAt - b.knownAt);
          const knownAt = new Map<string, number>();
          for (const r of sorted) {
            const rel = Math.floor(r.knownAt / 1000) + r.release * 60;
            const item = r.signal
              ? w.identity.signal(sig(r.n, rel), r.knownAt)!
              : w.identity.calendar(
                  {
                    title: `E${r.n}`,
                    timestamp: rel,
                    currency: r.other ? 'JPY' : 'USD',
                    impact: 3,
                    ...(r.actual ? { actual: '1.5' } : {}),
                  },
                  r.knownAt,
                )!;
            knownAt.set(r.signal ? `signal ${r.n}` : `calendar E${r.n}`, r.knownAt);
            w.append([item]);
          }
          const seen: Seen[] = [];
          const config = loadConfig(undefined, {
            run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
          } as never);
          await runBacktest({
            loaded: { file: 'inline', name: 'labs-watcher', strategy: watcher(seen) as never, params: {} },
            config,
            instruments: loadInstruments(),
            candles,
            available: () => true,
            log: silent,
            labs: catalogLabs(root),
          });
          // Exactly the subscribed items (JPY calendar entries are not), each once.
          // An item that becomes visible only after the period (a late release) is not delivered.
          const visible = (r: (typeof sorted)[number]): number =>
            r.signal || r.actual
              ? Math.max(r.knownAt, (Math.floor(r.knownAt / 1000) + r.release * 60) * 1000)
              : r.knownAt;
          const expected = sorted
            .filter((r) => (r.signal || !r.other) && visible(r) < TO)
            .map((r) => (r.signal ? `signal ${r.n}` : `calendar E${r.n}`))
            .sort();
          expect(seen.map((s) => `${s.kind} ${s.name}`).sort()).toEqual(expected);
          for (const s of seen) {
            expect(s.now).toBeGreaterThanOrEqual(knownAt.get(`${s.kind} ${s.name}`)!);
            if (s.actual !== undefined) expect(s.now).toBeGreaterThanOrEqual(s.releaseAt!);
            if (s.kind === 'signal') expect(s.now).toBeGreaterThanOrEqual(s.patternEndAt!);
            // Merged by time: the candles closed before the item are seen first, none after it.
            expect(s.lastCandleAt).toBeLessThanOrEqual(s.now);
            if (s.lastCandleAt === 0) expect(s.now).toBeLessThan(FROM + HOUR);
            else expect(s.now - s.lastCandleAt).toBeLessThan(HOUR);
          }
          for (let i = 1; i < seen.length; i++) expect(seen[i]!.now).toBeGreaterThanOrEqual(seen[i - 1]!.now);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('a damaged recording stops the backtest with a message naming the file and line', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-bad-'));
    const w = await LabsWriter.open(root, { now: 0 });
    w.append([
      w.identity.calendar(
        { title: 'CPI', timestamp: FROM / 1000 + 7200, currency: 'USD', impact: 3 },
        FROM + 60_000,
      )!,
    ]);
    const file = join(root, 'labs', 'calendar', '2024-01.jsonl');
    appendFileSync(
      file,
      '{"kind":"calendar","knownAt":1704700000000,"key":"USD|1|x","version":1,"entry":{"title":"x","timestamp":"soon","currency":"USD","impact":3}}\n',
    );
    const config = loadConfig(undefined, {
      run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
    } as never);
    const seen: Seen[] = [];
    await expect(
      runBacktest({
        loaded: { file: 'inline', name: 'labs-watcher', strategy: watcher(seen) as never, params: {} },
        config,
        instruments: loadInstruments(),
        candles,
        available: () => true,
        log: silent,
        labs: catalogLabs(root),
      }),
    ).rejects.toThrow(`${file}:2 (entry): must be a labs calendar entry`);
  });

  it('--spread labs: mid-only candles get the recorded labs spread of the interval they start in; none recorded is a clear error', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-spread-'));
    const w = await LabsWriter.open(root, { now: 0 });
    const pipsAt = (k: number): number => 0.6 + (k % 5) * 0.4; // 6-hour intervals
    for (let k = -1; k * 6 * HOUR < TO - FROM; k++) {
      const t = (FROM + k * 6 * HOUR) / 1000;
      w.append([
        w.identity.spread(
          'EUR_USD',
          t,
          pipsAt(k) - 0.2,
          pipsAt(k),
          pipsAt(k) + 1,
          FROM + (k + 1) * 6 * HOUR,
        )!,
      ]);
    }
    async function* mid(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
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
          ao: 1.1,
          ah: 1.1005,
          al: 1.0995,
          ac: 1.1,
          volume: 10,
          complete: true,
        });
      yield out;
    }
    const spreads: { time: number; pips: number }[] = [];
    const probe = defineStrategy({
      name: 'spread-probe',
      description: 'keeps each candle spread',
      params: {},
      subscribe: () => ({ candles: ['EUR_USD:H1'] }),
      init: () => ({}),
      onCandle: (ctx, st) => {
        spreads.push({ time: ctx.candle!.time, pips: (ctx.candle!.ac - ctx.candle!.bc) / 0.0001 });
        return { state: st };
      },
    });
    const config = loadConfig(undefined, {
      run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
      data: { spread: 'labs' },
    } as never);
    const run = (labs: ReturnType<typeof catalogLabs>) =>
      runBacktest({
        loaded: { file: 'inline', name: 'spread-probe', strategy: probe as never, params: {} },
        config,
        instruments: loadInstruments(),
        candles: mid,
        available: () => true,
        log: silent,
        labs,
      });
    const r = await run(catalogLabs(root));
    expect(r.data.spreadModel.kind).toBe('labs');
    expect(spreads.length).toBe((TO - FROM) / HOUR);
    for (const s of spreads)
      expect(Math.abs(s.pips - pipsAt(Math.floor((s.time - FROM) / (6 * HOUR))))).toBeLessThanOrEqual(0.11);
    await expect(run(catalogLabs(mkdtempSync(join(tmpdir(), 'fxflow-labs-none-'))))).rejects.toThrow(
      /no recorded labs spreads of EUR_USD .*fxflow record --instruments EUR_USD --labs spreads/,
    );
  });
});
