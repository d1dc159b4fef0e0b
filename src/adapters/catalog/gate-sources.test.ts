import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { loadInstruments } from '../../domain/instrument.ts';
import { formatTime } from '../../domain/time.ts';
import type { Tick } from '../../domain/tick.ts';
import { backtest } from '../../app/library.ts';
import { startSandbox } from '../../sandbox/server.ts';
import { Catalog } from './catalog.ts';
import { openTicks } from './formats.ts';
import { gateTicks } from './gate.ts';
import { checkTicks } from './recording-check.ts';
import { TickWriter, ticksDir } from './tick-store.ts';

/**
 * The gate every price source passes (gate.ts), on the sources that used to skip it: the ticks
 * `fxflow record` recorded (a backtest's `--ticks`, `fxflow data check`) and the sandbox's data
 * (`fxflow sandbox --data <catalog>`). A run's recorded inputs (`fxflow replay`) are checked in
 * test/runner/replay-bad-input.e2e.test.ts, on a recording a real runner made.
 */
const dir = mkdtempSync(join(tmpdir(), 'fxflow-gate-sources-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const instruments = loadInstruments();
let n = 0;

/** A catalog with `fxflow record`'s tick files of `folder`: `count` ticks a second apart from `start` at `price`. */
function recording(folder: string, start: number, count: number, price: number, decimals = 5): string {
  const root = join(dir, `rec${n++}`);
  const w = TickWriter.open(root, [folder]);
  for (let i = 0; i < count; i++) {
    const at = start + i * 1000;
    const bid = (price + (i % 7) * 10 ** -decimals).toFixed(decimals);
    const ask = (Number(bid) + 2 * 10 ** -decimals).toFixed(decimals);
    w.add(folder, { time: formatTime(at), at, bid, ask, knownAt: at + 30 });
  }
  w.flush();
  return root;
}

async function drain(source: AsyncIterable<readonly Tick[]>): Promise<number> {
  let k = 0;
  for await (const b of source) k += b.length;
  return k;
}

const TUESDAY = Date.UTC(2024, 0, 9, 10);
const SATURDAY = Date.UTC(2024, 0, 6, 12);

describe('recorded ticks pass the gate', () => {
  it('a good recording passes: read as its instrument, its prices and clock fit', async () => {
    const root = recording('EUR_USD', TUESDAY, 200, 1.0951);
    const path = ticksDir(root, 'EUR_USD');
    expect(
      await drain(
        gateTicks(openTicks(path, { instrument: 'EUR_USD' }), path, {
          instrument: 'EUR_USD',
          instruments,
          fix: 'run',
        }),
      ),
    ).toBe(200);
    expect(checkTicks(root, undefined, instruments)[0]!.problems).toEqual([]);
  });

  it('a recording that lies about its instrument (USD_JPY prices in ticks/EUR_USD) is refused by a backtest and by data check', async () => {
    const root = recording('EUR_USD', TUESDAY, 50, 147.512, 3);
    const path = ticksDir(root, 'EUR_USD');
    const file = join(path, '2024-01-09.csv.gz');
    await expect(
      drain(
        gateTicks(openTicks(path, { instrument: 'EUR_USD' }), path, {
          instrument: 'EUR_USD',
          instruments,
          fix: 'run',
        }),
      ),
    ).rejects.toThrow(
      `${path} (price): EUR_USD trades between 0.7 and 1.8; this file has 147.512 at 2024-01-09T10:00:00.000Z: it holds another instrument (pass the right --instrument)`,
    );
    expect(checkTicks(root, undefined, instruments)[0]!.problems).toEqual([
      `MISMATCH ${file}:2 (price): EUR_USD trades between 0.7 and 1.8; this recording has 147.512 at 2024-01-09T10:00:00.000Z: it is not a recording of EUR_USD (a recording of another instrument, or edited): record it again, or move the files to the folder of the instrument they hold`,
    ]);
  });

  it("a recording's folder read as another instrument is refused by its name", async () => {
    const root = recording('EUR_USD', TUESDAY, 20, 1.0951);
    const path = ticksDir(root, 'EUR_USD');
    expect(() =>
      gateTicks(openTicks(path, { instrument: 'GBP_USD' }), path, {
        instrument: 'GBP_USD',
        instruments,
        fix: 'run',
      }),
    ).toThrow(
      `${path} (instrument): the file's name says EUR_USD, not GBP_USD: run it with --instrument EUR_USD (a file that really holds GBP_USD should be renamed)`,
    );
  });

  it('a recording with prices while the market is closed (a Saturday) is refused, naming the first', async () => {
    const root = recording('EUR_USD', SATURDAY, 40, 1.0951);
    const path = ticksDir(root, 'EUR_USD');
    await expect(
      drain(
        gateTicks(openTicks(path, { instrument: 'EUR_USD' }), path, {
          instrument: 'EUR_USD',
          instruments,
          fix: 'run',
        }),
      ),
    ).rejects.toThrow(
      `${path} (time): 40 of its 40 prices fall while the EUR_USD market is closed (first: Sat 2024-01-06T12:00Z, Sat 2024-01-06T12:00Z, Sat 2024-01-06T12:00Z, Sat 2024-01-06T12:00Z, Sat 2024-01-06T12:00Z): its times are not UTC instants of this market: check the file, and that it holds the instrument named`,
    );
    const problems = checkTicks(root, undefined, instruments)[0]!.problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      new RegExp(
        `^MISMATCH ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(time\\): 40 of its 40 prices fall while the EUR_USD market is closed \\(first: Sat 2024-01-06T12:00Z.*\\): OANDA sends no price while the market is closed`,
      ),
    );
  });
});

describe('a tick backtest (the library, as `fxflow backtest --ticks`) runs its ticks through the gate', () => {
  const hold = join(import.meta.dirname, '../../../test/record-hold-strategy.ts');
  const run = (ticks: string) =>
    backtest(hold, {}, undefined, { run: { from: '2024-01-08', to: '2024-01-12' } }, { ticks, save: false });

  it('a good recording runs; USD_JPY prices recorded as EUR_USD are refused naming the recording', async () => {
    const good = recording('EUR_USD', TUESDAY, 100, 1.0951);
    expect((await run(good)).engine.events).toBeGreaterThan(0);
    const yen = recording('EUR_USD', TUESDAY, 100, 147.512, 3);
    await expect(run(yen)).rejects.toThrow(
      `${yen} (price): EUR_USD trades between 0.7 and 1.8; this file has 147.512 at 2024-01-09T10:00:00.000Z: it holds another instrument (pass the right --instrument)`,
    );
  });
});

/** A catalog whose EUR_USD M1 series holds `candles` as they are (no gate on the way in: a copied or hand-made folder). */
async function catalogWith(candles: Candle[], meta: { instrument?: string } = {}): Promise<string> {
  const root = join(dir, `cat${n++}`);
  await new Catalog(root).write('EUR_USD', 'M1', [candles], {
    meta: {
      synthetic: false,
      sides: 'bid/ask',
      sources: [
        { file: 'x.csv', sha256: '', bytes: 0, format: 'generic', rows: candles.length, importedAt: '' },
      ],
    },
  });
  if (meta.instrument !== undefined) {
    const file = join(root, 'EUR_USD', 'M1', 'series.json');
    const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...s, instrument: meta.instrument }));
  }
  return root;
}

