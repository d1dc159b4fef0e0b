// The drift guard's card on the live status page (`fxflow run --shadow --max-drift … --status-port`),
// in a real browser: a real `fxflow run` process against the sandbox on loopback.
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

describe('fxflow run --shadow --max-drift --status-port', () => {
  it('the page has a Drift guard card with the tolerances and the measures as fills are compared', async () => {
    sandbox = await startSandbox({ heartbeatMs: 200 });
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-drift-status-'));
    run = await startFxflowRun(sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--shadow',
      '--max-drift',
      'price=1,fills=0',
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
    await page.waitForFunction(
      () =>
        ((globalThis as any).document.querySelector('#drift')?.textContent ?? '').includes(
          '0 fill(s) compared',
        ),
      null,
      { timeout: 30_000 },
    );
    // A constant price: ping-pong buys on the 3rd price; the simulator fills it at the 4th, at the same ask.
    const t0 = Date.UTC(2024, 0, 2, 10, 0);
    for (let i = 0; i < 4; i++) {
      sandbox.setTime(t0 + i * 1000);
      sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015, time: t0 + i * 1000 });
    }
    await page.waitForFunction(
      () =>
        ((globalThis as any).document.querySelector('#drift')?.textContent ?? '').includes(
          '1 fill(s) compared',
        ),
      null,
      { timeout: 30_000 },
    );
    const section = await page.locator('section', { has: page.locator('#drift') }).textContent();
    expect(section).toContain('Drift guard (--max-drift price=1,fills=0,wait=10s)');
    expect(section).toContain(
      'Within every tolerance: 1 fill(s) compared; largest price difference 0.0 pips; fills on one side only 0',
    );
    expect(errors).toEqual([]);
    await page.screenshot({ path: artifact('status-drift.png'), fullPage: true });
    await page.close();
  }, 90_000);
});
