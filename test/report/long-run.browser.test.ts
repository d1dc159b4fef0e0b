// A 12-year run (real OANDA EUR_USD H1, 2007-2018: 74k candles) in headless Debian chromium: every
// chart shows the whole run, the charts share one time axis, the strategy's plots are thinned but
// span the run, and the monthly table is the run's own months.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX, HAS_SHARED, warnIfNoShared } from '../shared.ts';
import { artifact, asPredicate, fxflow, launch, openPage } from './browser.ts';

warnIfNoShared('a 12-year report in Chromium');
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-long-'));
let browser: Browser;
let run: string;
let page: Page;
let errors: string[];

const FIRST = Date.parse('2007-01-02T00:00:00Z') / 1000;
const LAST = Date.parse('2018-12-31T00:00:00Z') / 1000;

describe.skipIf(!HAS_SHARED)('report.html of a 12-year H1 run', () => {
  beforeAll(async () => {
    browser = await launch();
    const r = await fxflow(
      'backtest',
      'test/report/plot-strategy.ts',
      '--data',
      join(FX, 'quantconnect-lean-oanda/hour/eurusd.csv'),
      '--from',
      '2007-01-01',
      '--to',
      '2019-01-01',
      '--runs-dir',
      tmp,
    );
    expect(r.code, r.stderr).toBe(0);
    run = /Run saved in (.+)/.exec(r.stdout)![1]!;
    ({ page, errors } = await openPage(
      browser,
      `file://${join(run, 'report.html')}`,
      'window.fxReport && window.fxReport.ready',
    ));
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
  });

  it("every chart's visible time range covers the run's first and last day (price, its RSI pane, equity, drawdown)", async () => {
    expect(errors).toEqual([]);
    const ranges = await page.evaluate(() => {
      const r = (globalThis as any).fxReport;
      const of = (c: any): { from: number; to: number } => c.timeScale().getVisibleRange();
      // A bar's time is its start: the price chart's last bar (weekly, zoomed out) holds the last day.
      const price = of(r.charts.EUR_USD.chart);
      return {
        price: { from: price.from, to: price.to + r.charts.EUR_USD.step },
        equity: of(r.equityChart),
        drawdown: of(r.ddChart),
        linked: r.linked.length,
      };
    });
    expect(ranges.linked).toBe(3);
    for (const [name, v] of Object.entries({
      price: ranges.price,
      equity: ranges.equity,
      drawdown: ranges.drawdown,
    })) {
      expect(v.from, name).toBeLessThanOrEqual(FIRST);
      expect(v.to, name).toBeGreaterThanOrEqual(LAST);
    }
    await page.screenshot({ path: artifact('report-12-years.png'), fullPage: true });
  });

  it("the plots are thinned to buckets that keep each one's extremes, and still span the run", async () => {
    const rows = readFileSync(join(run, 'plots.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .filter((l) => l.includes(',RSI 14,'));
    expect(rows.length).toBeGreaterThan(70_000);
    const values = rows.map((l) => Number(l.split(',')[2]));
    const got = await page.evaluate(() => {
      const v = (globalThis as any).fxReport.charts.EUR_USD.plots.find((x: any) => x.p.name === 'RSI 14');
      let lo = Infinity,
        hi = -Infinity;
      for (const x of v.p.v) {
        lo = Math.min(lo, x);
        hi = Math.max(hi, x);
      }
      return {
        kept: v.p.t.length,
        buckets: v.p.buckets,
        first: v.p.t[0],
        last: v.p.t[v.p.t.length - 1],
        lo,
        hi,
        points: v.entry.points,
      };
    });
    expect(got.buckets).toBeGreaterThan(0);
    expect(got.kept).toBeLessThanOrEqual(2 * got.buckets);
    expect(got.lo).toBe(Math.min(...values));
    expect(got.hi).toBe(Math.max(...values));
    expect(got.first).toBeLessThanOrEqual(FIRST + 86_400);
    expect(got.last).toBeGreaterThanOrEqual(LAST);
    expect(got.points).toBeGreaterThan(500);
  });

  it('one time axis: zooming the price chart to a month moves the equity and drawdown charts to it', async () => {
    const month = {
      from: Date.parse('2012-03-01T00:00:00Z') / 1000,
      to: Date.parse('2012-04-01T00:00:00Z') / 1000,
    };
    await page.evaluate((m) => {
      const r = (globalThis as any).fxReport;
      const c = r.charts.EUR_USD.chart;
      r.drive(c);
      c.timeScale().setVisibleRange(m);
    }, month);
    // Polled: the charts move on their next frames. The price chart shows the month (snapped to its
    // bars); the equity and drawdown charts the same span, give or take their daily points.
    const near = (x: string, y: string): string =>
      `Math.abs(${x}.from - ${y}.from) <= 2 * 86400 && Math.abs(${x}.to - ${y}.to) <= 2 * 86400`;
    await page.waitForFunction(
      asPredicate(
        `(() => { const r = window.fxReport; const p = r.charts.EUR_USD.chart.timeScale().getVisibleRange(), a = r.equityChart.timeScale().getVisibleRange(), b = r.ddChart.timeScale().getVisibleRange(); return p && a && b && p.from >= ${month.from - 7 * 86_400} && p.to <= ${month.to + 7 * 86_400} && ${near('a', 'p')} && ${near('b', 'p')}; })()`,
      ),
      null,
      { timeout: 30_000 },
    );
    expect(errors).toEqual([]);
  });

  it('monthly returns: 2007 to 2018 and no year after, no "-0.00%", each year compounding to its NAV change', async () => {
    const got = await page.evaluate(() => {
      const d = (globalThis as any).document;
      return {
        years: [...d.querySelectorAll('table.monthly tbody tr')].map((tr: any) => tr.firstChild.textContent),
        texts: [...d.querySelectorAll('table.monthly td')].map((td: any) => td.textContent),
      };
    });
    expect(got.years).toEqual(Array.from({ length: 12 }, (_, i) => String(2007 + i)));
    expect(got.texts.filter((t: string) => t.includes('-0.00'))).toEqual([]);
    // The last year's figure is its NAV change: the last NAV over the NAV at the end of 2017.
    const eq = readFileSync(join(run, 'equity.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const end2017 = Number(eq.filter((c) => c[0]! < '2018-01-01')!.at(-1)![2]);
    const last = Number(eq.at(-1)![2]);
    const cell = await page
      .locator('table.monthly tbody tr:last-child td[data-total-pct]')
      .getAttribute('data-total-pct');
    expect(Number(cell)).toBeCloseTo(((last - end2017) / end2017) * 100, 8);
  });
});
