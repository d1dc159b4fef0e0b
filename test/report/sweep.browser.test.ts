// sweep.html and walkforward.html in a real browser: a real small sweep and walk-forward (the bundled
// sample's EUR_USD H1), the pages opened from disk by headless chromium, their figures checked
// against the folder's files.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifact, asPredicate, fxflow, launch, openPage } from './browser.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-sweep-page-'));
const sweepDir = join(tmp, 'sweep');
const wfDir = join(tmp, 'wf');
const READY = 'window.fxReport && window.fxReport.ready';
const url = (file: string): string => `file://${file}`;
let browser: Browser;

interface Trial {
  trial: number;
  status: string;
  params: { fast: number; slow: number; longOnly: boolean };
  objective: number | null;
}
const trialsOf = (dir: string): Trial[] =>
  readFileSync(join(dir, 'trials.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Trial);

beforeAll(async () => {
  browser = await launch();
  // 3 × 2 × 2 = 12 grid trials over two months of H1: a few seconds.
  const s = await fxflow(
    'optimize',
    'strategies/sma-cross.ts',
    '--param',
    'fast=4,6,8',
    '--param',
    'slow=20,30',
    '--param',
    'longOnly=true,false',
    '--from',
    '2024-01-01',
    '--to',
    '2024-03-01',
    '--workers',
    '1',
    '--out',
    sweepDir,
  );
  expect(s.code, s.stderr).toBe(0);
  expect(s.stdout).toContain(`Sweep page: ${join(sweepDir, 'sweep.html')}`);
  // Rolling: train Jan–Feb, test Mar; train Feb–Mar, test Apr.
  const w = await fxflow(
    'walkforward',
    'strategies/sma-cross.ts',
    '--param',
    'fast=5,10',
    '--param',
    'slow=20,40',
    '--train',
    '2mo',
    '--test',
    '1mo',
    '--from',
    '2024-01-01',
    '--to',
    '2024-05-01',
    '--workers',
    '1',
    '--out',
    wfDir,
  );
  expect(w.code, w.stderr).toBe(0);
  expect(w.stdout).toContain(`Walk-forward page: ${join(wfDir, 'walkforward.html')}`);
}, 240_000);
afterAll(async () => {
  await browser?.close();
});

describe('sweep.html', () => {
  it('is written by fxflow optimize, loads offline with no console error; heatmap cells = (fast, slow) pairs, best cell = best trial, one table row per trial', async () => {
    const file = join(sweepDir, 'sweep.html');
    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    const trials = trialsOf(sweepDir);
    expect(trials).toHaveLength(12);
    const ok = trials.filter((t) => t.status === 'ok' && t.objective !== null);
    const best = Math.max(...ok.map((t) => t.objective!));
    const summary = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as {
      best: { objective: number; params: Trial['params'] };
      overfitting: { deflatedSharpe: { dsr: number } | null; pbo: { pbo: number } | null };
    };
    expect(summary.best.objective).toBe(best);

    const { page, errors, requests } = await openPage(browser, url(file), READY);
    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);

    // Default axes: fast × slow, each cell the max over longOnly.
    const pairs = new Map<string, number>();
    for (const t of ok)
      pairs.set(
        `${t.params.fast}|${t.params.slow}`,
        Math.max(pairs.get(`${t.params.fast}|${t.params.slow}`) ?? -Infinity, t.objective!),
      );
    const cells = await page.$$eval('#heatmap td.cell.filled', (tds) =>
      tds.map((td) => ({
        x: td.getAttribute('data-x'),
        y: td.getAttribute('data-y'),
        v: Number(td.getAttribute('data-value')),
      })),
    );
    expect(cells).toHaveLength(pairs.size);
    expect(await page.$$eval('#heatmap td.cell', (tds) => tds.length)).toBe(6);
    for (const c of cells) expect(c.v).toBe(pairs.get(`${c.x}|${c.y}`));
    expect(Number(await page.getAttribute('#heatmap td.best-cell', 'data-value'))).toBe(best);
    expect(await page.textContent('#best-objective .v')).toBe(
      best.toLocaleString('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 }),
    );
    for (const [k, v] of Object.entries(summary.best.params))
      expect(await page.textContent(`#best-params td[data-param="${k}"]`)).toBe(String(v));
    // The best trial's figures and the table's headings are named in words (Net P/L, CAGR %…), not by their keys.
    const names = await page.$$eval('#best .metric .k, #trials th', (xs) =>
      xs.map((x) => x.textContent ?? ''),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'Net P/L',
        'Return %',
        'CAGR %',
        'Max drawdown %',
        'Profit factor',
        'Win rate %',
      ]),
    );
    expect(
      names.filter((n) => /\b(netPL|returnPct|cagrPct|maxDrawdownPct|profitFactor|winRate)\b/.test(n)),
    ).toEqual([]);

    // The other mode: longOnly held at the best trial's value: one trial per cell.
    await page.selectOption('#hm-mode', 'best');
    const fixed = ok.filter((t) => t.params.longOnly === summary.best.params.longOnly);
    const held = await page.$$eval('#heatmap td.cell.filled', (tds) =>
      tds.map((td) => ({
        x: td.getAttribute('data-x'),
        y: td.getAttribute('data-y'),
        v: Number(td.getAttribute('data-value')),
        n: Number(td.getAttribute('data-n')),
      })),
    );
    expect(held).toHaveLength(fixed.length);
    for (const c of held) {
      expect(c.n).toBe(1);
      expect(c.v).toBe(
        fixed.find((t) => `${t.params.fast}` === c.x && `${t.params.slow}` === c.y)!.objective,
      );
    }
    expect(await page.textContent('#hm-info')).toContain(
      `longOnly = ${summary.best.params.longOnly} (the best trial's values)`,
    );
    // Any two params: fast × longOnly.
    await page.selectOption('#hm-y', 'longOnly');
    expect(await page.$$eval('#heatmap td.cell', (tds) => tds.length)).toBe(6);

    // The trials table: one row per trial, sorted by the objective (best first), filterable.
    expect(await page.$$eval('#trials tbody tr', (trs) => trs.length)).toBe(12);
    expect(await page.textContent('#trials tbody tr:first-child td:first-child')).toBe(
      String(trials.find((t) => t.objective === best && ok.includes(t))!.trial),
    );
    await page.fill('#trial-filter', 'fast=6 longOnly=true');
    expect(await page.$$eval('#trials tbody tr', (trs) => trs.length)).toBe(
      trials.filter((t) => t.params.fast === 6 && t.params.longOnly).length,
    );
    await page.fill('#trial-filter', 'fats=6');
    expect(await page.textContent('#filter-error')).toContain('"fats=6" is not a condition on a column');
    await page.fill('#trial-filter', '');
    await page.click('#trials th[data-key="trial"]');
    expect(
      await page.$$eval('#trials tbody tr td:first-child', (tds) => tds.map((td) => Number(td.textContent))),
    ).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

    // Overfitting figures with their explanation and source.
    const of = await page.textContent('#overfitting');
    if (summary.overfitting.deflatedSharpe) {
      expect(await page.textContent('#dsr-value')).toBe(summary.overfitting.deflatedSharpe.dsr.toFixed(3));
      expect(of).toContain('Bailey, D. H. & López de Prado, M. (2014)');
    }
    if (summary.overfitting.pbo) {
      expect(await page.textContent('#pbo-value')).toBe(summary.overfitting.pbo.pbo.toFixed(3));
      expect(of).toContain('The Probability of Backtest Overfitting');
    } else expect(await page.textContent('#overfitting-note')).toMatch(/PBO needs/);
    await page.screenshot({ path: artifact('sweep.png'), fullPage: true });
    await page.close();
  });

  it('bad input: a cut trials.jsonl gives a page (and a warning) saying which line and how many trials are missing', async () => {
    const cut = join(tmp, 'cut');
    cpSync(sweepDir, cut, { recursive: true });
    const text = readFileSync(join(cut, 'trials.jsonl'), 'utf8');
    writeFileSync(join(cut, 'trials.jsonl'), text.slice(0, text.length - 40)); // the last record cut mid-line
    const r = await fxflow('report', cut);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(cut, 'sweep.html'));
    expect(r.stderr).toContain('trials.jsonl: line 12 is cut short');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const { page, errors } = await openPage(browser, url(join(cut, 'sweep.html')), READY);
    expect(errors).toEqual([]);
    const warn = await page.textContent('#warnings');
    expect(warn).toContain('trials.jsonl: line 12 is cut short');
    expect(warn).toContain(
      'summary.json counts 12 trials but trials.jsonl holds 11 readable ones: 1 is missing',
    );
    expect(await page.$$eval('#trials tbody tr', (trs) => trs.length)).toBe(11);
    await page.close();
  });

  it('a pair whose trials all failed is a marked cell saying so, not a blank', async () => {
    const failed = join(tmp, 'failed');
    cpSync(sweepDir, failed, { recursive: true });
    const trials = trialsOf(failed).map((t) =>
      t.params.fast === 4 && t.params.slow === 20
        ? { ...t, status: 'failed', objective: null, metrics: undefined, error: 'strategy threw: boom' }
        : t,
    );
    writeFileSync(join(failed, 'trials.jsonl'), trials.map((t) => `${JSON.stringify(t)}\n`).join(''));
    const r = await fxflow('report', failed);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openPage(browser, url(join(failed, 'sweep.html')), READY);
    expect(errors).toEqual([]);
    expect(await page.$$eval('#heatmap td.cell.filled', (tds) => tds.length)).toBe(5);
    expect(await page.getAttribute('#heatmap td.failed-cell', 'data-failed')).toBe('2');
    expect(await page.getAttribute('#heatmap td.failed-cell', 'title')).toContain('2 trials here failed');
    const ok = trials.filter((t) => t.status === 'ok');
    expect(Number(await page.getAttribute('#heatmap td.best-cell', 'data-value'))).toBe(
      Math.max(...ok.map((t) => t.objective!)),
    );
    await page.selectOption('#trial-status', 'failed');
    expect(await page.$$eval('#trials tbody tr', (trs) => trs.length)).toBe(2);
    expect(await page.textContent('#trials tbody')).toContain('strategy threw: boom');
    await page.close();
  });

  it('bad input: a folder without trials.jsonl or summary.json says so', async () => {
    const bare = join(tmp, 'bare');
    cpSync(sweepDir, bare, { recursive: true, filter: (src) => !/trials\.jsonl$|summary\.json$/.test(src) });
    const r = await fxflow('report', bare);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openPage(browser, url(join(bare, 'sweep.html')), READY);
    expect(errors).toEqual([]);
    const warn = await page.textContent('#warnings');
    expect(warn).toContain('trials.jsonl is missing');
    expect(warn).toContain('summary.json is missing');
    expect(await page.$$eval('#trials tbody tr', (trs) => trs.length)).toBe(0);
    await page.close();
  });
});

