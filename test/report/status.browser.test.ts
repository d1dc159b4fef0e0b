// The live status page of `fxflow run --status-port`, in a real browser, following the sandbox as
// orders fill: a real `fxflow run` process against the fxflow sandbox on loopback.
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { quiet, pricePath, startFxflowRun, type FxflowRun } from '../runner/harness.ts';
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

/** GET with an explicit Host header; resolves with the status code and body. */
function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = request(url, { headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('fxflow run --status-port', () => {
  it('serves a read-only page on loopback whose figures follow the sandbox as orders fill; no secret reaches it', async () => {
    const token = 'status-page-secret-token-0123456789';
    sandbox = await startSandbox({ heartbeatMs: 200, requireToken: token });
    const accountID = sandbox.accountIDs[0]!;
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-status-'));
    const tokenFile = join(journal, 'token');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(tokenFile, token, { mode: 0o600 });
    run = await startFxflowRun(sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--journal',
      join(journal, 'j'),
      '--log-file',
      join(journal, 'log'),
      '--require-token',
      '--token-file',
      tokenFile,
      '--status-port',
      '0',
      '--max-units',
      '5000',
      '--max-open-trades',
      '3',
    ]);
    const url = /Live status: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(run.out())?.[1];
    expect(url, run.out()).toBeDefined();
    const rest = new V20Rest(new V20Http({ baseUrl: sandbox.url, token, log: quiet }));

    const { page, errors } = await openPage(
      browser,
      url!,
      '(globalThis.fxStatus && globalThis.fxStatus.updates > 0)',
    );
    // Prices: every 3rd makes ping-pong buy 1000 while flat, then sell: one open trade after the 3rd.
    const path = pricePath(12);
    const push = (i: number): void => {
      sandbox!.setTime(path[i]!.time);
      sandbox!.pushPrice(path[i]!);
    };
    for (let i = 0; i < 3; i++) push(i);
    await page.waitForFunction(() => (globalThis as any).fxStatus.last?.trades.length === 1, null, {
      timeout: 30_000,
    });
    const acct = (await rest.summary(accountID)).account;
    const s1 = await page.evaluate(() => (globalThis as any).fxStatus.last);
    expect(s1.trades[0].units).toBe(1000);
    expect(s1.positions).toEqual([expect.objectContaining({ instrument: 'EUR_USD', units: 1000 })]);
    expect(s1.balance).toBe(Number(acct.balance));
    expect(s1.transactions.some((t: { type: string }) => t.type === 'ORDER_FILL')).toBe(true);
    // maxOrdersPerMinute is a default limit, on in every run.
    expect(s1.limits.map((l: { name: string }) => l.name)).toEqual([
      'maxUnits',
      'maxOpenTrades',
      'maxOrdersPerMinute',
    ]);
    expect(s1.limits[0]).toMatchObject({ value: 1000, limit: 5000, used: 0.2 });
    expect(s1.killSwitch.engaged).toBe(false);
    expect(s1.streams.map((x: { name: string }) => x.name)).toEqual(['pricing', 'transactions']);
    expect(s1.streams[0].connects).toBeGreaterThanOrEqual(1);
    // The page shows it.
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#trades tbody tr td').length >= 6,
      null,
      { timeout: 10_000 },
    );
    expect(await page.locator('#positions').textContent()).toContain('EUR_USD');
    await page.screenshot({ path: artifact('status-open.png'), fullPage: true });

    // Three more prices: ping-pong sells 1000 and the trade closes; the page follows.
    for (let i = 3; i < 6; i++) push(i);
    await page.waitForFunction(() => (globalThis as any).fxStatus.last?.trades.length === 0, null, {
      timeout: 30_000,
    });
    const after = (await rest.summary(accountID)).account;
    await page.waitForFunction(
      (b) => (globalThis as any).fxStatus.last?.balance === b,
      Number(after.balance),
      { timeout: 10_000 },
    );
    const s2 = await page.evaluate(() => (globalThis as any).fxStatus.last);
    expect(s2.positions).toEqual([]);
    expect(s2.realizedPL).toBe(Number(after.pl));
    expect(s2.transactions[0].type).not.toBe('');
    expect(errors).toEqual([]);

    // Nothing secret: neither the token nor the whole account ID, in the page or its events.
    const html = await get(url!);
    const json = await get(`${url}status.json`);
    for (const body of [html.body, json.body, await page.content()]) {
      expect(body).not.toContain(token);
      expect(body).not.toContain(accountID);
    }
    expect(JSON.parse(json.body).account).toMatch(/-001$/);
    // Read-only and loopback-only.
    expect((await get(`${url}status.json`, 'evil.example:80')).status).toBe(403);
    await new Promise<void>((ok, fail) => {
      const req = request(`${url}status.json`, { method: 'POST' }, (res) => {
        expect(res.statusCode).toBe(405);
        res.resume();
        res.on('end', ok);
      });
      req.on('error', fail);
      req.end();
    });
    await page.screenshot({ path: artifact('status.png'), fullPage: true });
    await page.close();

    // Stopped: the run folder's report.html is a live run's page (issue 29): it says so, asks for no
    // chart candles, shows no CAGR or Calmar for a run of minutes, and its period and exposure hold.
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const folder = /run folder: (\S+)/.exec(run.out())![1]!;
    const { readFileSync } = await import('node:fs');
    const reportHtml = readFileSync(join(folder, 'report.html'), 'utf8');
    expect(reportHtml).not.toContain(token);
    expect(reportHtml).not.toContain(accountID);
    const rep = await openPage(
      browser,
      `file://${join(folder, 'report.html')}`,
      'window.fxReport && window.fxReport.ready',
    );
    expect(rep.errors).toEqual([]);
    expect(await rep.page.textContent('#run-kind')).toMatch(/^LIVE run · sandbox · broker /);
    const text = await rep.page.evaluate(() => (globalThis as any).document.body.innerText as string);
    expect(text).not.toContain('chart-candles.json');
    expect(text).not.toContain('rerun the backtest');
    for (const k of ['cagr', 'calmar'])
      expect(await rep.page.textContent(`.metric[data-key="${k}"] .v`)).toBe('needs a year');
    const exposure = Number(
      (await rep.page.textContent('.metric[data-key="exposurePct"] .v'))!.replace('%', ''),
    );
    expect(exposure).toBeGreaterThan(0);
    expect(exposure).toBeLessThanOrEqual(100);
    const fills = readFileSync(join(folder, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((t) => t.type === 'ORDER_FILL');
    expect(fills.length).toBe(2);
    const from = /^(\S+) →/.exec((await rep.page.getAttribute('#period', 'title'))!)![1]!;
    expect(Date.parse(from)).toBeLessThanOrEqual(Date.parse(fills[0].time));
    expect(await rep.page.evaluate(() => (globalThis as any).fxReport.fillsMarked)).toBe(2);
    await rep.page.screenshot({ path: artifact('report-live.png'), fullPage: true });
    await rep.page.close();
  }, 120_000);
});
