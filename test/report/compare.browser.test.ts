// fxflow compare's page in a real browser: two runs of different strategies (one with a long name,
// so a long run folder name too), different instruments and periods. Its labels must fit the page
// (element boxes measured: nothing overflows or is clipped) and the warnings must be in view.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, artifact, fxflow, launch, openPage } from './browser.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-compare-page-'));
const LONG = 'eur-usd-hourly-moving-average-crossover-with-trend-filter-and-volatility-sized-positions';
let browser: Browser;
let runs: string[];
let compared: { code: number; stdout: string; stderr: string };
const out = join(tmp, 'compare.html');

async function backtest(...args: string[]): Promise<string> {
  const r = await fxflow('backtest', ...args, '--runs-dir', join(tmp, 'runs'));
  expect(r.code, r.stderr).toBe(0);
  return /Run saved in (.+)/.exec(r.stdout)![1]!;
}

beforeAll(async () => {
  browser = await launch();
  // sma-cross under a long name (a strategy file of the user's, outside the project).
  const file = join(tmp, 'long-name.ts');
  writeFileSync(
    file,
    readFileSync(join(ROOT, 'strategies/sma-cross.ts'), 'utf8').replace(
      "name: 'sma-cross'",
      `name: '${LONG}'`,
    ),
  );
  runs = [
    await backtest(file, '--instrument', 'USD_JPY', '--from', '2024-02-01', '--to', '2024-05-01'),
    await backtest('strategies/breakout-tpsl.ts', '--from', '2024-01-01', '--to', '2024-04-01'),
  ];
  compared = await fxflow('compare', ...runs, '--out', out);
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

describe('fxflow compare of two different strategies', () => {
  it('warns on stderr and at the top of the page that the periods and the instruments differ', async () => {
    expect(compared.code, compared.stderr).toBe(0);
    expect(basename(runs[0]!)).toContain(LONG);
    expect(compared.stderr).toContain(
      'fxflow compare: warning: the runs cover different periods (1: 2024-02-01 → 2024-05-01; 2: 2024-01-01 → 2024-04-01)',
    );
    expect(compared.stderr).toContain(
      'fxflow compare: warning: the runs trade different instruments (1: USD_JPY; 2: EUR_USD)',
    );
    const { page, errors } = await openPage(
      browser,
      `file://${out}`,
      'window.fxReport && window.fxReport.ready',
    );
    const notes = page.locator('#compare-notes');
    expect(await notes.isVisible()).toBe(true);
    const text = await notes.innerText();
    expect(text).toContain(
      'the runs cover different periods (1: 2024-02-01 → 2024-05-01; 2: 2024-01-01 → 2024-04-01)',
    );
    expect(text).toContain('the runs trade different instruments (1: USD_JPY; 2: EUR_USD)');
    // In view when the page opens (above the chart), inside the page's width.
    const box = (await notes.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThan(900);
    expect(box.x + box.width).toBeLessThanOrEqual(1280);
    const chart = (await page.locator('#equity-chart').boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(chart.y);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  for (const width of [1280, 800])
    it(`at ${width} px its long labels fit: no element overflows its box, every run heading and legend entry is whole and inside the page; the chart shows both runs whole`, async () => {
      const { page, errors } = await openPage(
        browser,
        `file://${out}`,
        'window.fxReport && window.fxReport.ready',
        { width, height: 900 },
      );
      await page.screenshot({ path: artifact(`compare-long-labels-${width}.png`), fullPage: true });
      const m = (await page.evaluate(() => {
        const d = (globalThis as any).document;
        const inside = (e: any): boolean => e.closest('.chart') !== null;
        // Every element of the page (Lightweight Charts' own drawing surface aside) whose content is
        // wider or taller than its box: what is cut off or scrolls out of sight.
        const over = [...d.querySelectorAll('#app *')]
          .filter((e: any) => !inside(e) && e.clientWidth > 0)
          .filter((e: any) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
          .map(
            (e: any) =>
              `${e.tagName} ${e.className} ${e.scrollWidth}>${e.clientWidth} ${e.scrollHeight}>${e.clientHeight}`,
          );
        const rect = (e: any) => {
          const r = e.getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        };
        return {
          pageWidth: d.documentElement.scrollWidth,
          over,
          headings: [...d.querySelectorAll('th.run')].map((e: any) => ({
            text: e.textContent,
            box: rect(e),
            section: rect(e.closest('section')),
          })),
          legend: [...d.querySelectorAll('#legend span')].map((e: any) => ({
            text: e.textContent,
            box: rect(e),
            legend: rect(e.parentElement),
          })),
        };
      })) as {
        pageWidth: number;
        over: string[];
        headings: { text: string; box: any; section: any }[];
        legend: { text: string; box: any; legend: any }[];
      };
      expect(m.pageWidth).toBeLessThanOrEqual(width);
      expect(m.over).toEqual([]);
      // Two tables (params, figures), a heading per run each; the long name is in the first run's.
      expect(m.headings).toHaveLength(4);
      expect(m.headings[0]!.text).toContain(LONG);
      for (const h of m.headings) {
        expect(h.box.left).toBeGreaterThanOrEqual(h.section.left);
        expect(h.box.right).toBeLessThanOrEqual(h.section.right);
      }
      expect(m.legend).toHaveLength(2);
      expect(m.legend[0]!.text).toContain(LONG);
      for (const l of m.legend) {
        expect(l.box.left).toBeGreaterThanOrEqual(l.legend.left);
        expect(l.box.right).toBeLessThanOrEqual(l.legend.right + 0.5);
      }
      // The chart opens on both curves whole: from the earlier first point to the later last one.
      const span = (await page.evaluate(() => {
        const r = (globalThis as any).fxReport;
        const data = r.series.map((s: any) => s.data());
        return {
          first: Math.min(...data.map((d: any[]) => d[0].time)),
          last: Math.max(...data.map((d: any[]) => d[d.length - 1].time)),
          visible: r.chart.timeScale().getVisibleRange(),
        };
      })) as { first: number; last: number; visible: { from: number; to: number } };
      expect(span.visible.from).toBeLessThanOrEqual(span.first);
      expect(span.visible.to).toBeGreaterThanOrEqual(span.last);
      expect(errors).toEqual([]);
      await page.close();
    }, 60_000);

  it("names buy & hold by each run's own instrument", async () => {
    const { page } = await openPage(browser, `file://${out}`, 'window.fxReport && window.fxReport.ready');
    const row = await page.$$eval('#metrics [data-key="buyHoldReturnPct"]', (tds) =>
      tds.map((t) => t.textContent),
    );
    expect(row).toHaveLength(2);
    expect(row[0]).toMatch(/\(USD_JPY\)$/);
    expect(row[1]).toMatch(/\(EUR_USD\)$/);
    await page.close();
  }, 60_000);
});
