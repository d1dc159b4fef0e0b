import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/index.ts';
import type { Candle } from '../src/domain/candle.ts';
import { FX_WEEK, MarketCalendar, MarketHours } from '../src/domain/market-hours.ts';
import { nextRollover, newYorkDate } from '../src/domain/new-york.ts';
import { FX, HAS_SHARED, warnIfNoShared } from './shared.ts';

/**
 * The shipped market calendar (data/market-calendar.json) against OANDA's own candles in
 * ../shared/data/fx: no candle on a closed day, and every weekday without a daily candle a closed
 * day; and `fxflow data check` counting no hole in a closed day.
 */
warnIfNoShared('the market calendar against OANDA candles');

const ROOT = resolve(import.meta.dirname, '..');
const SHIPPED = join(ROOT, 'data/market-calendar.json');
const JTANG = join(FX, 'jtang-oanda-mid-csv');
const LEAN = join(FX, 'quantconnect-lean-oanda');
const H = 3_600_000;

/** Start times of the candles of a v20 CSV (`,volume,time,Open,…`). */
function v20Times(file: string): number[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => Date.parse(l.split(',')[2]!));
}

/** Start times of Lean's hour bars (`YYYYMMDD HH:mm,…`, UTC). */
function leanTimes(file: string): number[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const s = l.slice(0, 14);
      return Date.UTC(+s.slice(0, 4), +s.slice(4, 6) - 1, +s.slice(6, 8), +s.slice(9, 11), +s.slice(12, 14));
    });
}

/** The v20 trading day (`YYYY-MM-DD`) a candle opening at `t` belongs to. */
const tradingDay = (t: number): string => newYorkDate(nextRollover(t));

describe.skipIf(!HAS_SHARED)('the shipped calendar is the closures of OANDA candles', () => {
  const cal = MarketCalendar.load([SHIPPED]);
  const hours = new MarketHours(FX_WEEK, 'tradingHours', cal);
  const closedOn = (day: string): boolean => cal.closureAt(Date.parse(`${day}T12:00:00-05:00`)) !== undefined;

  it('OANDA H1 2019-11 to 2020-08: no candle in a closed day, and every hour missing from the FX week is a closed day (Christmas, New Year)', () => {
    for (const pair of ['EUR_USD', 'GBP_USD', 'USD_JPY', 'AUD_USD']) {
      const times = v20Times(join(JTANG, `${pair}_H1.csv`));
      for (const t of times) expect(hours.isOpen(t), `${pair} ${new Date(t).toISOString()}`).toBe(true);
      // Stretches of 3 hours or more without a candle while the FX week is open (an hour or two
      // without a price happens at a quiet Sunday open).
      const missing = new Set<string>();
      for (let i = 1; i < times.length; i++) {
        const open: number[] = [];
        for (let t = times[i - 1]! + H; t < times[i]!; t += H) if (hours.weekly.isOpen(t)) open.push(t);
        if (open.length >= 3) for (const t of open) missing.add(tradingDay(t));
      }
      expect([...missing], pair).toEqual(['2019-12-25', '2020-01-01']);
      expect([...missing].every(closedOn)).toBe(true);
    }
  });

  it('OANDA daily candles 2013 to 2020: a weekday has a candle exactly when the calendar leaves it open', () => {
    let closedDays = 0;
    for (const pair of ['EUR_USD', 'GBP_USD', 'USD_JPY', 'AUD_USD']) {
      // Before 2013 OANDA's daily candles differ: 2011 and 2012 traded the observed Mondays, earlier
      // years have candles on some of the holidays themselves. (Friday 17:00 candles of a tick or
      // two, dated Saturday, are left aside: only weekdays are compared.)
      const held = new Set(v20Times(join(JTANG, `${pair}_D.csv`)).map(tradingDay));
      const wrong: string[] = [];
      for (let t = Date.UTC(2013, 0, 2, 12); t <= Date.UTC(2020, 7, 27, 12); t += 24 * H) {
        const day = new Date(t).toISOString().slice(0, 10);
        const wd = new Date(t).getUTCDay();
        if (wd === 0 || wd === 6) continue;
        const open = !closedOn(day);
        if (!open) closedDays++;
        if (open !== held.has(day)) wrong.push(`${day} ${open ? 'open, no candle' : 'closed, has a candle'}`);
      }
      expect(wrong, pair).toEqual([]);
    }
    // Christmas and New Year on weekdays, and the Mondays observed in 2016/17, four pairs each.
    expect(closedDays).toBeGreaterThan(4 * 10);
  });

  it("OANDA H1 through QuantConnect, 2013 to 2018: no bar on a closed day (the file's other gaps are its own outages)", () => {
    for (const file of ['eurusd.csv', 'nzdusd.csv']) {
      const inside = leanTimes(join(LEAN, 'hour', file)).filter(
        (t) => t >= Date.UTC(2013, 0, 2) && cal.closureAt(t) !== undefined,
      );
      expect(
        inside.map((t) => new Date(t).toISOString()),
        file,
      ).toEqual([]);
    }
  });
});

