import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/candle.ts';
import { withSpread } from './backtest.ts';
import fc from 'fast-check';
import { ConfigError, dateProblem, loadConfig } from './config.ts';

const flags = (o: Record<string, Record<string, unknown>>) => loadConfig(undefined, o as never);

describe('config', () => {
  it('loads config/default.json', () => {
    const c = loadConfig();
    expect(c.account).toEqual({
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      hedging: false,
      fifo: false,
      portfolioNetting: 'strategy',
    });
    expect(c.fill.path).toBe('adaptive');
  });

  it.each([
    [
      { account: { currency: 'usd' } },
      /--currency \(account\.currency\) must be a three-letter currency code/,
    ],
    [
      { account: { marginRate: '1.5' } },
      /--margin-rate \(account\.marginRate\) must be a decimal string in \(0, 1\]/,
    ],
    [
      { data: { spread: 'wide' } },
      /--spread \(data\.spread\) must be one of "native", "mid", "fixed", "hourly"/,
    ],
    [{ data: { spread: 'hourly' } }, /data\.spreadPipsByHour is required with data\.spread "hourly"/],
    [{ data: { spreadPipsByHour: [1, 2] } }, /data\.spreadPipsByHour must be 24 numbers/],
    [{ run: { granularity: 'H7' } }, /--granularity \(run\.granularity\) must be a v20 granularity/],
    [
      { run: { from: '2025-01-01', to: '2024-01-01' } },
      /--to \(run\.to\) \(2024-01-01\) must be after run\.from/,
    ],
    [{ fill: { pth: 'worst' } }, /fill\.pth is not a known field \(did you mean "fill\.path"\?\)/],
    [{ fill: { path: 'random' } }, /--path \(fill\.path\) must be one of "adaptive", "worst", "exact"/],
    [
      { account: { portfolioNetting: 'shared' } },
      /--portfolio-netting \(account\.portfolioNetting\) must be one of "strategy", "account" \(got "shared"\)/,
    ],
    [
      { account: { fifo: true, hedging: true } },
      /--fifo \(account\.fifo\) cannot be true together with account\.hedging/,
    ],
    [
      { data: { spreadPips: 1e9 } },
      /--spread-pips \(data\.spreadPips\) must be a number of pips in \[0, 1000\] \(got 1000000000\)/,
    ],
    [
      { data: { spreadPips: -1 } },
      /--spread-pips \(data\.spreadPips\) must be a number of pips in \[0, 1000\]/,
    ],
    [{ run: { from: '2024-02-30' } }, /--from \(run\.from\) has day 30: 2024-02 has days 01 to 29/],
    [{ run: { from: '2023-02-29' } }, /--from \(run\.from\) has day 29: 2023-02 has days 01 to 28/],
    [{ run: { to: '2024-13-01' } }, /--to \(run\.to\) has month 13: months are 01 to 12/],
    [{ run: { to: '2024-03-08T27:00:00Z' } }, /--to \(run\.to\) has hour 27/],
    [{ run: { from: '1st of March' } }, /--from \(run\.from\) must be a date like "2024-01-01"/],
    [
      { account: { initialBalance: '0' } },
      /--balance \(account\.initialBalance\) must be a decimal string in \(0, 1,000,000,000,000\]/,
    ],
    [{ account: { initialBalance: '1e9' } }, /--balance \(account\.initialBalance\)/],
    [
      { account: { marginRate: '0' } },
      /--margin-rate \(account\.marginRate\) must be a decimal string in \(0, 1\]/,
    ],
    [
      { costs: { commissionPerMillion: '1000000' } },
      /--commission \(costs\.commissionPerMillion\) must be a decimal string in \[0, 100000\]/,
    ],
    [
      { costs: { financingBeforeHistory: 'static' } },
      /--financing-before-history \(costs\.financingBeforeHistory\) says what to do before the first recorded financing day, so it needs costs\.financingHistory/,
    ],
    [
      { costs: { financingHistory: 'data/catalog', financingBeforeHistory: 'today' } },
      /--financing-before-history \(costs\.financingBeforeHistory\) must be one of "error", "static"/,
    ],
    [
      { costs: { financingHistory: 'data/catalog', financing: false } },
      /--financing-history \(costs\.financingHistory\) gives the rates of daily financing, which costs\.financing false \(--no-financing\) turns off/,
    ],
    [
      { costs: { financingHistory: '' } },
      /--financing-history \(costs\.financingHistory\) must be the catalog folder that fxflow record --financing recorded into/,
    ],
    [
      { report: { timeZone: 'Mars/Base' } },
      /--report-timezone \(report\.timeZone\) must be an IANA time zone like "America\/New_York", "Europe\/London" or "UTC" \(got "Mars\/Base"\)/,
    ],
    [
      { report: { timeZone: 'EST5EDT-ish' } },
      /--report-timezone \(report\.timeZone\) must be an IANA time zone/,
    ],
  ])('%j is refused with a message naming the field', (o, message) => {
    expect(() => flags(o)).toThrow(ConfigError);
    expect(() => flags(o)).toThrow(message);
  });
});