/** `count` candles `step` ms apart from `start` (weekdays of January 2024) around `level`. */
function candles(start: number, count: number, step: number, level = 1.0951): Candle[] {
  const out: Candle[] = [];
  for (let i = 0; i < count; i++) {
    const t = start + i * step;
    const b = Math.round((level + (i % 9) * 1e-5) * 1e5) / 1e5;
    const a = Math.round((b + 2e-5) * 1e5) / 1e5;
    out.push({
      kind: 'candle',
      instrument: 'EUR_USD',
      granularity: 'M1',
      time: t,
      at: t + step,
      bo: b,
      bh: b,
      bl: b,
      bc: b,
      ao: a,
      ah: a,
      al: a,
      ac: a,
      volume: 3,
      complete: true,
    });
  }
  return out;
}

describe("the sandbox's data passes the gate", () => {
  const start = '2024-01-10T00:00:00Z';

  it('a good M1 series starts (manual clock with its prices, and the replay clock)', async () => {
    const data = await catalogWith(candles(Date.UTC(2024, 0, 8), 2000, 60_000));
    for (const clock of ['manual', 'replay'] as const) {
      const sb = await startSandbox({ data, start, clock, port: 0 });
      await sb.close();
    }
  });

  it('H1 candles filed as M1 are refused at the start, as data import refuses the file', async () => {
    const data = await catalogWith(
      candles(Date.UTC(2024, 0, 2), 300, 3_600_000).filter((c) => c.time < Date.UTC(2024, 0, 5, 22)),
    );
    for (const clock of ['manual', 'replay'] as const)
      await expect(
        startSandbox({ data, start: clock === 'manual' ? start : '2024-01-02T00:00:00Z', clock, port: 0 }),
      ).rejects.toThrow(
        /EUR_USD\/M1 \(granularity\): its rows are mostly 1 hour apart \(\d+ of the first \d+ gaps\), not one M1 candle: this is H1 data; import it with --granularity H1/,
      );
  });

  it("another instrument's prices, or a series.json that names another instrument, are refused", async () => {
    const yen = await catalogWith(candles(Date.UTC(2024, 0, 8), 2000, 60_000, 147.512));
    await expect(startSandbox({ data: yen, start, port: 0 })).rejects.toThrow(
      `${join(yen, 'EUR_USD', 'M1')} (price): EUR_USD trades between 0.7 and 1.8; this file has 147.512 at 2024-01-08T00:00:00.000Z: the catalog's EUR_USD series holds another instrument (import the file again with \`fxflow data import … --instrument\` naming the one it holds)`,
    );
    const said = await catalogWith(candles(Date.UTC(2024, 0, 8), 2000, 60_000), { instrument: 'GBP_USD' });
    await expect(startSandbox({ data: said, start, port: 0 })).rejects.toThrow(
      `${join(said, 'EUR_USD', 'M1')} (instrument): the file says it holds GBP_USD, not EUR_USD: import it with --instrument GBP_USD`,
    );
  });
});
