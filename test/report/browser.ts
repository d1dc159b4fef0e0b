// Real headless Debian chromium driven by playwright-core, for the report pages' tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** Screenshots kept as test artifacts. */
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the report tests need Debian's chromium (apt-get install -y chromium; .ci/run installs it)`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page-side predicate from the text of an expression (see openPage). */
export function asPredicate(expression: string): () => unknown {
  return new Function(`return (${expression});`) as () => unknown;
}

/** A page that records console errors, failed requests and uncaught exceptions; `init` runs on it before it loads. */
export async function openPage(
  b: Browser,
  url: string,
  ready: string,
  size = { width: 1280, height: 900 },
  init?: (page: Page) => Promise<void>,
): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await b.newPage({ viewport: size });
  await init?.(page);
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  // A predicate given as text is made a function here, in Node: Playwright polls a text predicate
  // with eval inside the page, which the pages' Content-Security-Policy (no 'unsafe-eval') refuses
  // whenever the first check is not already true; a function is called through the debugger
  // protocol, which the policy does not govern.
  await page.waitForFunction(asPredicate(ready), null, { timeout: 60_000 });
  return { page, errors, requests };
}

export const artifact = (name: string): string => join(ARTIFACTS, name);

export const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);

/** Runs `fxflow <args>` as its own process in the repository; never throws for a non-zero exit. */
export async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

/**
 * Records every text Chromium draws on a canvas (before the page's scripts run): the charts' axis
 * labels as Lightweight Charts paints them, for axisLabels. Call before `page.goto`.
 */
export async function recordCanvasText(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = globalThis as unknown as { __fxText: unknown[]; CanvasRenderingContext2D: any };
    w.__fxText = [];
    const proto = w.CanvasRenderingContext2D.prototype;
    const fillText = proto.fillText;
    proto.fillText = function (this: any, text: string, x: number, y: number, ...rest: unknown[]) {
      const p = this.getTransform().transformPoint({ x, y });
      w.__fxText.push({ canvas: this.canvas, text: String(text), x: p.x, y: p.y });
      return fillText.call(this, text, x, y, ...rest);
    };
  });
}

/**
 * The labels a chart's time axis shows now, each with the time (epoch s) of the bar under it, read
 * from what the chart paints (recordCanvasText) and the chart's own coordinateToTime: the chart in
 * `box` (a CSS selector) is repainted and the labels drawn on its bottom row's canvases are taken.
 * `chart`: the page expression of the chart (e.g. `fxReport.equityChart`). Labels within 40 px of
 * either end are left out (the chart shifts those to fit).
 */
export async function axisLabels(
  page: Page,
  box: string,
  chart: string,
): Promise<{ text: string; time: number | null }[]> {
  return (await page.evaluate(
    async ([box, chart]) => {
      const w = globalThis as any;
      const c = new Function(`return (${chart});`)();
      const el = w.document.querySelector(box);
      const rows = el.querySelectorAll('table tr');
      const axis = [...rows[rows.length - 1].querySelectorAll('canvas')];
      w.__fxText.length = 0;
      // A full repaint (the chart's options applied again), drawn by the next frames.
      c.applyOptions({ timeScale: { rightOffset: c.options().timeScale.rightOffset } });
      c.resize(el.clientWidth, c.options().height, true);
      for (let i = 0; i < 3; i++) await new Promise((r) => w.requestAnimationFrame(r));
      const out = [];
      for (const d of w.__fxText) {
        if (!axis.includes(d.canvas)) continue;
        const r = d.canvas.getBoundingClientRect();
        const x = d.x / (d.canvas.width / r.width);
        if (x < 40 || x > r.width - 40) continue;
        out.push({ text: d.text, time: c.timeScale().coordinateToTime(x) });
      }
      return out;
    },
    [box, chart],
  )) as { text: string; time: number | null }[];
}
