// The HTML reports in a real browser: headless Debian chromium (playwright-core) opens the files
// from disk, as a user would, and the figures on the page are checked against the run folder.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, artifact, fxflow, launch, openPage } from './browser.ts';


const tmp = mkdtempSync(join(tmpdir(), 'fxflow-report-'));
let browser: Browser;
let golden: string;
let second: string;

async function backtest(...args: string[]): Promise<string> {
  const r = await fxflow('backtest', ...args, '--runs-dir', tmp);
  expect(r.code, r.stderr).toBe(0);
  return /Run saved in (.+)/.exec(r.stdout)![1]!;
}

const fillsOf = (dir: string): number =>
  readFileSync(join(dir, 'transactions.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"type":"ORDER_FILL"')).length;
const summaryOf = (dir: string): { finalNAV: number; netPL: number; trades: number } => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).summary;
/** equity.csv, which the page draws, is rounded to the account currency's cents. */
const cents = (x: number): number => Math.round(x * 100) / 100;
const url = (file: string): string => `file://${file}`;

beforeAll(async () => {
  browser = await launch();
  golden = await backtest('strategies/breakout-tpsl.ts', '--param', 'trailing=true');
  second = await backtest('strategies/breakout-tpsl.ts', '--param', 'tpAtr=3');
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

describe('report.html of a backtest run folder', () => {
  it('is written by the backtest, loads offline with no console error, one marker per fill, last equity point = final NAV, months sum to the net P/L', async () => {
    const file = join(golden, 'report.html');
    expect(existsSync(file)).toBe(true);
    const html = readFileSync(file, 'utf8');
    // Self-contained: no external script, stylesheet or image.
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).toContain('TradingView Lightweight Charts');
    const { page, errors, requests } = await openPage(browser, url(file), 'window.fxReport && window.fxReport.ready');
    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
    const fills = fillsOf(golden);
    const s = summaryOf(golden);
    expect(fills).toBeGreaterThan(100);
    const got = await page.evaluate(() => ({ markers: (globalThis as any).fxReport.markerCount, fills: (globalThis as any).fxReport.fills, lastNav: (globalThis as any).fxReport.lastNav }));
    expect(got.fills).toBe(fills);
    expect(got.markers).toBe(fills);
    expect(await page.evaluate(() => (globalThis as any).fxReport.fillsMarked)).toBe(fills);
    expect(got.lastNav).toBe(cents(s.finalNAV));
    const months = await page.$$eval('table.monthly td[data-pl]', (tds) => tds.map((td) => Number((td as unknown as { dataset: Record<string, string> }).dataset.pl)));
    expect(months.length).toBeGreaterThanOrEqual(12);
    expect(Math.abs(months.reduce((a, b) => a + b, 0) - cents(s.netPL))).toBeLessThan(1e-6);
    // Every figure has its definition on hover.
    const defs = await page.$$eval('.metric', (ms) => ms.map((m) => (m as unknown as { title: string }).title));
    expect(defs.length).toBeGreaterThan(30);
    expect(defs.every((d) => d.length > 10)).toBe(true);
    for (const key of ['cagr', 'sortino', 'calmar', 'maxDrawdownDays', 'expectancy', 'sqn', 'averageTradeHours', 'longestLosingStreak', 'bestTrade', 'worstTrade', 'spreadCost', 'financing', 'commission', 'ambiguousCandles', 'ambiguousPL']) {
      expect(await page.locator(`.metric[data-key="${key}"]`).count(), key).toBe(1);
    }
    await page.screenshot({ path: artifact('report.png'), fullPage: true });
    if (process.env.FXFLOW_DOCS_PNG === '1') {
      // The README's picture (docs/report.png): FXFLOW_DOCS_PNG=1 npx vitest run test/report/report.browser.test.ts
      const small = await openPage(browser, url(file), 'window.fxReport && window.fxReport.ready', { width: 1000, height: 1000 });
      // A trade in focus (its candles, fills and levels), then the equity and drawdown below it.
      await small.page.evaluate(() => {
        const r = (globalThis as any).fxReport;
        r.focusTrade(r.charts.EUR_USD.trades[40].id);
        const top = (globalThis as any).document.getElementById('prices').offsetTop;
        (globalThis as any).scrollTo(0, top - 8);
      });
      await small.page.screenshot({ path: join(ROOT, 'docs/report.png') });
      await small.page.close();
    }
    await page.close();
  }, 60_000);

  it('the trades table sorts and filters; clicking a trade centres the chart on it with its levels', async () => {
    const { page, errors } = await openPage(browser, url(join(golden, 'report.html')), 'window.fxReport && window.fxReport.ready');
    await page.click('#trades th[data-key="pl"]');
    const pls = await page.$$eval('#trades tbody tr', (rows) => rows.map((r) => Number(r.children[8]!.textContent!.replace(/,/g, ''))));
    expect(pls.length).toBeGreaterThan(10);
    expect(pls).toEqual([...pls].sort((a, b) => a - b));
    await page.selectOption('#filter-side', 'short');
    const sides = await page.$$eval('#trades tbody tr', (rows) => rows.map((r) => r.children[2]!.textContent));
    expect(sides.length).toBeGreaterThan(0);
    expect(new Set(sides)).toEqual(new Set(['short']));
    const row = page.locator('#trades tbody tr').nth(3);
    const id = await row.getAttribute('data-trade');
    await row.click();
    const view = await page.evaluate((tid) => {
      const r = (globalThis as any).fxReport;
      const v = r.charts.EUR_USD;
      const range = v.chart.timeScale().getVisibleRange();
      return { focused: r.focused, from: range.from, to: range.to, lines: v.lines.length, tid };
    }, id);
    expect(view.focused).toBe(id);
    const trade = readFileSync(join(golden, 'transactions.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((t) => t.tradeOpened?.tradeID === id);
    const opened = Date.parse(trade.time) / 1000;
    expect(view.from).toBeLessThanOrEqual(opened);
    expect(view.to).toBeGreaterThanOrEqual(opened);
    expect(view.lines).toBeGreaterThanOrEqual(3); // entry, exit and at least one protective level
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('fxflow report rebuilds it; fxflow compare overlays the equity curves and marks the differences', async () => {
    rmSync(join(golden, 'report.html'));
    const r = await fxflow('report', golden);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(golden, 'report.html'));
    expect(existsSync(join(golden, 'report.html'))).toBe(true);
    const out = join(tmp, 'compare.html');
    const c = await fxflow('compare', golden, second, '--out', out);
    expect(c.code, c.stderr).toBe(0);
    const { page, errors } = await openPage(browser, url(out), 'window.fxReport && window.fxReport.ready');
    expect(errors).toEqual([]);
    const navs = await page.evaluate(() => (globalThis as any).fxReport.lastNavs);
    expect(navs).toEqual([cents(summaryOf(golden).finalNAV), cents(summaryOf(second).finalNAV)]);
    // The params that differ are outlined; the figures have a best and a worst.
    expect(await page.locator('#params td.differs').count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('#metrics td.best').count()).toBeGreaterThan(3);
    await page.screenshot({ path: artifact('compare.png'), fullPage: true });
    await page.close();
  }, 60_000);
});

describe('report.html of an M1 run: downsampled wide view, full detail when zoomed', () => {
  it('shows coarser bars for two months, every M1 candle of a day once zoomed to it, and the fills of the window on their bars', async () => {
    const dir = await backtest('strategies/breakout-tpsl.ts', '--granularity', 'M1', '--from', '2024-01-01', '--to', '2024-03-01', '--param', 'lookback=150');
    const { page, errors } = await openPage(browser, url(join(dir, 'report.html')), 'window.fxReport && window.fxReport.ready');
    const wide = await page.evaluate(() => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      return { level: v.level, bars: v.series.data().length, info: (globalThis as any).document.querySelector('#prices .chart-info').textContent };
    });
    expect(wide.level).toBeGreaterThan(0);
    expect(wide.bars).toBeLessThanOrEqual(3 * 4000);
    expect(wide.info).toContain('downsampled');
    // Zoom to one day (a Wednesday): the chart switches to the recorded M1 candles.
    const from = Date.UTC(2024, 1, 7) / 1000;
    await page.evaluate((f) => (globalThis as any).fxReport.charts.EUR_USD.chart.timeScale().setVisibleRange({ from: f, to: f + 86_400 }), from);
    await page.waitForFunction(() => (globalThis as any).fxReport.charts.EUR_USD.level === 0, null, { timeout: 10_000 });
    const zoomed = await page.evaluate((f) => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      const bars = v.series.data().filter((b: { time: number }) => b.time >= f && b.time < f + 86_400);
      const marks = v.markers.markers();
      return { bars: bars.map((b: { time: number; close: number }) => [b.time, b.close]), first: v.series.data()[0].time, last: v.series.data().at(-1).time, marks: marks.length, fillsMarked: v.fillsMarked };
    }, from);
    // The same candles as the run folder recorded (decoded by Node's reader of the file the page embeds).
    const enc = JSON.parse(readFileSync(join(dir, 'chart-candles.json'), 'utf8')).series[0];
    const decode = new Function(`${readFileSync(join(ROOT, 'src/report/page/common.js'), 'utf8')}; return decodeCandles;`)() as (s: unknown) => { t: Float64Array; c: Float64Array };
    const d = decode(enc);
    const day: [number, number][] = [];
    for (let i = 0; i < d.t.length; i++) if (d.t[i]! >= from && d.t[i]! < from + 86_400) day.push([d.t[i]!, d.c[i]!]);
    expect(day.length).toBeGreaterThan(1000);
    expect(zoomed.bars).toEqual(day);
    // Fills inside the window's bars, one marker each (no grouping at this zoom).
    const fills = readFileSync(join(dir, 'transactions.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"type":"ORDER_FILL"')).map((l) => Date.parse(JSON.parse(l).time) / 1000);
    const inWindow = fills.filter((t) => t >= zoomed.first && t < zoomed.last + 60).length;
    expect(inWindow).toBeGreaterThan(0);
    expect(zoomed.fillsMarked).toBe(inWindow);
    expect(zoomed.marks).toBe(inWindow);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

describe('fxflow report on bad input', () => {
  const copyRun = (name: string, skip: readonly string[] = []): string => {
    const dir = join(tmp, name);
    mkdirSync(dir);
    for (const f of readdirSync(golden)) if (!skip.includes(f)) copyFileSync(join(golden, f), join(dir, f));
    return dir;
  };

  it('a folder that is not a run folder: one clear message, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-a-run-'));
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const r = await fxflow('report', dir);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`fxflow: ${dir} is not an fxflow run folder: it has neither transactions.jsonl nor summary.json (a run folder is what \`fxflow backtest\` saves under runs/; \`ls runs/\` lists them)`);
    const missing = await fxflow('report', join(dir, 'nope'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });

  it('a run folder from an older fxflow (no candles file): the report says so and still marks every fill', async () => {
    const dir = copyRun('older', ['chart-candles.json', 'report.html']);
    const r = await fxflow('report', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('chart-candles.json is missing');
    const { page, errors } = await openPage(browser, url(join(dir, 'report.html')), 'window.fxReport && window.fxReport.ready');
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toContain('chart-candles.json is missing');
    expect(await page.evaluate(() => (globalThis as any).fxReport.markerCount)).toBe(fillsOf(dir));
    await page.close();
  }, 60_000);

  it('a truncated transactions.jsonl: the report says where it stops', async () => {
    const dir = copyRun('truncated', ['report.html']);
    const text = readFileSync(join(dir, 'transactions.jsonl'), 'utf8');
    writeFileSync(join(dir, 'transactions.jsonl'), text.slice(0, Math.floor(text.length * 0.6)));
    const r = await fxflow('report', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('transactions.jsonl is truncated');
    const { page, errors } = await openPage(browser, url(join(dir, 'report.html')), 'window.fxReport && window.fxReport.ready');
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toMatch(/truncated: its last line \(line \d+\) is cut short/);
    expect(await page.evaluate(() => (globalThis as any).fxReport.markerCount)).toBe(fillsOf(dir));
    await page.close();
  }, 60_000);

  it('a run with no trades: a report that says so, no blank page', async () => {
    const strategy = join(tmp, 'never-trades.ts');
    writeFileSync(strategy, `import { defineStrategy } from ${JSON.stringify(join(ROOT, 'src/strategy/api.ts'))};
export default defineStrategy({ name: 'never-trades', params: {}, subscribe: { candles: ['EUR_USD:H1'] }, init: () => ({}), onCandle() { return undefined; } });
`);
    const dir = await backtest(strategy, '--to', '2024-03-01');
    const { page, errors } = await openPage(browser, url(join(dir, 'report.html')), 'window.fxReport && window.fxReport.ready');
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toContain('the run made no trades');
    expect(await page.locator('#distribution').textContent()).toContain('No closed trades');
    expect(await page.evaluate(() => (globalThis as any).fxReport.lastNav)).toBe(cents(summaryOf(dir).finalNAV));
    await page.screenshot({ path: artifact('report-no-trades.png') });
    await page.close();
  }, 60_000);
});
