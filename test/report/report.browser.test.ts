// The HTML reports in a real browser: headless Debian chromium (playwright-core) opens the files
// from disk, as a user would, and the figures on the page are checked against the run folder.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, artifact, axisLabels, fxflow, launch, openPage, recordCanvasText } from './browser.ts';
import { humanTime, humanTimeTick } from '../../src/report/human-time.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-report-'));
let browser: Browser;
let golden: string;
let second: string;

async function backtest(...args: string[]): Promise<string> {
  const r = await fxflow('backtest', ...args, '--runs-dir', tmp);
  expect(r.code, r.stderr).toBe(0);
  return /Run saved in (.+)/.exec(r.stdout)![1]!;
}

/** The fills of a run folder's whole lines (a line cut short, as in a truncated file, is no fill the report can mark). */
const fillsOf = (dir: string): number =>
  readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"ORDER_FILL"') && whole(l)).length;
const whole = (line: string): boolean => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};
const summaryOf = (dir: string): { finalNAV: number; netPL: number; trades: number } =>
  JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).summary;
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
    const { page, errors, requests } = await openPage(
      browser,
      url(file),
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
    const fills = fillsOf(golden);
    const s = summaryOf(golden);
    expect(fills).toBeGreaterThan(100);
    const got = await page.evaluate(() => ({
      markers: (globalThis as any).fxReport.markerCount,
      fills: (globalThis as any).fxReport.fills,
      lastNav: (globalThis as any).fxReport.lastNav,
    }));
    expect(got.fills).toBe(fills);
    // A year of H1 zoomed out: every fill is in view, its markers thinned to at most 600 (one per side and group of bars).
    expect(fills).toBeGreaterThan(600);
    expect(got.markers).toBeLessThanOrEqual(600);
    expect(got.markers).toBeGreaterThan(100);
    expect(await page.evaluate(() => (globalThis as any).fxReport.fillsMarked)).toBe(fills);
    expect(got.lastNav).toBe(cents(s.finalNAV));
    const months = await page.$$eval('table.monthly td[data-pl]', (tds) =>
      tds.map((td) => Number((td as unknown as { dataset: Record<string, string> }).dataset.pl)),
    );
    expect(months.length).toBeGreaterThanOrEqual(12);
    expect(Math.abs(months.reduce((a, b) => a + b, 0) - cents(s.netPL))).toBeLessThan(1e-6);
    // Every figure has its definition on hover.
    const defs = await page.$$eval('.metric', (ms) =>
      ms.map((m) => (m as unknown as { title: string }).title),
    );
    expect(defs.length).toBeGreaterThan(30);
    expect(defs.every((d) => d.length > 10)).toBe(true);
    for (const key of [
      'cagr',
      'sortino',
      'calmar',
      'maxDrawdownDays',
      'expectancy',
      'sqn',
      'averageHoldingHours',
      'longestLosingStreak',
      'largestWin',
      'largestLoss',
      'spreadCost',
      'financing',
      'commission',
      'ambiguousCandles',
      'ambiguousPL',
    ]) {
      expect(await page.locator(`.metric[data-key="${key}"]`).count(), key).toBe(1);
    }
    // No figure twice under two names: summary.json's average holding, largest win and largest loss
    // are the page's average trade duration, best and worst trade, shown once.
    for (const key of ['averageTradeHours', 'bestTrade', 'worstTrade'])
      expect(await page.locator(`.metric[data-key="${key}"]`).count(), key).toBe(0);
    const tileLabels = await page.$$eval('.metric .k', (ks) => ks.map((k) => k.textContent));
    expect(new Set(tileLabels).size).toBe(tileLabels.length);
    await page.screenshot({ path: artifact('report.png'), fullPage: true });
    if (process.env.FXFLOW_DOCS_PNG === '1') {
      // The README's picture (docs/report.png): FXFLOW_DOCS_PNG=1 npx vitest run test/report/report.browser.test.ts
      const small = await openPage(browser, url(file), 'window.fxReport && window.fxReport.ready', {
        width: 1000,
        height: 1000,
      });
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

  it('the drawdown axis reads in %: the labels the chart draws are the drawdowns themselves (not Lightweight Charts\' change-from-base "percent")', async () => {
    const { page, errors } = await openPage(
      browser,
      url(join(golden, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const got = await page.evaluate(() => {
      const r = (globalThis as any).fxReport;
      const f = r.ddSeries.priceFormatter();
      const pts = r.ddSeries.data();
      const min = Math.min(...pts.map((p: { value: number }) => p.value));
      // The chart's own price scale: the label it draws at the deepest point's height.
      const y = r.ddSeries.priceToCoordinate(min);
      return {
        samples: [-0.75, -0.5, -7.5, 0].map((x) => f.format(x)),
        min,
        atMin: f.format(r.ddSeries.coordinateToPrice(y)),
        minLabel: f.format(min),
      };
    });
    expect(got.samples).toEqual(['-0.75%', '-0.50%', '-7.50%', '0.00%']);
    expect(got.minLabel).toBe(`${got.min.toFixed(2)}%`);
    expect(got.atMin).toBe(got.minLabel);
    // The worst drawdowns table says why it differs from the Figures' max drawdown.
    const s = summaryOf(golden) as unknown as { maxDrawdown: number };
    const note = await page.textContent('#drawdowns-note');
    expect(note).toContain('daily equity curve');
    // equity.csv's days as they are: FX trading days ending 17:00 New York (not UTC days).
    expect(note).toContain('the last NAV of each FX trading day, ending 17:00 New York');
    expect(note).not.toContain('UTC day');
    expect(note).toContain(
      s.maxDrawdown.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
    );
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('report.timeZone America/New_York: report.txt and the page say the times in New York across the March DST switch; trades.csv stays UTC; fxflow report keeps the zone', async () => {
    const dir = await backtest(
      'strategies/breakout-tpsl.ts',
      '--from',
      '2024-03-01',
      '--to',
      '2024-04-01',
      '--report-timezone',
      'America/New_York',
    );
    // report.txt: the exact UTC period, then the same in New York (EST before the switch, EDT after).
    const period = readFileSync(join(dir, 'report.txt'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Period'))!;
    expect(period).toMatch(
      /^Period\s+2024-03-01T00:00:00\.000Z → 2024-04-01T00:00:00\.000Z  \(2024-02-29 19:00 EST → 2024-03-31 20:00 EDT\)$/,
    );
    // The machine files keep UTC.
    const rows = readFileSync(join(dir, 'trades.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(r[4]).toMatch(/^2024-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The page as `fxflow report` writes it again from the folder (the zone from its config.json).
    rmSync(join(dir, 'report.html'));
    const r = await fxflow('report', dir);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
      undefined,
      async (p) => {
        await recordCanvasText(p);
        // Every text the period line ever shows, from the moment it is drawn.
        await p.addInitScript(() => {
          const w = globalThis as any;
          w.__periods = [];
          new w.MutationObserver(() => {
            const el = w.document.getElementById('period');
            if (el) w.__periods.push(el.textContent);
          }).observe(w.document, { childList: true, subtree: true, characterData: true });
        });
      },
    );
    expect(await page.textContent('#period')).toContain(
      '2024-02-29 19:00 EST → 2024-03-31 20:00 EDT (America/New_York)',
    );
    // Written in the zone the first time: never a UTC period rewritten afterwards.
    const periods = (await page.evaluate(() => (globalThis as any).__periods)) as string[];
    expect(periods.length).toBeGreaterThan(0);
    for (const t of periods) expect(t).toContain('EST → 2024-03-31 20:00 EDT (America/New_York)  ·  run ');
    // The charts' crosshair says New York's time; the time axes' labels are New York's days and
    // hours, each where that day or hour begins on New York's clock (the first bar of its day).
    const NY = 'America/New_York';
    expect(
      await page.evaluate(
        (t) => (globalThis as any).fxReport.charts.EUR_USD.chart.options().localization.timeFormatter(t),
        Date.UTC(2024, 2, 12, 18) / 1000,
      ),
    ).toBe('2024-03-12 14:00 EDT');
    // The times of a chart's points (its time scale: every series' points).
    const timesOf = async (chart: string): Promise<number[]> =>
      (await page.evaluate((chart) => {
        const c = new Function(`return (${chart});`)();
        const all = c
          .panes()
          .flatMap((p: any) => p.getSeries())
          .map((s: any) => s.data().map((b: { time: number }) => b.time));
        return [...new Set(all.flat() as number[])].sort((a, b) => a - b);
      }, chart)) as number[];
    const nyDay = (t: number): string => humanTime(t * 1000, NY).slice(0, 10);
    const typeOf = (s: string): number =>
      /^\d\d:\d\d$/.test(s) ? 3 : /^\d{4}$/.test(s) ? 0 : /^[A-Z][a-z]{2}$/.test(s) ? 1 : 2;
    const check = (labels: { text: string; time: number | null }[], bars: number[]): number[] => {
      const types = labels.map((l) => typeOf(l.text));
      labels.forEach((l, i) => {
        expect(l.time, l.text).not.toBeNull();
        expect(l.text).toBe(humanTimeTick(l.time! * 1000, types[i]!, NY));
        if (types[i] !== 3) {
          const at = bars.indexOf(l.time!);
          expect(at, l.text).toBeGreaterThan(0);
          expect(nyDay(bars[at - 1]!), l.text).not.toBe(nyDay(l.time!));
        }
      });
      return types;
    };
    const PRICE = 'fxReport.charts.EUR_USD.chart';
    const wide = await axisLabels(page, '#chart-EUR_USD', PRICE);
    expect(check(wide, await timesOf(PRICE)).filter((t) => t === 2).length).toBeGreaterThan(4);
    // Zoomed to two days: hours, on New York's clock (06:00 EDT is 10:00 UTC).
    await page.evaluate(() => {
      const c = (globalThis as any).fxReport.charts.EUR_USD.chart;
      c.timeScale().setVisibleRange({ from: Date.UTC(2024, 2, 12) / 1000, to: Date.UTC(2024, 2, 14) / 1000 });
    });
    const near = await axisLabels(page, '#chart-EUR_USD', PRICE);
    expect(check(near, await timesOf(PRICE)).filter((t) => t === 3).length).toBeGreaterThan(2);
    // The equity chart (daily points at 17:00 New York) likewise.
    const days = await axisLabels(page, '#equity-chart', 'fxReport.equityChart');
    expect(check(days, await timesOf('fxReport.equityChart')).length).toBeGreaterThan(4);
    expect(
      await page.$$eval('p.note', (ps) =>
        ps.map((p) => p.textContent ?? '').filter((t) => t.includes('by the opening day')),
      ),
    ).toEqual([
      expect.stringMatching(/^Times are America\/New_York's; the dates filter by the opening day in UTC;/),
    ]);
    const opened = await page.$$eval('#trades tbody tr', (trs) =>
      Object.fromEntries(trs.map((t) => [t.getAttribute('data-trade'), t.children[4]!.textContent])),
    );
    const want = Object.fromEntries(
      rows
        .filter((c) => opened[c[0]!] !== undefined)
        .map((c) => [c[0], humanTime(Date.parse(c[4]!), 'America/New_York')]),
    );
    expect(Object.keys(want).length).toBeGreaterThan(10);
    expect(Object.fromEntries(Object.keys(want).map((k) => [k, opened[k]]))).toEqual(want);
    const zones = new Set(Object.values(want).map((w) => String(w).slice(-3)));
    expect([...zones].sort()).toEqual(['EDT', 'EST']);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('every report.txt line is on the page (orders with reasons, exits, long/short, per instrument, data), with no raw field name', async () => {
    const { page, errors } = await openPage(
      browser,
      url(join(golden, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const text = await page.evaluate(() => {
      const d = (globalThis as any).document;
      const parts = ['h1', '#period', '#metrics', '#breakdown'].map(
        (q) => d.querySelector(q)?.innerText ?? '',
      );
      return parts.join('\n');
    });
    const lines = readFileSync(join(golden, 'report.txt'), 'utf8').split('\n');
    // The period in words on the page (2024-01-01 00:00 → 2025-01-01 00:00 UTC), RFC 3339 in report.txt.
    const period = /^Period\s+(\S+) → (\S+)/.exec(lines.find((l) => l.startsWith('Period'))!)!;
    const words2 = (iso: string): string => iso.slice(0, 16).replace('T', ' ');
    expect(text).toContain(`${words2(period[1]!)} → ${words2(period[2]!)} UTC`);
    // One sign for the max drawdown: the page's tiles read as report.txt's line (a fall, negative).
    const ddLine = lines.find((l) => l.startsWith('Max drawdown'))!;
    const tiles = await page.$$eval(
      '.metric[data-key="maxDrawdown"] .v, .metric[data-key="maxDrawdownPct"] .v',
      (vs) => vs.map((v) => v.textContent ?? ''),
    );
    expect(tiles).toHaveLength(2);
    for (const t of tiles) {
      expect(t.startsWith('-'), t).toBe(true);
      expect(ddLine).toContain(t.replace(' USD', ''));
    }
    const report = lines
      .slice(2)
      .filter(
        (l) =>
          l.trim() !== '' && !l.startsWith('fill models') && !/events in/.test(l) && !l.startsWith('Period'),
      );
    expect(report.length).toBeGreaterThan(25);
    const words = (r: string): string =>
      r
        .replace(/_ORDER$/, '')
        .replace(/_/g, ' ')
        .toLowerCase();
    const missing: string[] = [];
    for (const line of report) {
      const value = line.replace(/^\s*\S.*?\s{2,}/, '');
      // Every number (signs aside: the page shows a drawdown as a positive depth) and every v20 reason, in words.
      const numbers = value.match(/\d{1,3}(,\d{3})+(\.\d+)?%?|\d+(\.\d+)?%?/g) ?? [];
      // v20 reasons (instrument names such as EUR_USD stay as they are, and are found as they are).
      const reasons = (value.match(/\b[A-Z][A-Z_]{3,}\b/g) ?? [])
        .filter((w) => !['USD', 'SYNTHETIC'].includes(w) && !/^[A-Z]{3}_[A-Z]{3}$/.test(w))
        .map(words);
      for (const tok of [...numbers, ...reasons])
        if (!text.toLowerCase().includes(tok.toLowerCase())) missing.push(`${line.trim()} → ${tok}`);
    }
    expect(missing).toEqual([]);
    // The structured parts equal summary.json.
    const S = JSON.parse(readFileSync(join(golden, 'summary.json'), 'utf8')).summary;
    expect(
      await page.$$eval('#exits tbody tr', (rs) =>
        rs.map((r) => [r.getAttribute('data-reason'), Number(r.children[1]!.textContent)]),
      ),
    ).toEqual(Object.entries(S.exitReasons));
    expect(
      await page.$$eval('#groups tbody tr', (rs) => rs.map((r) => r.getAttribute('data-group'))),
    ).toEqual(['long', 'short', ...Object.keys(S.byInstrument)]);
    expect(await page.textContent('#orders')).toContain(`market halted ${S.orders.cancelReasons[0].count}`);
    // All / Long / Short: the table's columns agree with summary.json's totals and its long and short groups.
    const sides = Object.fromEntries(
      (await page.evaluate(() => (globalThis as any).fxReport.sides)).map((f: any) => [f.key, f]),
    );
    for (const k of ['trades', 'wins', 'losses']) expect(sides[k].all, k).toBe(S[k]);
    for (const k of ['grossProfit', 'grossLoss', 'largestWin', 'largestLoss', 'profitFactor'])
      expect(sides[k].all, k).toBeCloseTo(S[k], 3);
    expect(sides.averageHoldingHours.all).toBeCloseTo(S.averageHoldingHours, 2);
    for (const side of ['long', 'short'] as const) {
      for (const k of ['trades', 'wins', 'losses', 'winRate'])
        expect(sides[k][side], `${side} ${k}`).toBe(S[side][k]);
      for (const k of ['netPL', 'profitFactor'])
        expect(sides[k][side], `${side} ${k}`).toBeCloseTo(S[side][k], 3);
    }
    expect(
      await page.$$eval('#sides tr[data-key="trades"] td', (tds) => tds.map((t) => t.textContent)),
    ).toEqual(['Trades (closed)', String(S.trades), String(S.long.trades), String(S.short.trades)]);
    // No summary.json key shown as a label: camelCase words appear only in config.json as it is.
    const labels = await page.$$eval('.metric .k, #breakdown th, #breakdown td.l', (xs) =>
      xs.map((x) => x.textContent ?? ''),
    );
    expect(labels.filter((l) => /\b[a-z]+[A-Z][a-zA-Z]*\b/.test(l))).toEqual([]);
    expect(text).not.toMatch(/marketHalted|exposurePct|exitReasons|byInstrument/);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('buy and hold beside the equity, equity in money, % and log, monthly returns in %', async () => {
    const { page, errors } = await openPage(
      browser,
      url(join(golden, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const S = JSON.parse(readFileSync(join(golden, 'summary.json'), 'utf8')).summary;
    const cc = JSON.parse(readFileSync(join(golden, 'chart-candles.json'), 'utf8'));
    const b = cc.benchmarks[0];
    // Independently: the recorded first ask and last bid of the run's own candles (transactions' prices come from the same replay).
    const bench = await page.evaluate(() => (globalThis as any).fxReport.benchmarks);
    expect(bench).toHaveLength(1);
    expect(bench[0].instrument).toBe('EUR_USD');
    expect(bench[0].returnPct).toBeCloseTo((b.bid.at(-1) / b.ask - 1) * 100, 9);
    expect(b.t.length).toBeGreaterThan(250);
    expect(await page.locator('.bench-legend').count()).toBe(1);
    // Buy and hold as a figure too, the same return as its line.
    const bhTile = await page.locator('.metric[data-key="buyHoldReturnPct"] .v').textContent();
    expect(bhTile).toBe(`${(Math.round(bench[0].returnPct * 100) / 100 || 0).toFixed(2)}%`);
    // Average bars in trade: the closed trades' mean holding in H1 bars (hours), from trades.csv.
    const tcsv = readFileSync(join(golden, 'trades.csv'), 'utf8').trim().split('\n');
    const th = tcsv[0]!.split(',');
    const closedRows = tcsv
      .slice(1)
      .map((l) => l.split(','))
      .filter((f) => f[th.indexOf('exitReason')] !== 'END_OF_RUN');
    const hours = closedRows.map(
      (f) => (Date.parse(f[th.indexOf('closeTime')]!) - Date.parse(f[th.indexOf('openTime')]!)) / 3_600_000,
    );
    const bars = await page.locator('.metric[data-key="averageBarsInTrade"] .v').textContent();
    expect(Number(bars)).toBeCloseTo(hours.reduce((a, b) => a + b, 0) / hours.length, 2);
    expect(await page.locator('.metric[data-key="maxRunUp"]').count()).toBe(1);
    // The properties as a table: a setting per row, by its path in config.json.
    const cfgJson = JSON.parse(readFileSync(join(golden, 'config.json'), 'utf8'));
    expect(
      await page.locator('#properties tr[data-key="account.currency"] td:last-child').textContent(),
    ).toBe(cfgJson.account.currency);
    expect(await page.locator('#properties tr[data-key="run.from"] td:last-child').textContent()).toBe(
      String(cfgJson.run.from),
    );
    // The first candle of the run at its ask is the price bought.
    const first = JSON.parse(
      readFileSync(join(golden, 'transactions.jsonl'), 'utf8')
        .split('\n')
        .find((l) => l.includes('"ORDER_FILL"'))!,
    );
    expect(Math.abs(b.ask - Number(first.price))).toBeLessThan(0.05);
    await page.click('#equity-mode button[data-mode="%"]');
    const pct = await page.evaluate(() => ({
      last: (globalThis as any).fxReport.lastPlotted,
      bench: (globalThis as any).fxReport.benchSeries[0].data().at(-1).value,
    }));
    expect(pct.last).toBeCloseTo((cents(S.finalNAV) / S.initialBalance - 1) * 100, 6);
    expect(pct.bench).toBeCloseTo(bench[0].returnPct, 6);
    await page.click('#equity-mode button[data-mode="log"]');
    const log = await page.evaluate(() => ({
      mode: (globalThis as any).fxReport.equityChart.priceScale('right').options().mode,
      last: (globalThis as any).fxReport.lastPlotted,
    }));
    expect(log.mode).toBe(1); // PriceScaleMode.Logarithmic
    expect(log.last).toBe(cents(S.finalNAV));
    // Monthly returns in % by default; each cell is its month's P/L over the month's opening NAV.
    const cells = await page.$$eval('table.monthly td[data-pct]', (tds) =>
      tds.map(
        (td) =>
          [td.textContent, Number(td.getAttribute('data-pct')), Number(td.getAttribute('data-pl'))] as [
            string,
            number,
            number,
          ],
      ),
    );
    expect(cells.length).toBeGreaterThanOrEqual(12);
    let nav = S.initialBalance;
    for (const [textPct, p, pl] of cells) {
      // Rounded to 2 decimals, and a change that rounds to nothing is 0.00%, never -0.00%.
      expect(textPct).toBe(`${(Math.round(p * 100) / 100 || 0).toFixed(2)}%`);
      expect(p).toBeCloseTo((pl / nav) * 100, 9);
      nav += pl;
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('the trades table filters by dates, side, P/L sign and exit, and exports what passes as CSV', async () => {
    const { page, errors } = await openPage(
      browser,
      url(join(golden, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const trades = readFileSync(join(golden, 'trades.csv'), 'utf8').trim().split('\n');
    const head = trades[0]!.split(',');
    const rows = trades.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [head[i], v])));
    await page.selectOption('#filter-pl', 'loss');
    await page.selectOption('#filter-side', 'long');
    await page.selectOption('#filter-exit', 'TAKE_PROFIT_ORDER'); // trades.csv: TAKE_PROFIT
    await page.fill('#filter-from', '2024-03-01');
    await page.dispatchEvent('#filter-from', 'change');
    await page.fill('#filter-to', '2024-08-31');
    await page.dispatchEvent('#filter-to', 'change');
    const inDates = (r: Record<string, string>): boolean =>
      r.openTime! >= '2024-03-01' && r.openTime! < '2024-09-01';
    const want = rows
      .filter(
        (r) => Number(r.realizedPL) < 0 && r.side === 'long' && r.exitReason === 'TAKE_PROFIT' && inDates(r),
      )
      .map((r) => r.id);
    const csv = await page.evaluate(() => (globalThis as any).fxReport.tradesCsv() as string);
    const ids = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]);
    expect([...ids].sort()).toEqual([...want].sort());
    // Winners, then the download itself.
    await page.selectOption('#filter-pl', 'win');
    await page.selectOption('#filter-exit', '');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const saved = join(tmp, 'export.csv');
    await download.saveAs(saved);
    const got = readFileSync(saved, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const winners = rows.filter((r) => Number(r.realizedPL) > 0 && r.side === 'long' && inDates(r));
    expect(winners.length).toBeGreaterThan(10);
    expect(got.map((r) => r[0]).sort()).toEqual(winners.map((r) => r.id).sort());
    expect(got.every((r) => Number(r[8]) > 0)).toBe(true);
    expect(await page.textContent('#trades-count')).toContain(`${winners.length} of`);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('the trades table sorts and filters; clicking a trade centres the chart on it with its levels', async () => {
    const { page, errors } = await openPage(
      browser,
      url(join(golden, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    await page.click('#trades th[data-key="pl"]');
    const pls = await page.$$eval('#trades tbody tr', (rows) =>
      rows.map((r) => Number(r.children[8]!.textContent!.replace(/,/g, ''))),
    );
    expect(pls.length).toBeGreaterThan(10);
    expect(pls).toEqual([...pls].sort((a, b) => a - b));
    // Entry and exit at EUR_USD's display precision (5 decimals); the cumulative P/L of the closed
    // trades in closing order (trades.csv's order) is their running sum, ending at the realized P/L.
    await page.click('#trades th[data-key="id"]');
    const cells = await page.$$eval('#trades tbody tr', (rows) =>
      rows.map((r) => [
        r.getAttribute('data-trade'),
        r.children[5]!.textContent,
        r.children[7]!.textContent,
        r.children[9]!.textContent,
      ]),
    );
    expect(cells.every(([, a, b]) => /^\d\.\d{5}$/.test(a!) && (b === '' || /^\d\.\d{5}$/.test(b!)))).toBe(
      true,
    );
    const csv = readFileSync(join(golden, 'trades.csv'), 'utf8').trim().split('\n');
    const head = csv[0]!.split(',');
    let acc = 0;
    const want = new Map<string, number>();
    for (const l of csv.slice(1)) {
      const f = l.split(',');
      if (f[head.indexOf('exitReason')] === 'END_OF_RUN') continue;
      want.set(f[head.indexOf('id')]!, (acc += Number(f[head.indexOf('realizedPL')])));
    }
    const cum = await page.evaluate(
      (ids) => ids.map((i) => (globalThis as any).fxReport.cumPL(i)),
      [...want.keys()],
    );
    cum.forEach((c: number, i: number) => expect(c).toBeCloseTo([...want.values()][i]!, 6));
    for (const [id, , , text] of cells.slice(0, 50))
      if (want.has(id!)) expect(Number(text!.replace(/,/g, ''))).toBeCloseTo(want.get(id!)!, 2);
    await page.click('#trades th[data-key="pl"]');
    await page.selectOption('#filter-side', 'short');
    const sides = await page.$$eval('#trades tbody tr', (rows) =>
      rows.map((r) => r.children[2]!.textContent),
    );
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
    const trade = readFileSync(join(golden, 'transactions.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((t) => t.tradeOpened?.tradeID === id);
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
    // The legend names each run by the params that differ (trailing and tpAtr here), not by its folder.
    expect(await page.evaluate(() => (globalThis as any).fxReport.legend)).toEqual([
      '1. tpAtr=2 trailing=true',
      '2. tpAtr=3 trailing=false',
    ]);
    // Same period and instrument: nothing to warn of (src/report/compare.test.ts has runs that differ).
    expect(c.stderr).not.toContain('warning');
    expect(await page.locator('#compare-notes').count()).toBe(0);
    const figureNames = await page.$$eval('#metrics td.l', (tds) => tds.map((t) => t.textContent ?? ''));
    expect(figureNames.filter((l) => /\b[a-z]+[A-Z][a-zA-Z]*\b/.test(l))).toEqual([]);
    await page.screenshot({ path: artifact('compare.png'), fullPage: true });
    await page.close();
  }, 60_000);
});

describe('report.html of an M1 run: downsampled wide view, full detail when zoomed', () => {
  it('shows coarser bars for two months, every M1 candle of a day once zoomed to it, and the fills of the window on their bars', async () => {
    const dir = await backtest(
      'strategies/breakout-tpsl.ts',
      '--granularity',
      'M1',
      '--from',
      '2024-01-01',
      '--to',
      '2024-03-01',
      '--param',
      'lookback=150',
    );
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const wide = await page.evaluate(() => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      return {
        level: v.level,
        bars: v.series.data().length,
        info: (globalThis as any).document.querySelector('#prices .chart-info').textContent,
      };
    });
    expect(wide.level).toBeGreaterThan(0);
    expect(wide.bars).toBeLessThanOrEqual(3 * 4000);
    expect(wide.info).toContain('downsampled');
    // Zoom to one day (a Wednesday): the chart switches to the recorded M1 candles.
    const from = Date.UTC(2024, 1, 7) / 1000;
    await page.evaluate(
      (f) =>
        (globalThis as any).fxReport.charts.EUR_USD.chart
          .timeScale()
          .setVisibleRange({ from: f, to: f + 86_400 }),
      from,
    );
    await page.waitForFunction(() => (globalThis as any).fxReport.charts.EUR_USD.level === 0, null, {
      timeout: 10_000,
    });
    const zoomed = await page.evaluate((f) => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      const bars = v.series.data().filter((b: { time: number }) => b.time >= f && b.time < f + 86_400);
      const marks = v.markers.markers();
      return {
        bars: bars.map((b: { time: number; close: number }) => [b.time, b.close]),
        first: v.series.data()[0].time,
        last: v.series.data().at(-1).time,
        marks: marks.length,
        fillsMarked: v.fillsMarked,
      };
    }, from);
    // The same candles as the run folder recorded (decoded by Node's reader of the file the page embeds).
    const enc = JSON.parse(readFileSync(join(dir, 'chart-candles.json'), 'utf8')).series[0];
    const decode = new Function(
      `${readFileSync(join(ROOT, 'src/report/page/common.js'), 'utf8')}; return decodeCandles;`,
    )() as (s: unknown) => { t: Float64Array; c: Float64Array };
    const d = decode(enc);
    const day: [number, number][] = [];
    for (let i = 0; i < d.t.length; i++)
      if (d.t[i]! >= from && d.t[i]! < from + 86_400) day.push([d.t[i]!, d.c[i]!]);
    expect(day.length).toBeGreaterThan(1000);
    expect(zoomed.bars).toEqual(day);
    // Fills inside the window's bars, one marker each (no grouping at this zoom).
    const fills = readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"ORDER_FILL"'))
      .map((l) => Date.parse(JSON.parse(l).time) / 1000);
    const inWindow = fills.filter((t) => t >= zoomed.first && t < zoomed.last + 60).length;
    expect(inWindow).toBeGreaterThan(0);
    expect(zoomed.fillsMarked).toBe(inWindow);
    expect(zoomed.marks).toBe(inWindow);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

describe('a short run and a live run folder', () => {
  it('a run shorter than a year shows no CAGR or Calmar (and says why); a live run folder (summary.json "live", no chart candles) is reported as live, with its period and exposure from its transactions', async () => {
    const short = await backtest('strategies/breakout-tpsl.ts', '--from', '2024-01-01', '--to', '2024-02-15');
    const s1 = await openPage(
      browser,
      url(join(short, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    for (const k of ['cagr', 'calmar']) {
      expect(await s1.page.textContent(`.metric[data-key="${k}"] .v`)).toBe('needs a year');
      expect(await s1.page.getAttribute(`.metric[data-key="${k}"]`, 'title')).toContain('a year or more');
    }
    expect(await s1.page.textContent('#run-kind')).toBe('backtest');
    await s1.page.close();
    // The files `fxflow run` leaves (src/app/live-run-folder.ts): summary.json with "live", no
    // chart-candles.json; its summary starting at the first equity mark, after the first fill, and an
    // exposure counted from that mark.
    const dir = join(tmp, 'live-like');
    mkdirSync(dir);
    for (const f of readdirSync(short))
      if (!['chart-candles.json', 'report.html'].includes(f)) copyFileSync(join(short, f), join(dir, f));
    const doc = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    const fillTimes = readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"ORDER_FILL"'))
      .map((l) => JSON.parse(l).time as string);
    doc.summary.from = new Date(Date.parse(fillTimes[0]!) + 3_600_000).toISOString();
    doc.summary.exposurePct = 121.52;
    doc.live = { env: 'practice', accountID: '101-004-7777777-001', broker: 'v20', sessions: 2 };
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(doc));
    const r = await fxflow('report', dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('chart-candles.json');
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    expect(await page.textContent('#run-kind')).toBe('LIVE run · practice · broker v20 · 2 sessions');
    const body = await page.evaluate(() => (globalThis as any).document.body.innerText as string);
    expect(body).not.toContain('chart-candles.json is missing');
    expect(body).not.toContain('rerun the backtest');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).not.toContain('7777777');
    // The period starts no later than the first fill.
    // The exact times are on the period's hover (the text says them in minutes).
    const period = (await page.getAttribute('#period', 'title'))!;
    const from = /^(\S+) →/.exec(period)![1]!;
    expect(Date.parse(from)).toBeLessThanOrEqual(Date.parse(fillTimes[0]!));
    // Exposure: the union of the trades' open intervals (trades.csv) over the first to the last transaction.
    const txs = readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => Date.parse(JSON.parse(l).time));
    const lo = Math.min(Date.parse(doc.summary.from), txs[0]!),
      hi = Math.max(Date.parse(doc.summary.to), txs.at(-1)!);
    const spans = readFileSync(join(dir, 'trades.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','))
      .map((f) => [Date.parse(f[4]!), f[5] ? Date.parse(f[5]) : hi])
      .sort((a, b) => a[0]! - b[0]!);
    let covered = 0,
      end = -Infinity;
    for (const [a, b] of spans) {
      if (b! > end) {
        covered += b! - Math.max(a!, end);
        end = b!;
      }
    }
    const exposure = Number((await page.textContent('.metric[data-key="exposurePct"] .v'))!.replace('%', ''));
    expect(exposure).toBeLessThanOrEqual(100);
    expect(exposure).toBeCloseTo((covered / (hi - lo)) * 100, 1);
    expect(await page.textContent('.metric[data-key="cagr"] .v')).toBe('needs a year');
    await page.close();
  }, 120_000);
});

describe('report.html of a busy M1 run zoomed out', () => {
  it('fill markers are thinned to at most 600 without labels, entry-exit lines only when few trades are in view', async () => {
    const dir = await backtest(
      'strategies/breakout-tpsl.ts',
      '--granularity',
      'M1',
      '--from',
      '2024-01-01',
      '--to',
      '2024-03-01',
      '--param',
      'lookback=150',
    );
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    const wide = await page.evaluate(() => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      return {
        marks: v.markers.markers(),
        fillsMarked: v.fillsMarked,
        paths: v.paths,
        thinned: v.thinned,
        info: (globalThis as any).document.querySelector('#prices .chart-info').textContent,
      };
    });
    expect(wide.fillsMarked).toBe(fillsOf(dir));
    expect(wide.fillsMarked).toBeGreaterThan(2000);
    expect(wide.marks.length).toBeLessThanOrEqual(600);
    expect(wide.marks.every((m: { text: string }) => m.text === '')).toBe(true);
    expect(wide.paths).toBe(0);
    expect(wide.info).toContain('thinned');
    // Zoomed to two hours: every fill its own labelled marker, and each closed trade's entry → exit line.
    const from = Date.UTC(2024, 1, 7, 10) / 1000;
    await page.evaluate(
      (f) =>
        (globalThis as any).fxReport.charts.EUR_USD.chart
          .timeScale()
          .setVisibleRange({ from: f, to: f + 7200 }),
      from,
    );
    await page.waitForFunction(() => (globalThis as any).fxReport.charts.EUR_USD.level === 0, null, {
      timeout: 10_000,
    });
    const near = await page.evaluate(() => {
      const v = (globalThis as any).fxReport.charts.EUR_USD;
      return {
        marks: v.markers.markers(),
        fillsMarked: v.fillsMarked,
        paths: v.paths,
        thinned: v.thinned,
        gap: v.labelGap,
        times: v.series.data().map((b: { time: number }) => b.time),
      };
    });
    expect(near.thinned).toBe(0);
    expect(near.marks.length).toBe(near.fillsMarked);
    expect(near.marks.length).toBeGreaterThan(0);
    // Labelled (#trade buy/sell units, or #trade P/L), spaced so that they do not overlap: at least `gap` bars apart.
    const labelled = near.marks.filter((m: { text: string }) => m.text !== '');
    expect(labelled.length).toBeGreaterThan(0);
    expect(
      labelled.every((m: { text: string }) =>
        /^#\d+ (buy|sell) \d+$|^#\d+ [+-][\d,.]+$|^#\d+ [BS] \d+$/.test(m.text),
      ),
    ).toBe(true);
    expect(near.gap).toBeGreaterThanOrEqual(1);
    const bars = labelled.map((m: { time: number }) => near.times.indexOf(m.time));
    for (let i = 1; i < bars.length; i++) expect(bars[i]! - bars[i - 1]!).toBeGreaterThanOrEqual(near.gap);
    expect(near.paths).toBeGreaterThan(0);
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
    expect(r.stderr.trim()).toBe(
      `fxflow: ${dir} is not an fxflow run folder: it has neither transactions.jsonl nor summary.json (a run folder is what \`fxflow backtest\` saves under runs/; \`ls runs/\` lists them)`,
    );
    const missing = await fxflow('report', join(dir, 'nope'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });

  it('a run folder from an older fxflow (no candles file): the report says so and still marks every fill', async () => {
    const dir = copyRun('older', ['chart-candles.json', 'report.html']);
    const r = await fxflow('report', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('chart-candles.json is missing');
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toContain('chart-candles.json is missing');
    // Every fill is in the one window of the fill-price line (thinned to at most 600 markers).
    expect(await page.evaluate(() => (globalThis as any).fxReport.fillsMarked)).toBe(fillsOf(dir));
    expect(await page.evaluate(() => (globalThis as any).fxReport.markerCount)).toBeLessThanOrEqual(600);
    await page.close();
  }, 60_000);

  it('a truncated transactions.jsonl: the report says where it stops', async () => {
    const dir = copyRun('truncated', ['report.html']);
    const text = readFileSync(join(dir, 'transactions.jsonl'), 'utf8');
    writeFileSync(join(dir, 'transactions.jsonl'), text.slice(0, Math.floor(text.length * 0.6)));
    const r = await fxflow('report', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('transactions.jsonl is truncated');
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toMatch(
      /truncated: its last line \(line \d+\) is cut short/,
    );
    expect(await page.evaluate(() => (globalThis as any).fxReport.fillsMarked)).toBe(fillsOf(dir));
    expect(await page.evaluate(() => (globalThis as any).fxReport.markerCount)).toBeLessThanOrEqual(600);
    await page.close();
  }, 60_000);

  it('a run with no trades: a report that says so, no blank page', async () => {
    const strategy = join(tmp, 'never-trades.ts');
    writeFileSync(
      strategy,
      `import { defineStrategy } from ${JSON.stringify(join(ROOT, 'src/strategy/api.ts'))};
export default defineStrategy({ name: 'never-trades', params: {}, subscribe: { candles: ['EUR_USD:H1'] }, init: () => ({}), onCandle() { return undefined; } });
`,
    );
    const dir = await backtest(strategy, '--to', '2024-03-01');
    const { page, errors } = await openPage(
      browser,
      url(join(dir, 'report.html')),
      'window.fxReport && window.fxReport.ready',
    );
    expect(errors).toEqual([]);
    expect(await page.locator('#warnings').textContent()).toContain('the run made no trades');
    expect(await page.locator('#distribution').textContent()).toContain('No closed trades');
    expect(await page.evaluate(() => (globalThis as any).fxReport.lastNav)).toBe(
      cents(summaryOf(dir).finalNAV),
    );
    await page.screenshot({ path: artifact('report-no-trades.png') });
    await page.close();
  }, 60_000);
});
