import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/catalog.ts';
import { openCandles } from '../src/adapters/catalog/formats.ts';
import { resampled } from '../src/adapters/catalog/resample.ts';
import { backtest } from '../src/app/library.ts';
import { dataCatalog } from '../src/app/sources.ts';
import { strategyFrame } from '../src/cli/errors.ts';
import type { Candle } from '../src/domain/candle.ts';
import { DEFAULT_ALIGNMENT } from '../src/domain/granularity.ts';

/** Issue 25, the smaller items of "Why" 6 (the crossed rows counted twice: test/data-layer.test.ts). */
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-why6-'));
const ROOT = resolve(import.meta.dirname, '..');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function m1(instrument: string, from: number, count: number): Candle[] {
  const out: Candle[] = [];
  for (let i = 0; i < count; i++) {
    const t = from + i * 60_000;
    const b = 0.7 + (i % 7) * 0.0001;
    out.push({
      kind: 'candle',
      instrument,
      granularity: 'M1',
      time: t,
      at: t + 60_000,
      bo: b,
      bh: b + 0.0002,
      bl: b - 0.0002,
      bc: b,
      ao: b + 0.0001,
      ah: b + 0.0003,
      al: b - 0.0001,
      ac: b + 0.0001,
      volume: 1,
      complete: true,
    });
  }
  return out;
}

describe('the smaller items', () => {
  it('a crossed row names the fields that cross (here the high), not the open and close', async () => {
    const f = join(tmp, 'crossed.csv');
    writeFileSync(
      f,
      'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume\n2024-01-02T10:00:00Z,1.1,1.1050,1.0990,1.1010,1.1001,1.1040,1.0991,1.1011,5\n',
    );
    const read = async (): Promise<void> => {
      for await (const _ of openCandles(f, { instrument: 'EUR_USD', granularity: 'H1' })) void _;
    };
    await expect(read()).rejects.toThrow(
      `${f}:2 (ask): the bid is above the ask (bid high 1.105 > ask high 1.104): check`,
    );
  });

  it('the partial first candle of a resample is left out: M1 from 10:30 gives H1 from 11:00', async () => {
    const root = join(tmp, 'resample');
    const cat = new Catalog(root);
    await cat.write('EUR_USD', 'M1', [m1('EUR_USD', Date.UTC(2024, 0, 2, 10, 30), 150)], {
      meta: { synthetic: true, sides: 'bid/ask', sources: [] },
    });
    const out: Candle[] = [];
    for await (const b of resampled(cat, 'EUR_USD', 'M1', 'H1', DEFAULT_ALIGNMENT)) out.push(...b);
    expect(out.map((c) => new Date(c.time).toISOString())).toEqual([
      '2024-01-02T11:00:00.000Z',
      '2024-01-02T12:00:00.000Z',
    ]);
  });

  it('NZD_USD H1 missing for the period is told as H1 (built from the M1 held), not "no NZD_USD M1 candles"', async () => {
    const root = join(tmp, 'nzd');
    await new Catalog(root).write('NZD_USD', 'M1', [m1('NZD_USD', Date.UTC(2014, 4, 5), 100)], {
      meta: { synthetic: true, sides: 'bid/ask', sources: [] },
    });
    const c = await dataCatalog(root);
    expect(() =>
      c.candles({
        instrument: 'NZD_USD',
        granularity: 'H1',
        from: Date.UTC(2024, 0, 1),
        to: Date.UTC(2025, 0, 1),
      }),
    ).toThrow(
      'no NZD_USD H1 candles between 2024-01-01 and 2025-01-01: the catalog holds no NZD_USD H1, and the NZD_USD M1 it would build H1 from covers 2014-05 to 2014-05. Choose --from/--to inside that, or get the period with `fxflow data download --instrument NZD_USD --granularity H1 --from 2024-01-01 --to 2025-01-01`',
    );
  });

  it("a zero-units error points at the strategy's line, not at src/engine/context.ts", () => {
    const stack = [
      'RangeError: order units must be a non-zero finite number, got 0',
      `    at StrategyContext.#units (${ROOT}/src/engine/context.ts:233:55)`,
      `    at StrategyContext.market (${ROOT}/src/engine/context.ts:250:20)`,
      `    at onCandle (${ROOT}/strategies/zero.ts:9:17)`,
      `    at Engine.#call (${ROOT}/src/engine/engine.ts:440:14)`,
    ].join('\n');
    expect(strategyFrame(stack)).toBe(`at onCandle (${ROOT}/strategies/zero.ts:9:17)`);
  });

  it('a refused backtest leaves no run folder', async () => {
    const csv = join(tmp, 'mid.csv');
    writeFileSync(
      csv,
      'time,o,h,l,c\n2024-03-01T10:00:00Z,1.1,1.101,1.099,1.1005\n2024-03-01T11:00:00Z,1.1005,1.102,1.1,1.101\n',
    );
    const dir = join(tmp, 'run-refused');
    // One-sided data under the native spread model: refused, asking for a spread model.
    await expect(
      backtest(
        join(ROOT, 'strategies/sma-cross.ts'),
        {},
        { file: csv, side: 'mid' },
        { run: { from: '2024-03-01', to: '2024-03-02' } },
        { save: dir, log: quiet },
      ),
    ).rejects.toThrow(/needs a spread model/);
    expect(existsSync(dir)).toBe(false);
  });
});
