// ctx.plot end to end: a strategy that plots gets plots.csv in its run folder, and its lines, pane
// and markers on report.html, read from the page in headless Debian chromium.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, artifact, asPredicate, fxflow, launch, openPage } from './browser.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-plots-'));
let browser: Browser;
let run: string;

beforeAll(async () => {
  browser = await launch();
  const r = await fxflow('backtest', 'test/report/plot-strategy.ts', '--runs-dir', tmp);
  expect(r.code, r.stderr).toBe(0);
  run = /Run saved in (.+)/.exec(r.stdout)![1]!;
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

/** plots.csv's rows per plot name. */
function rowsOf(dir: string): Map<string, string[][]> {
  const lines = readFileSync(join(dir, 'plots.csv'), 'utf8').trim().split('\n');
  expect(lines[0]).toBe('time,name,value,pane,style,instrument');
  const out = new Map<string, string[][]>();
  for (const l of lines.slice(1)) {
    const c = l.split(',');
    out.set(c[1]!, [...(out.get(c[1]!) ?? []), c]);
  }
  return out;
}

describe('ctx.plot', () => {
  it("writes plots.csv: one row per value plotted (undefined plots nothing), at the candle's open time, with its pane and style", () => {
    const rows = rowsOf(run);
    expect([...rows.keys()].sort()).toEqual(['RSI 14', 'buy signal', 'fast SMA', 'sell signal', 'slow SMA']);
    const candles = JSON.parse(readFileSync(join(run, 'chart-candles.json'), 'utf8')).series[0]
      .count as number;
    // The averages are undefined until warmed up: fewer rows than candles, never an empty value.
    for (const n of ['fast SMA', 'slow SMA', 'RSI 14']) {
      expect(rows.get(n)!.length).toBeGreaterThan(candles * 0.9);
      expect(rows.get(n)!.length).toBeLessThanOrEqual(candles);
      expect(rows.get(n)!.every((c) => Number.isFinite(Number(c[2])) && c[2] !== '')).toBe(true);
    }
    expect(rows.get('RSI 14')!.every((c) => c[3] === 'rsi' && c[4] === 'line' && c[5] === 'EUR_USD')).toBe(
      true,
    );
    expect(rows.get('fast SMA')!.every((c) => c[3] === '' && c[4] === 'line')).toBe(true);
    expect(rows.get('buy signal')!.every((c) => c[4] === 'up')).toBe(true);
    expect(rows.get('sell signal')!.every((c) => c[4] === 'down')).toBe(true);
    // An H1 candle's plot sits at its open time: whole hours.
    expect(rows.get('slow SMA')!.every((c) => c[0]!.endsWith(':00:00.000Z'))).toBe(true);
    // Every order of the strategy is sent at a crossing, at the close of the candle whose open time its signal has.
    const signals = new Set(
      [...rows.get('buy signal')!, ...rows.get('sell signal')!].map((c) => Date.parse(c[0]!)),
    );
    const orders = readFileSync(join(run, 'intents.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).at as number);
    expect(orders.length).toBeGreaterThan(100);
    expect(orders.filter((at) => !signals.has(at - 3_600_000))).toEqual([]);
  });

  it('draws the lines on the price chart, the RSI in a pane below it and the signals as markers (Chromium)', async () => {
    const { page, errors } = await openPage(
      browser,
      `file://${join(run, 'report.html')}`,
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    const got = await page.evaluate(() => {
      const r = (globalThis as any).fxReport;
      const view = r.charts.EUR_USD;
      return {
        plots: r.plots.map((p: any) => ({
          name: p.name,
          paneIndex: p.paneIndex,
          style: p.style,
          points: p.points,
          markers: p.markers,
        })),
        panes: view.chart.panes().length,
        step: view.step,
        titles: view.plots.map((v: any) => v.series.options().title || `${v.p.name} (markers)`),
        legend: [...(globalThis as any).document.querySelectorAll('#prices .plot-legend')].map(
          (e: any) => e.textContent,
        ),
      };
    });
    const rows = rowsOf(run);
    const byName = Object.fromEntries(got.plots.map((p: { name: string }) => [p.name, p]));
    expect(got.panes).toBe(2);
    // Lines are named on the price axis; marker plots in the legend only.
    expect(got.titles.sort()).toEqual([
      'RSI 14',
      'buy signal (markers)',
      'fast SMA',
      'sell signal (markers)',
      'slow SMA',
    ]);
    expect(byName['fast SMA'].paneIndex).toBe(0);
    expect(byName['slow SMA'].paneIndex).toBe(0);
    expect(byName['RSI 14'].paneIndex).toBe(1);
    // A year of H1 zoomed out is drawn in coarser bars: each plot has one point per bar its values fall in.
    const bars = (n: string): number =>
      new Set(rows.get(n)!.map((c) => Math.floor(Date.parse(c[0]!) / 1000 / got.step))).size;
    expect(got.step).toBeGreaterThanOrEqual(3600);
    for (const n of ['fast SMA', 'slow SMA', 'RSI 14', 'buy signal', 'sell signal'])
      expect(byName[n].points, n).toBe(bars(n));
    expect(byName['buy signal'].markers).toBe(bars('buy signal'));
    expect(byName['sell signal'].markers).toBe(bars('sell signal'));
    expect(got.legend).toContain('RSI 14 (pane rsi)');
    await page.locator('#prices').screenshot({ path: artifact('report-plots.png') });
    if (process.env.FXFLOW_DOCS_PNG === '1') {
      // docs/report-plots.png, the picture in docs/reports-html.md: FXFLOW_DOCS_PNG=1 npx vitest run test/report/plots.browser.test.ts
      await page.evaluate(() => {
        const r = (globalThis as any).fxReport;
        const c = r.charts.EUR_USD.chart;
        r.drive(c);
        c.timeScale().setVisibleRange({ from: Date.UTC(2024, 2, 1) / 1000, to: Date.UTC(2024, 3, 1) / 1000 });
      });
      await page.waitForFunction(asPredicate('window.fxReport.charts.EUR_USD.level === 0'), null, {
        timeout: 30_000,
      });
      await page.locator('#prices').screenshot({ path: join(ROOT, 'docs/report-plots.png') });
    }
    await page.close();
  }, 60_000);
});
