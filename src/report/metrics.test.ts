import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  drawdowns,
  extendedMetrics,
  humanize,
  maxRunUp,
  monthlyPL,
  summaryMetrics,
  type TradeRow,
} from './metrics.ts';
import type { EquitySeries } from './run-folder.ts';

const DAY = 86_400;
/** A daily NAV curve from random daily changes (balance = NAV). */
const curve = fc
  .tuple(
    fc.integer({ min: 1_700_000_000, max: 1_750_000_000 }),
    fc.array(fc.integer({ min: -5000, max: 5000 }), { minLength: 1, maxLength: 800 }),
  )
  .map(([start, steps]) => {
    const e: EquitySeries = { t: [], balance: [], nav: [] };
    let nav = 100_000;
    steps.forEach((s, i) => {
      nav += s / 10;
      e.t.push(start + i * DAY);
      e.nav.push(nav);
      e.balance.push(nav);
    });
    return e;
  });

describe('monthlyPL', () => {
  it('the months add up to the last NAV less the initial balance, one cell per calendar month', () => {
    fc.assert(
      fc.property(curve, (e) => {
        const m = monthlyPL(e, 100_000);
        const sum = m.reduce((a, x) => a + x.pl, 0);
        expect(Math.abs(sum - (e.nav[e.nav.length - 1]! - 100_000))).toBeLessThan(1e-6);
        const keys = m.map((x) => x.year * 12 + x.month);
        expect(new Set(keys).size).toBe(keys.length);
        expect(keys).toEqual([...keys].sort((a, b) => a - b));
      }),
    );
  });
});

describe("monthlyPL: the run's own days", () => {
  it('a last mark at midnight (the exclusive end of a run to 2025-01-01) closes 31 December: no 2025 month, and the year compounds to the return', () => {
    const at = (iso: string): number => Date.parse(iso) / 1000;
    // Day-end marks (22:00 UTC), then the run's last mark at its end, 2025-01-01T00:00Z.
    const e: EquitySeries = {
      t: [
        at('2024-01-01T01:00:00Z'),
        at('2024-06-30T21:00:00Z'),
        at('2024-12-31T22:00:00Z'),
        at('2025-01-01T00:00:00Z'),
      ],
      balance: [],
      nav: [100_000, 100_050, 99_880, 99_870],
    };
    e.balance.push(...e.nav);
    const m = monthlyPL(e, 100_000);
    expect(m.map((x) => `${x.year}-${x.month}`)).toEqual(['2024-0', '2024-5', '2024-11']);
    const growth = m.reduce((g, x) => g * (1 + x.pct / 100), 1);
    expect((growth - 1) * 100).toBeCloseTo(((99_870 - 100_000) / 100_000) * 100, 10);
  });
});

describe('maxRunUp', () => {
  it('is the largest rise from a point to any later one (an independent scan of every pair)', () => {
    fc.assert(
      fc.property(curve, (e) => {
        let best = 0;
        for (let i = 0; i < e.nav.length; i++)
          for (let j = i; j < e.nav.length; j++) best = Math.max(best, e.nav[j]! - e.nav[i]!);
        expect(maxRunUp(e)!.amount).toBeCloseTo(best, 2);
      }),
      { numRuns: 50 },
    );
  });
});

describe('drawdowns', () => {
  it('the deepest equals the largest fall from a running peak (an independent scan), and episodes do not overlap', () => {
    fc.assert(
      fc.property(curve, (e) => {
        let peak = -Infinity,
          worst = 0;
        for (const v of e.nav) {
          peak = Math.max(peak, v);
          worst = Math.max(worst, peak - v);
        }
        const dd = drawdowns(e);
        expect(dd.length === 0 ? 0 : dd[0]!.depth).toBeCloseTo(worst, 9);
        const byStart = [...dd].sort((a, b) => a.start - b.start);
        for (let i = 1; i < byStart.length; i++)
          expect(byStart[i]!.start).toBeGreaterThanOrEqual(byStart[i - 1]!.end!);
        for (const d of dd) expect(d.trough).toBeGreaterThan(d.start);
      }),
    );
  });
});