describe('dateProblem', () => {
  it('accepts exactly the real calendar dates and times (property, against Date.UTC round trips)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1900, max: 2200 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 25 }),
        (y, m, d, h) => {
          const p2 = (n: number): string => String(n).padStart(2, '0');
          const date = `${y}-${p2(m)}-${p2(d)}`;
          const real = new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
          expect(dateProblem(date) === undefined).toBe(real);
          expect(dateProblem(`${date}T${p2(h)}:30:00Z`) === undefined).toBe(real && h < 24);
        },
      ),
    );
  });
});

describe('spread models', () => {
  const c: Candle = {
    kind: 'candle',
    instrument: 'EUR_USD',
    granularity: 'H1',
    time: Date.UTC(2024, 0, 2, 21),
    at: Date.UTC(2024, 0, 2, 22),
    bo: 1.1,
    bh: 1.2,
    bl: 1.0,
    bc: 1.15,
    ao: 1.1002,
    ah: 1.2002,
    al: 1.0002,
    ac: 1.1502,
    volume: 1,
    complete: true,
  };
  const run = async (data: Parameters<typeof withSpread>[1]): Promise<Candle> => {
    for await (const b of withSpread(
      (async function* () {
        yield [c];
      })(),
      data,
      0.0001,
      (x) => Math.round(x * 1e5) / 1e5,
    ))
      return b[0]!;
    throw new Error('no candle');
  };

  it('mid: both sides at mid (the classic zero-spread configuration)', async () => {
    const m = await run({ catalog: '', spread: 'mid', spreadPips: 0 });
    expect([m.bo, m.ao, m.bc, m.ac]).toEqual([1.1001, 1.1001, 1.1501, 1.1501]);
  });

  it("hourly: the spread of the candle's UTC hour around mid", async () => {
    const byHour = Array.from({ length: 24 }, (_, h) => (h === 21 ? 3 : 1));
    const m = await run({ catalog: '', spread: 'hourly', spreadPips: 0, spreadPipsByHour: byHour });
    expect(m.ao - m.bo).toBeCloseTo(0.0003, 10);
    expect((m.ao + m.bo) / 2).toBeCloseTo(1.1001, 10);
  });
});

describe('fill models in the config (fill.slippage, fill.latency, costs.commission)', () => {
  it("defaults to v20's own fills: no slippage, no latency, commission per million", () => {
    const c = loadConfig();
    expect(c.fill.slippage).toBe('none');
    expect(c.fill.latency).toBe('none');
    expect(c.costs.commission).toBe('per-million');
  });

  it('has no report zone by default (UTC: config.json as before), and takes an IANA one', () => {
    expect(flags({}).report).toBeUndefined();
    expect(flags({ report: { timeZone: 'America/New_York' } }).report).toEqual({
      timeZone: 'America/New_York',
    });
  });

  it('takes the named models', () => {
    const c = flags({
      fill: { slippage: 'spread:0.5', latency: 'fixed:250' },
      costs: { commission: 'oanda-core' },
    });
    expect([c.fill.slippage, c.fill.latency, c.costs.commission]).toEqual([
      'spread:0.5',
      'fixed:250',
      'oanda-core',
    ]);
  });

  it.each([
    [
      { fill: { slippage: 'lots' } },
      /fill\.slippage is wrong: slippage must be none, fixed:<pips> \(e\.g\. fixed:0\.5\) or spread:<fraction>/,
    ],
    [{ fill: { latency: 'fixed:-1' } }, /fill\.latency is wrong: latency must be none, fixed:<ms>/],
    [
      { fill: { latency: 'file:/nonexistent/delays.txt' } },
      /fill\.latency is wrong: latency file \/nonexistent\/delays\.txt: cannot be read \(ENOENT\)/,
    ],
    [{ fill: { slippage: 2 } }, /fill\.slippage must be a string like "none"/],
    [{ costs: { commission: 'cheap' } }, /costs\.commission must be one of "per-million", "oanda-core"/],
    [
      { account: { currency: 'NOK' }, costs: { commission: 'oanda-core' } },
      /costs\.commission "oanda-core" has no schedule for an account in NOK/,
    ],
  ])('%j is refused with a message naming the field', (o, message) => {
    expect(() => flags(o)).toThrow(ConfigError);
    expect(() => flags(o)).toThrow(message);
  });
});
