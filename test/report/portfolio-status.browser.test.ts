// The live status page of a portfolio run (`fxflow run a.ts b.ts --status-port`), in a real browser:
// a real `fxflow run` process against the sandbox on loopback. Its Strategies section shows each
// book and the strategy stopped alone.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { startFxflowRun, type FxflowRun } from '../runner/harness.ts';
import { artifact, launch, openPage } from './browser.ts';

let browser: Browser;
let sandbox: Sandbox | undefined;
let run: FxflowRun | undefined;
beforeAll(async () => {
  browser = await launch();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  await run?.exited;
  await sandbox?.close();
  run = undefined;
  sandbox = undefined;
});

const books = (): string => (globalThis as any).document.querySelector('#books')?.textContent ?? '';

describe('fxflow run a.ts b.ts --status-port', () => {
  it("the page shows each strategy's book, and the one that threw as stopped alone with its book closed", async () => {
    sandbox = await startSandbox({ heartbeatMs: 200 });
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-status-'));
    run = await startFxflowRun(sandbox, 'test/runner/ping-pong-strategy.ts', [
      'test/portfolio/throw-on-third.ts',
      '--journal',
      join(journal, 'j'),
      '--log-file',
      join(journal, 'log'),
      '--status-port',
      '0',
    ]);
    const url = /Live status: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(run.out())?.[1];
    expect(url, run.out()).toBeDefined();
    const { page, errors } = await openPage(
      browser,
      url!,
      '(globalThis.fxStatus && globalThis.fxStatus.updates > 0)',
    );
    await page.waitForFunction(books, null, { timeout: 30_000 });
    const t0 = Date.UTC(2024, 0, 2, 10, 0);
    const push = (i: number): void => {
      sandbox!.setTime(t0 + i * 1000);
      sandbox!.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015, time: t0 + i * 1000 });
    };
    // First price: the thrower buys 500; its fill shows in its book.
    push(0);
    await page.waitForFunction(
      () =>
        ((globalThis as any).document.querySelector('#books')?.textContent ?? '').includes('EUR_USD +500'),
      null,
      { timeout: 30_000 },
    );
    // Third price: it throws; it is stopped alone and its 500 closed, while ping-pong (a buy on its
    // third price) trades on.
    push(1);
    push(2);
    await page.waitForFunction(
      () => {
        const t = (globalThis as any).document.querySelector('#books')?.textContent ?? '';
        return (
          t.includes('STOPPED ALONE: threw a deliberate failure on the third price') &&
          t.includes('EUR_USD +1000')
        );
      },
      null,
      { timeout: 30_000 },
    );
    const rows = await page.locator('#books tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^ping-pong-strategyEUR_USD \+1000\d+ EUR_USD 10000trading$/);
    expect(rows[1]).toBe(
      'throw-on-thirdflatnone0STOPPED ALONE: threw a deliberate failure on the third price',
    );
    expect(errors).toEqual([]);
    await page.screenshot({ path: artifact('status-portfolio.png'), fullPage: true });
    await page.close();
  }, 90_000);
});
