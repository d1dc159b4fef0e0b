import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/catalog.ts';
import { parseClock } from '../src/adapters/catalog/file-clock.ts';
import { resampled } from '../src/adapters/catalog/resample.ts';
import { DEFAULT_ALIGNMENT } from '../src/domain/granularity.ts';
import { syntheticM1Batches } from '../src/adapters/catalog/synthetic.ts';
import { importData, type ImportArgs } from '../src/cli/data-import.ts';
import type { Candle } from '../src/domain/candle.ts';
import { FX, HAS_SHARED, warnIfNoShared } from './shared.ts';

/**
 * Issue 25, item 1: a file's clock read from the file's own week. A file written in local time
 * imports onto the UTC minutes of its original with --timezone; without it, fxflow refuses and
 * names the clock that fits. HistData's 2019 EURUSD (European summer time) on the real file.
 */
warnIfNoShared('HistData 2019 EURUSD time zone');

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-tz-'));
let n = 0;
const newCatalog = (): string => join(tmp, `catalog-${++n}`);
const imp = (a: Partial<ImportArgs> & { catalog: string }): Promise<string[]> =>
  importData({ replace: false, crossed: 'error', ...a });

/** The month files of a series, by name. */
function months(root: string, instrument: string, granularity: string): Record<string, string> {
  const dir = join(root, instrument, granularity);
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.csv'))
    .sort())
    out[f] = readFileSync(join(dir, f), 'utf8');
  return out;
}

function synthetic(from: string, to: string): Candle[] {
  const out: Candle[] = [];
  for (const b of syntheticM1Batches('EUR_USD', Date.parse(from), Date.parse(to), 7)) out.push(...b);
  return out;
}

const row = (time: string, c: Candle): string =>
  `${time},${c.bo},${c.bh},${c.bl},${c.bc},${c.ao},${c.ah},${c.al},${c.ac},${c.volume}`;
const HEADER = 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume';

describe('a file written in local time', () => {
  // Three weeks around Europe's spring change (2024-03-31), after America's (03-10).
  const candles = synthetic('2024-03-18T00:00:00Z', '2024-04-13T00:00:00Z');
  const utcFile = join(tmp, 'eurusd-utc.csv');
  const berlinFile = join(tmp, 'eurusd-berlin.csv');
  writeFileSync(
    utcFile,
    `${HEADER}\n${candles.map((c) => row(new Date(c.time).toISOString().replace('.000', ''), c)).join('\n')}\n`,
  );
  // The same rows, their times written on Berlin's wall clock without an offset.
  writeFileSync(
    berlinFile,
    `${HEADER}\n${candles.map((c) => row(DateTime.fromMillis(c.time, { zone: 'Europe/Berlin' }).toFormat('yyyy-MM-dd HH:mm:ss'), c)).join('\n')}\n`,
  );

  it('imports with --timezone Europe/Berlin onto exactly the UTC minutes and prices of its UTC original', async () => {
    const a = newCatalog();
    const b = newCatalog();
    await imp({ file: utcFile, instrument: 'EUR_USD', granularity: 'M1', catalog: a });
    const lines = await imp({
      file: berlinFile,
      instrument: 'EUR_USD',
      granularity: 'M1',
      timezone: 'Europe/Berlin',
      catalog: b,
    });
    expect(months(b, 'EUR_USD', 'M1')).toEqual(months(a, 'EUR_USD', 'M1'));
    expect(new Catalog(b).list()[0]!.rows).toBe(candles.length);
    // The import says which offsets its weeks fit.
    expect(lines.join('\n')).toMatch(
      /times read as Europe\/Berlin \(every weekly open on the market's\); its weekly opens fit UTC\+01:00 .*; UTC\+02:00 2024-03-31/,
    );
  });

  it('without the option is refused, naming the zone that fits and the flag; nothing is written', async () => {
    const c = newCatalog();
    await expect(
      imp({ file: berlinFile, instrument: 'EUR_USD', granularity: 'M1', catalog: c }),
    ).rejects.toThrow(
      /bars fall while the EUR_USD market is closed when its times are read as UTC \(first: Fri 2024-03-22T2[12]:\d\dZ.*Its weekly opens and closes fit UTC\+01:00 the week of 2024-03-24; UTC\+02:00 .*read it with --timezone Europe\/Berlin, which fits every week/,
    );
    expect(new Catalog(c).list()).toEqual([]);
  });

  it('a fixed offset reads a file written in one (no DST)', async () => {
    const file = join(tmp, 'eurusd-plus3.csv');
    writeFileSync(
      file,
      `${HEADER}\n${candles.map((c) => row(new Date(c.time + 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' '), c)).join('\n')}\n`,
    );
    await expect(
      imp({ file, instrument: 'EUR_USD', granularity: 'M1', catalog: newCatalog() }),
    ).rejects.toThrow(/read it with --timezone \+03:00, which fits every week/);
    const a = newCatalog();
    const b = newCatalog();
    await imp({ file: utcFile, instrument: 'EUR_USD', granularity: 'M1', catalog: a });
    await imp({ file, instrument: 'EUR_USD', granularity: 'M1', timezone: '+03:00', catalog: b });
    expect(months(b, 'EUR_USD', 'M1')).toEqual(months(a, 'EUR_USD', 'M1'));
  });

  it('backtest --data: read in the wrong clock, it is refused as the import refuses it, naming the zone that fits; with --timezone, it runs', async () => {
    const args = [
      'backtest',
      'strategies/sma-cross.ts',
      '--data',
      berlinFile,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'M1',
      '--from',
      '2024-03-18',
      '--to',
      '2024-04-13',
      '--no-save',
    ];
    const wrong = await fxflowErr(...args);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(
      /fxflow: .*eurusd-berlin\.csv \(time\): [\d,]+ of its [\d,]+ bars fall while the EUR_USD market is closed when its times are read as UTC.*read it with --timezone Europe\/Berlin, which fits every week/,
    );
    const right = await fxflowErr(...args, '--timezone', 'Europe/Berlin');
    expect(right.code).toBe(0);
    expect(right.stderr).not.toMatch(/market is closed/);
  });

  it('times that carry their own offset refuse --timezone; a bad zone is a usage error naming the forms', async () => {
    await expect(
      imp({
        file: utcFile,
        instrument: 'EUR_USD',
        granularity: 'M1',
        timezone: 'Europe/Berlin',
        catalog: newCatalog(),
      }),
    ).rejects.toThrow(/carry their own offset .* --timezone Europe\/Berlin does not apply: leave it out/);
    await expect(
      imp({
        file: berlinFile,
        instrument: 'EUR_USD',
        granularity: 'M1',
        timezone: 'Europe/Berln',
        catalog: newCatalog(),
      }),
    ).rejects.toThrow(/--timezone 'Europe\/Berln' is not a clock fxflow reads: give an IANA zone/);
  });
});

const ROOT = join(import.meta.dirname, '..');
async function fxflow(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
    });
    return { code: 0, stdout };
  } catch (e) {
    const x = e as { code?: number; stdout?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '' };
  }
}

