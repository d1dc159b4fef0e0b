// A portfolio backtest's report.html: each strategy's P/L curve beside the account's, and the
// correlation of their daily returns, read from the page in headless Debian chromium.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifact, fxflow, launch, openPage } from './browser.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-report-'));
let browser: Browser;
let run: string;

beforeAll(async () => {
  browser = await launch();
  const r = await fxflow(
    'backtest',
    'strategies/sma-cross.ts',
    'strategies/breakout-tpsl.ts',
    '--config',
    'config/classic.json',
    '--no-typecheck',
    '--runs-dir',
    tmp,
  );
  expect(r.code, r.stderr).toBe(0);
  run = /Run saved in (.+)/.exec(r.stdout)![1]!;
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

describe('a portfolio report', () => {
  it("draws each strategy's P/L beside the account's, which ends at their sum, and their correlation (Chromium)", async () => {
    const { page, errors } = await openPage(
      browser,
      `file://${join(run, 'report.html')}`,
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    const got = await page.evaluate(() => {
      const r = (globalThis as any).fxReport;
      const doc = (globalThis as any).document;
      return {
        series: r.strategies.series.map((s: any) => {
          const data = s.series.data();
          return { name: s.name, points: data.length, last: data[data.length - 1].value };
        }),
        table: [...doc.querySelectorAll('#strategies-correlation tr')].map((tr: any) =>
          [...tr.children].map((c: any) => c.textContent),
        ),
        visible: doc.querySelector('#strategies-chart canvas') !== null,
      };
    });
    await page.locator('#strategies').screenshot({ path: artifact('portfolio-strategies.png') });
    const summary = JSON.parse(readFileSync(join(run, 'summary.json'), 'utf8')).summary;
    expect(got.series.map((s: { name: string }) => s.name)).toEqual([
      'account',
      'sma-cross',
      'breakout-tpsl',
    ]);
    expect(got.visible).toBe(true);
    for (const s of got.series) expect(s.points).toBeGreaterThan(200); // a year of daily points
    const [account, sma, breakout] = got.series as { last: number }[];
    expect(sma!.last).toBeCloseTo(summary.strategies['sma-cross'].netPL, 1);
    expect(breakout!.last).toBeCloseTo(summary.strategies['breakout-tpsl'].netPL, 1);
    expect(account!.last).toBeCloseTo(sma!.last + breakout!.last, 1);
    expect(got.table[0]).toEqual(['', 'sma-cross', 'breakout-tpsl']);
    expect(got.table[1]![1]).toBe('1.00');
    expect(got.table[1]![2]).toMatch(/^-?[01]\.\d\d$/);
    expect(got.table[1]![2]).toBe(got.table[2]![1]);
  }, 120_000);
});
