import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { granularityMs, type Granularity } from '../../domain/granularity.ts';
import { loadInstruments } from '../../domain/instrument.ts';
import { openCandles, type ReadOptions } from './formats.ts';
import { gateFiles, type GateAsk } from './gate.ts';
import { dataFiles } from './import-checks.ts';

/**
 * The one gate every price source passes (gate.ts), on real files: what the files say about
 * themselves, the rows' spacing, prices and clock, and files with no rows.
 */
const dir = mkdtempSync(join(tmpdir(), 'fxflow-gate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const instruments = loadInstruments();
const eurusd = instruments.get('EUR_USD');
const HEADER = 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume';

/** `n` two-sided rows `g` apart from `start`, skipping the times EUR_USD's market is closed; prices at 5 decimals around `level`. */
function rows(g: Granularity, n: number, start = Date.UTC(2024, 0, 8), level = 1.1): string[] {
  const out: string[] = [];
  const step = granularityMs(g);
  for (let t = start; out.length < n; t += step) {
    if (!eurusd.hours.isOpen(t) || !eurusd.hours.isOpen(t + step - 1)) continue;
    const b = (level * 1e5 + (out.length % 17)) / 1e5;
    const p = (x: number): string => x.toFixed(5);
    out.push(
      `${new Date(t).toISOString().slice(0, 19)}Z,${p(b)},${p(b + 0.0002)},${p(b - 0.0002)},${p(b + 0.0001)},${p(b + 0.0001)},${p(b + 0.0003)},${p(b - 0.0001)},${p(b + 0.0002)},5`,
    );
  }
  return out;
}

let n = 0;
function file(name: string, lines: readonly string[]): string {
  const sub = join(dir, `f${n++}`);
  mkdirSync(sub);
  const path = join(sub, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const ask = (
  granularity: Granularity,
  fix: 'import' | 'run' = 'run',
  more: Partial<GateAsk> = {},
): GateAsk => ({ instrument: 'EUR_USD', granularity, instruments, read: 'UTC', fix, ...more });

/** Everything the gate hands on from `path` (a file or folder), asked as `a`; `opened` counts the files the reader opened. */
async function gated(path: string, a: GateAsk, opened = { n: 0 }): Promise<Candle[]> {
  const o = (whole: boolean): ReadOptions => ({
    instrument: a.instrument,
    granularity: a.granularity,
    ...(!whole && a.from !== undefined ? { from: a.from } : {}),
    ...(!whole && a.to !== undefined ? { to: a.to } : {}),
  });
  const out: Candle[] = [];
  for await (const b of gateFiles(dataFiles(path), path, a, (f, whole) => {
    opened.n++;
    return openCandles(f, o(whole));
  }))
    out.push(...b);
  return out;
}

describe('the price gate', () => {
  it('hands on the rows of a file that is what it is asked as, unchanged', async () => {
    const path = file('eurusd-m5.csv', [HEADER, ...rows('M5', 3000)]);
    const direct: Candle[] = [];
    for await (const b of openCandles(path, { instrument: 'EUR_USD', granularity: 'M5' })) direct.push(...b);
    expect(await gated(path, ask('M5'))).toEqual(direct);
    expect(direct).toHaveLength(3000);
  });

  it('property: rows of one granularity pass when asked as it, and are refused naming it when asked as another', async () => {
    const G: Granularity[] = ['M1', 'M5', 'M15', 'M30', 'H1', 'H4'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...G),
        fc.constantFrom(...G),
        fc.integer({ min: 20, max: 400 }),
        fc.constantFrom<'import' | 'run'>('import', 'run'),
        async (actual, asked, count, fix) => {
          // A name that says nothing: only the rows' spacing tells.
          const path = file('prices.csv', [HEADER, ...rows(actual, count)]);
          const run = gated(path, ask(asked, fix));
          if (actual === asked) {
            expect(await run).toHaveLength(count);
            return;
          }
          const how =
            fix === 'run' ? `run it with --granularity ${actual}` : `import it with --granularity ${actual}`;
          await expect(run).rejects.toThrow(`${path} (granularity): its rows are mostly`);
          await expect(gated(path, ask(asked, fix))).rejects.toThrow(
            `not one ${asked} candle: this is ${actual} data; ${how}`,
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a file whose name or fields say another instrument or granularity before reading a row, worded for the command', async () => {
    const opened = { n: 0 };
    const gbp = file('GBP_USD_M1.csv', [HEADER, ...rows('M1', 50)]);
    await expect(gated(gbp, ask('M1'), opened)).rejects.toThrow(
      `${gbp} (instrument): the file's name says GBP_USD, not EUR_USD: run it with --instrument GBP_USD`,
    );
    await expect(gated(gbp, ask('M1', 'import'), opened)).rejects.toThrow(
      "the file's name says GBP_USD, not EUR_USD: import it with --instrument GBP_USD",
    );
    const m1 = file('EUR_USD_M1.csv', [HEADER, ...rows('M1', 50)]);
    await expect(gated(m1, ask('H1'), opened)).rejects.toThrow(
      `${m1} (granularity): the file's name says M1, not H1: run it with --granularity M1 (or import it with \`fxflow data import\`: a backtest on the catalog builds H1 candles from M1)`,
    );
    const json = file('candles.json', [
      JSON.stringify({
        instrument: 'USD_JPY',
        granularity: 'M1',
        candles: [
          {
            time: '2024-01-08T10:00:00Z',
            complete: true,
            volume: 1,
            mid: { o: '144.100', h: '144.200', l: '144.000', c: '144.150' },
          },
        ],
      }),
    ]);
    await expect(gated(json, ask('M1'), opened)).rejects.toThrow(
      `${json} (instrument): the file says it holds USD_JPY, not EUR_USD: run it with --instrument USD_JPY`,
    );
    expect(opened.n).toBe(0);
    // A folder: every file's name is checked before the first file is read.
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a-eurusd.csv'), `${HEADER}\n${rows('M1', 20).join('\n')}\n`);
    writeFileSync(
      join(folder, 'b-usdjpy.csv'),
      `${HEADER}\n${rows('M1', 20, Date.UTC(2024, 0, 9)).join('\n')}\n`,
    );
    await expect(gated(folder, ask('M1'), opened)).rejects.toThrow(
      `${join(folder, 'b-usdjpy.csv')} (instrument): the file's name says USD_JPY, not EUR_USD`,
    );
    expect(opened.n).toBe(0);
  });

  it("refuses prices outside the instrument's band and a clock that puts bars in the market's closures", async () => {
    const yen = file('prices.csv', [HEADER, ...rows('M1', 50, Date.UTC(2024, 0, 8), 150)]);
    await expect(gated(yen, ask('M1'))).rejects.toThrow(
      `${yen} (price): EUR_USD trades between 0.7 and 1.8; this file has 150.0001 at 2024-01-08T00:00:00.000Z: it holds another instrument (pass the right --instrument)`,
    );
    // Rows written three hours ahead of UTC and read as UTC: Friday evening's bars fall in the weekend.
    const ahead = rows('M5', 3000).map(
      (r) =>
        `${new Date(Date.parse(r.slice(0, 20)) + 3 * 3_600_000).toISOString().slice(0, 19)}Z${r.slice(20)}`,
    );
    const shifted = file('prices.csv', [HEADER, ...ahead]);
    await expect(gated(shifted, ask('M5'))).rejects.toThrow(
      /\(time\): [\d,]+ of its 3,000 bars fall while the EUR_USD market is closed when its times are read as UTC .* read it with --timezone \+03:00, which fits every week/,
    );
  });

  it('a file with no rows says so, naming it; rows outside the period: the import says so, a run is left to say which period', async () => {
    const empty = file('eurusd.csv', [HEADER, '', '']);
    await expect(gated(empty, ask('M1', 'import'))).rejects.toThrow(
      `${empty}: the file has no rows (a header or empty lines only): nothing to import; check that it is the file meant`,
    );
    await expect(gated(empty, ask('M1', 'run'))).rejects.toThrow(
      `${empty}: the file has no rows (a header or empty lines only): nothing to run on`,
    );
    const some = file('eurusd.csv', [HEADER, ...rows('M1', 30)]);
    const later = { from: Date.UTC(2025, 0, 1), to: Date.UTC(2025, 1, 1) };
    await expect(gated(some, ask('M1', 'import', later))).rejects.toThrow(
      `${some}: it has no rows in the period asked (--from/--to from 2025-01-01T00:00:00.000Z to 2025-02-01T00:00:00.000Z): give a period the file covers`,
    );
    expect(await gated(some, ask('M1', 'run', later))).toEqual([]);
    // Rows the reader would refuse (one-sided where a spread model is needed) are rows: not "no rows".
    const mid = file('eurusd-mid.csv', ['time,o,h,l,c', '2024-01-08T10:00:00Z,1.1,1.101,1.099,1.1005']);
    const refusing = (f: string, whole: boolean): AsyncIterable<readonly Candle[]> =>
      openCandles(f, {
        instrument: 'EUR_USD',
        granularity: 'M1',
        side: 'mid',
        oneSided: 'name a spread model',
        ...(whole ? {} : later),
      });
    const got: Candle[] = [];
    for await (const b of gateFiles([mid], mid, ask('M1', 'run', later), refusing)) got.push(...b);
    expect(got).toEqual([]);
  });
});