async function fxflowErr(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
    });
    return { code: 0, stderr };
  } catch (e) {
    const x = e as { code?: number; stderr?: string };
    return { code: x.code ?? 1, stderr: x.stderr ?? '' };
  }
}

describe('data check', () => {
  it('lists the bars inside closures per series and the zone the source was written in', async () => {
    const root = newCatalog();
    const cat = new Catalog(root);
    const candles = synthetic('2024-03-18T00:00:00Z', '2024-04-13T00:00:00Z');
    // A series written two hours late (a source in UTC+2 read as UTC), and one on time.
    const late = candles.map((c) => ({ ...c, time: c.time + 2 * 3_600_000, at: c.at + 2 * 3_600_000 }));
    const meta = { synthetic: true, sides: 'bid/ask' as const, sources: [] };
    await cat.write('EUR_USD', 'M1', [late], { meta });
    await cat.write(
      'GBP_USD',
      'M1',
      [
        candles.map((c) => ({
          ...c,
          instrument: 'GBP_USD',
          bo: c.bo + 0.2,
          bh: c.bh + 0.2,
          bl: c.bl + 0.2,
          bc: c.bc + 0.2,
          ao: c.ao + 0.2,
          ah: c.ah + 0.2,
          al: c.al + 0.2,
          ac: c.ac + 0.2,
        })),
      ],
      { meta },
    );
    const r = await fxflow('data', 'check', '--catalog', root, '--granularity', 'M1');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /EUR_USD M1: [\d,]+ rows.*\n(.*\n)*?  480 bars inside the market's closures \(trading hours in data\/instruments.json\); first: Fri 2024-03-22T21:00Z/,
    );
    expect(r.stdout).toMatch(
      /its weekly opens fit UTC\+02:00 .*: the source was written in \+02:00; import it again with --timezone \+02:00/,
    );
    expect(r.stdout).toMatch(/GBP_USD M1: [\d,]+ rows.*\n(.*\n)*?  no bars inside the market's closures/);
  });
});