describe('walkforward.html', () => {
  it('is written by fxflow walkforward with a sweep.html per window; windows table = windows, last OOS equity point = the stitched figure', async () => {
    const doc = JSON.parse(readFileSync(join(wfDir, 'walkforward.json'), 'utf8')) as {
      windows: { params: { fast: number; slow: number }; oosDays: number }[];
      oosEquity: { time: string; nav: number; window: number }[];
      oosReturnPct: number;
      efficiency: number | null;
    };
    expect(doc.windows).toHaveLength(2);
    for (const w of ['window-01', 'window-02']) expect(existsSync(join(wfDir, w, 'sweep.html'))).toBe(true);
    const { page, errors, requests } = await openPage(browser, url(join(wfDir, 'walkforward.html')), READY);
    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
    expect(await page.$$eval('#windows tbody tr', (trs) => trs.length)).toBe(doc.windows.length);
    const state = await page.evaluate(
      () =>
        (
          globalThis as unknown as {
            fxReport: { oosLast: number; oosPoints: number; oosFirstTime: string; windowMarks: string[] };
          }
        ).fxReport,
    );
    expect(state.oosPoints).toBe(doc.oosEquity.length);
    expect(state.oosLast).toBe(doc.oosEquity[doc.oosEquity.length - 1]!.nav);
    // Indexed by date: the curve starts in the first test period (2024-03) and ends in the last (2024-04), times increasing.
    expect(state.oosFirstTime).toBe(doc.oosEquity[0]!.time);
    expect(doc.oosEquity[0]!.time.startsWith('2024-03-0')).toBe(true);
    expect(doc.oosEquity[doc.oosEquity.length - 1]!.time <= '2024-05-01T00:00:00.000Z').toBe(true);
    for (let i = 1; i < doc.oosEquity.length; i++)
      expect(doc.oosEquity[i]!.time > doc.oosEquity[i - 1]!.time).toBe(true);
    // The stitched return is the last point less 1, in percent.
    expect(Math.abs((state.oosLast - 1) * 100 - doc.oosReturnPct)).toBeLessThan(1e-4);
    // Each window's test period starts where the previous one's days end.
    expect(doc.windows.reduce((a, w) => a + w.oosDays, 0)).toBe(doc.oosEquity.length - 1);
    expect(state.windowMarks).toEqual([doc.oosEquity[0]!.time, doc.oosEquity[doc.windows[0]!.oosDays]!.time]);
    expect(doc.oosEquity[doc.windows[0]!.oosDays + 1]!.window).toBe(2);
    expect(await page.textContent('#window-days')).toBe(
      `W1: test from 2024-03-01, ${doc.windows[0]!.oosDays} days · W2: test from 2024-04-01, ${doc.windows[1]!.oosDays} days`,
    );
    expect(await page.textContent('#oos-return .v')).toBe(`${doc.oosReturnPct.toFixed(2)}%`);
    // Chosen params per window, in the table and the stability list.
    const fastCol = await page.$$eval('#windows tbody tr', (trs) =>
      trs.map((tr) => tr.querySelectorAll('td')[3]!.textContent),
    );
    expect(fastCol).toEqual(doc.windows.map((w) => String(w.params.fast)));
    expect(await page.textContent('#stability')).toContain(doc.windows.map((w) => w.params.fast).join(', '));
    // In/out-of-sample bars: a readable width, each with its value; each pair with its window.
    const bars = await page.$$eval('#is-oos rect', (rs) =>
      rs.map((r) => ({
        w: Number(r.getAttribute('width')),
        oos: r.getAttribute('class') === 'bar-oos',
        tip: r.querySelector('title')!.textContent,
      })),
    );
    expect(bars.length).toBeGreaterThanOrEqual(2);
    expect(Math.min(...bars.map((b) => b.w))).toBeGreaterThanOrEqual(20);
    const labels = await page.$$eval('#is-oos text', (ts) => ts.map((t) => t.textContent ?? ''));
    for (const b of bars) expect(labels).toContain(`${Number(/: (-?[\d.]+)%/.exec(b.tip!)![1]).toFixed(1)}%`);
    expect(labels).toEqual(
      expect.arrayContaining(['W1', 'W2', 'IS', 'OOS', 'test 2024-03-01', 'test 2024-04-01']),
    );
    expect(await page.textContent('#is-oos .legend')).toMatch(/IS: in-sample[\s\S]*OOS: out of sample/);
    // The windows table fits the page at 1280 px: no horizontal scrolling.
    const fit = await page.$eval('#windows', (s) => {
      const box = s.querySelector('.scroll')!;
      return { scroll: box.scrollWidth, client: box.clientWidth };
    });
    expect(fit.scroll).toBeLessThanOrEqual(fit.client);
    // Figures named in words, not by their summary.json keys.
    const heads = await page.$$eval('#windows th', (ths) => ths.map((t) => t.textContent ?? ''));
    expect(heads.filter((h) => /\b[a-z]+[A-Z][a-zA-Z]*\b/.test(h))).toEqual([]);
    await page.screenshot({ path: artifact('walkforward.png'), fullPage: true });
    // A window's sweep page opens from the link.
    await page.click('#windows tbody tr:first-child a');
    await page.waitForFunction(asPredicate(READY));
    expect(page.url()).toContain('window-01/sweep.html');
    await page.close();
  });

  it('fxflow report rebuilds walkforward.html from the folder', async () => {
    const r = await fxflow('report', wfDir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(wfDir, 'walkforward.html'));
  });
});