describe.skipIf(!HAS_SHARED)('the early closes of 24 and 31 December are those of OANDA candles', () => {
  const cal = MarketCalendar.load([SHIPPED]);
  /** The last bar's open hour (UTC) on each weekday 24 and 31 December (30 December 2016, a Friday before a Saturday 31st), by date. */
  function lastBars(times: readonly number[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of times) {
      const d = new Date(t);
      const date = d.toISOString().slice(0, 10);
      const md = date.slice(5);
      if (md !== '12-24' && md !== '12-31' && date !== '2016-12-30') continue;
      const wd = d.getUTCDay();
      if (wd === 0 || wd === 6 || d.getUTCHours() >= 22) continue;
      out.set(date, Math.max(out.get(date) ?? 0, d.getUTCHours()));
    }
    return out;
  }

  it('OANDA H1 (QuantConnect 2007-2018, v20 2019): the days whose last bar opens at 13:00 New York are exactly the shipped early closes at 14:00; the others trade to 17:00', () => {
    const early = cal.days.filter((d) => d.closes !== undefined).map((d) => d.date);
    expect(early.every((d) => cal.days.find((x) => x.date === d)!.closes === '14:00')).toBe(true);
    const seen = new Map<string, number>();
    for (const file of ['eurusd.csv', 'nzdusd.csv'])
      for (const [date, h] of lastBars(leanTimes(join(LEAN, 'hour', file)))) seen.set(`${file} ${date}`, h);
    for (const pair of ['EUR_USD', 'GBP_USD', 'USD_JPY', 'AUD_USD'])
      for (const [date, h] of lastBars(v20Times(join(JTANG, `${pair}_H1.csv`))))
        seen.set(`${pair} ${date}`, h);
    const closedEarly = new Set<string>();
    for (const [key, h] of seen) {
      const date = key.split(' ')[1]!;
      // 18:00 UTC is 13:00 EST: the bar before a 14:00 close. 21:00 UTC is the last bar of a full day.
      expect([18, 21], key).toContain(h);
      if (h === 18) closedEarly.add(date);
    }
    expect([...closedEarly].sort()).toEqual([...early].sort());
    // The years between: 2007-2010 and 2018-2019 trade to 17:00 New York on those days.
    expect([...seen].filter(([, h]) => h === 21).map(([k]) => k.split(' ')[1]!.slice(0, 4))).toEqual(
      expect.arrayContaining(['2007', '2008', '2009', '2010', '2018', '2019']),
    );
    // And the calendar closes each of them from 14:00 New York until the holiday's end.
    for (const date of early) {
      const close = Date.parse(`${date}T19:00:00Z`);
      expect(cal.closureAt(close - 1), date).toBeUndefined();
      expect(cal.closureAt(close)?.from, date).toBe(close);
    }
  });
});

const run = promisify(execFile);
async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

describe.skipIf(!HAS_SHARED)('fxflow data check and the calendar', () => {
  it("a file with OANDA's Christmas and New Year gaps has no hole there; a day the user's calendar closes is no hole either", async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'fxflow-calendar-'));
    // OANDA EUR_USD H1, December 2019 and January 2020, less the trading day of 10 December (a real hole).
    const lines = readFileSync(join(JTANG, 'EUR_USD_H1.csv'), 'utf8').trim().split('\n').slice(1);
    const candles: Candle[] = [];
    for (const l of lines) {
      const [, volume, time, o, h, lo, c] = l.split(',');
      const t = Date.parse(time!);
      if (t < Date.UTC(2019, 11, 2) || t >= Date.UTC(2020, 1, 1)) continue;
      if (tradingDay(t) === '2019-12-10') continue;
      const [po, ph, pl, pc] = [o, h, lo, c].map(Number) as [number, number, number, number];
      candles.push({
        kind: 'candle',
        instrument: 'EUR_USD',
        granularity: 'H1',
        time: t,
        at: t + H,
        bo: po,
        bh: ph,
        bl: pl,
        bc: pc,
        ao: po,
        ah: ph,
        al: pl,
        ac: pc,
        volume: Number(volume),
        complete: true,
      });
    }
    const root = join(tmp, 'catalog');
    await new Catalog(root).write('EUR_USD', 'H1', [candles], {
      meta: {
        synthetic: false,
        sides: 'mid',
        sources: [
          {
            file: 'EUR_USD_H1.csv',
            sha256: '',
            bytes: 0,
            format: 'v20-csv',
            rows: candles.length,
            importedAt: '',
          },
        ],
      },
    });

    const plain = await fxflow(
      'data',
      'check',
      '--catalog',
      root,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
    );
    expect(plain.stdout).toContain(
      '1 hole beyond weekends and holidays:\n    2019-12-09T22:00:00Z → 2019-12-10T22:00:00Z (24 h of open market)',
    );
    expect(plain.stdout).not.toMatch(/2019-12-2[45]T|2020-01-01T/);

    const mine = join(tmp, 'closed.json');
    writeFileSync(mine, JSON.stringify({ closedDays: [{ name: 'our outage day', date: '2019-12-10' }] }));
    const withMine = await fxflow(
      'data',
      'check',
      '--catalog',
      root,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--market-calendar',
      mine,
    );
    expect(withMine.stdout).toContain('no holes beyond weekends and holidays');
    expect(withMine.code).toBe(0);

    writeFileSync(mine, JSON.stringify({ closedDays: [{ name: 'x', date: '10 Dec' }] }));
    const bad = await fxflow(
      'data',
      'check',
      '--catalog',
      root,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--market-calendar',
      mine,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe(
      `fxflow: ${mine}: closedDays[0] (x): date "10 Dec" is not "MM-DD" (every year) or "YYYY-MM-DD" (that year)`,
    );
  });
});