describe('extendedMetrics', () => {
  const trade = (pl: number, i: number): TradeRow => ({
    id: String(i + 1),
    instrument: 'EUR_USD',
    units: 1000,
    openTime: i * 3600,
    closeTime: i * 3600 + 1800,
    openPrice: 1,
    closePrice: 1,
    pl,
    financing: 0,
    spreadCost: 0,
    commission: 0,
    closeReason: '',
  });
  const get = (ms: ReturnType<typeof extendedMetrics>, key: string): unknown =>
    ms.find((m) => m.key === key)?.value;

  it('expectancy, SQN, streak, best and worst follow their definitions on any trade list', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 2, maxLength: 200 }),
        (pls) => {
          const ms = extendedMetrics(undefined, pls.map(trade), 100_000, null);
          const mean = pls.reduce((a, b) => a + b, 0) / pls.length;
          expect(get(ms, 'expectancy')).toBeCloseTo(mean, 9);
          const sd = Math.sqrt(pls.reduce((a, x) => a + (x - mean) ** 2, 0) / (pls.length - 1));
          expect(get(ms, 'sqn')).toEqual(
            sd > 0 ? expect.closeTo((Math.sqrt(pls.length) * mean) / sd, 9) : null,
          );
          let longest = 0;
          for (let i = 0; i < pls.length; i++) {
            let j = i;
            while (j < pls.length && pls[j]! < 0) j++;
            longest = Math.max(longest, j - i);
          }
          expect(get(ms, 'longestLosingStreak')).toBe(longest);
          expect(get(ms, 'bestTrade')).toBe(Math.max(...pls));
          expect(get(ms, 'worstTrade')).toBe(Math.min(...pls));
          expect(get(ms, 'averageTradeHours')).toBe(0.5);
        },
      ),
    );
  });

  it('CAGR over exactly one year is the return; Calmar is CAGR over the max drawdown %', () => {
    const e: EquitySeries = { t: [0, 365.25 * DAY], balance: [100_000, 110_000], nav: [100_000, 110_000] };
    const ms = extendedMetrics(e, [], 100_000, 5);
    expect(get(ms, 'cagr')).toBeCloseTo(10, 9);
    expect(get(ms, 'calmar')).toBeCloseTo(2, 9);
    expect(get(ms, 'sortino')).toBeNull(); // one return: no downside deviation
  });
});

describe('figures that need a year, and names in words', () => {
  const DAYS = (n: number): EquitySeries => ({
    t: Array.from({ length: n }, (_, i) => 1_704_067_200 + i * DAY),
    balance: Array.from({ length: n }, (_, i) => 100_000 + i),
    nav: Array.from({ length: n }, (_, i) => 100_000 + i),
  });
  it('CAGR and Calmar are shown from a year on (the run period when given, else the curve), "needs a year" before', () => {
    const short = extendedMetrics(DAYS(60), [], 100_000, 1, 59 * DAY);
    for (const k of ['cagr', 'calmar']) {
      const m = short.find((x) => x.key === k)!;
      expect(m.value).toBeNull();
      expect(m.na).toBe('needs a year');
      expect(m.def).toContain('a year or more');
    }
    const long = extendedMetrics(DAYS(400), [], 100_000, 1, 399 * DAY);
    expect(long.find((x) => x.key === 'cagr')!.value).toBeCloseTo(
      ((100_399 / 100_000) ** (1 / (399 / 365.25)) - 1) * 100,
      9,
    );
    expect(long.find((x) => x.key === 'calmar')!.na).toBeUndefined();
    // A year's period with a curve a little shorter (the last mark before the period's end) counts as a year.
    expect(
      extendedMetrics(DAYS(365), [], 100_000, 1, 366 * DAY).find((x) => x.key === 'cagr')!.value,
    ).not.toBeNull();
  });

  it('summary.json fields the page does not know are named in words, marketHalted has its own label', () => {
    const ms = summaryMetrics({ marketHalted: 3, someNewFieldPct: 1.5, fooPL: 2.25 });
    expect(ms.map((m) => m.label)).toEqual(['Market-halted orders', 'Some new field %', 'Foo P/L']);
    expect(ms[0]!.kind).toBe('int');
    expect(humanize('exposurePct')).toBe('Exposure %');
  });
});