describe('the file clock', () => {
  it("round-trips a run of instants through a zone's wall clock, the repeated fall-back hour resolved by file order", () => {
    // Changes of offset (fall-back and spring-forward) in several zones and years.
    const changes = [
      ['Europe/Berlin', Date.UTC(2024, 9, 27, 1)],
      ['Europe/Berlin', Date.UTC(2018, 9, 28, 1)],
      ['Europe/Berlin', Date.UTC(2024, 2, 31, 1)],
      ['America/New_York', Date.UTC(2024, 10, 3, 6)],
      ['America/New_York', Date.UTC(2019, 2, 10, 7)],
      ['Australia/Sydney', Date.UTC(2024, 3, 6, 16)],
      ['Europe/London', Date.UTC(2019, 9, 27, 1)],
    ] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...changes),
        fc.integer({ min: 61, max: 900 }),
        fc.constantFrom(1, 5, 15, 30, 60),
        fc.integer({ min: 1, max: 400 }),
        ([zone, change], before, step, count) => {
          // A file's run of bars that starts before the change (as a file read from its start does).
          const clock = parseClock(zone);
          const start = change - before * 60_000;
          for (let k = 0; k < count; k++) {
            const t = start + k * step * 60_000;
            const wall = DateTime.fromMillis(t, { zone });
            const local = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
            expect(clock.toUtc(local)).toBe(t);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the hour clocks spring over with the offset before (the hole itself is accepted)', () => {
    const clock = parseClock('Europe/Berlin');
    // 2024-03-31 02:30 does not occur in Berlin: read as 01:30 UTC (03:30 CEST), as luxon does.
    expect(new Date(clock.toUtc(Date.UTC(2024, 2, 31, 2, 30))).toISOString()).toBe(
      '2024-03-31T01:30:00.000Z',
    );
    expect(new Date(clock.toUtc(Date.UTC(2024, 2, 31, 3, 0))).toISOString()).toBe('2024-03-31T01:00:00.000Z');
    // A zone shifted by an offset: London's clock five hours back.
    const hist = parseClock('Europe/London-05:00');
    expect(new Date(hist.toUtc(Date.UTC(2019, 5, 7, 8, 30))).toISOString()).toBe('2019-06-07T12:30:00.000Z');
    expect(new Date(hist.toUtc(Date.UTC(2019, 0, 7, 8, 30))).toISOString()).toBe('2019-01-07T13:30:00.000Z');
  });
});

describe.skipIf(!HAS_SHARED)('HistData 2019 EURUSD (European summer time)', () => {
  const file = join(FX, 'histdata-m1-ffml/DAT_ASCII_EURUSD_M1_2019.csv');

  it('read as HistData documents (fixed UTC−5) is refused: 1,799 bars inside closures, and the zone that fits is named', async () => {
    await expect(imp({ file, catalog: newCatalog() })).rejects.toThrow(
      /1,799 of its 372,470 bars fall while the EUR_USD market is closed when its times are read as -05:00 \(first: Fri 2019-04-05T21:00Z.*UTC−05:00 2019-01-06 to the week of 2019-03-24 \(12 weeks\); UTC−04:00 .*read it with --timezone Europe\/London-05:00, which fits every week/,
    );
  });

  it('imported as docs/data.md says puts the 2019-06-07 payroll spike at 12:30 UTC', async () => {
    const cat = newCatalog();
    await imp({ file, timezone: 'Europe/London-05:00', catalog: cat });
    const day: Candle[] = [];
    for await (const b of new Catalog(cat).candles({
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: Date.UTC(2019, 5, 7),
      to: Date.UTC(2019, 5, 8),
    }))
      day.push(...b);
    const widest = day.reduce((w, c) => (c.bh - c.bl > w.bh - w.bl ? c : w));
    expect(new Date(widest.time).toISOString()).toBe('2019-06-07T12:30:00.000Z');
    // The Friday close at 16:59 New York (20:59 UTC in summer), not an hour later.
    expect(new Date(day[day.length - 1]!.time).toISOString()).toBe('2019-06-07T20:59:00.000Z');
    // Daily candles at 17:00 New York built from it: none opens on a Friday evening (read as fixed
    // UTC−5, each summer Friday's last hour became a day of its own that OANDA does not have).
    const days: Candle[] = [];
    for await (const b of resampled(new Catalog(cat), 'EUR_USD', 'M1', 'D', DEFAULT_ALIGNMENT))
      days.push(...b);
    expect(days.length).toBeGreaterThan(250);
    expect(
      days
        .filter((c) => DateTime.fromMillis(c.time, { zone: 'America/New_York' }).weekday === 5)
        .map((c) => new Date(c.time).toISOString()),
    ).toEqual([]);
  });
});
