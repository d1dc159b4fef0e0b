// Issue 15, item 1: the kill switch and --flatten-on-exit close what the ACCOUNT holds, then confirm
// it from the account. Real sandbox over HTTP; the transaction stream lags behind a TCP tap that
// holds its bytes back (a fill that has not reached the runner yet); a real `fxflow run` process for
// the exit code.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { startTcpTap, type TcpTap } from '../tcp-tap.ts';
import {
  type FxflowRun,
  pricePath,
  quiet,
  rig,
  type Rig,
  startFxflowRun,
  until,
  waitTicks,
} from './harness.ts';

let r: Rig | undefined;
let tap: TcpTap | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await tap?.close();
  tap = undefined;
  await r?.close();
  r = undefined;
});

describe('the kill switch asks the account', () => {
  it('a fill the runner has not seen yet (transaction stream lagging): the kill switch closes it and the account confirms nothing is open', async () => {
    r = await rig();
    tap = await startTcpTap(r.sandbox.url);
    // REST straight to the sandbox; streams through the tap (whose transaction stream the test holds back).
    const http = new V20Http({
      baseUrl: r.sandbox.url,
      streamUrl: tap.url,
      log: quiet,
      retryBaseMs: 20,
      rate: { perSecond: 1000, burst: 1000 },
      connectionsPerSecond: 1000,
    });
    const kill = join(r.journalDir, 'KILL');
    const runner = r.runner({
      http,
      rest: new V20Rest(http),
      killFile: kill,
      streams: { watchdogMs: 60_000, reconnectBaseMs: 10, reconnectCapMs: 100 },
    });
    await runner.start();
    tap.hold((request) => request.includes('/transactions/stream'));
    const path = pricePath(3);
    for (const [i, p] of path.entries()) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await waitTicks(runner, i + 1);
    }
    // Ping-pong bought 1000 on the 3rd price: filled at the sandbox, unseen by the runner.
    await until(async () => (await r!.rest.openTrades(r!.accountID)).length === 1, 'the fill at the sandbox');
    await runner.execution!.drain();
    const runnerView = runner.portfolio.ledger.trades.size;
    writeFileSync(kill, '');
    await runner.done;
    const res = await runner.stop();
    const after = {
      trades: (await r.rest.openTrades(r.accountID)).length,
      positions: (await r.rest.openPositions(r.accountID)).length,
    };
    tap.release();
    console.log(
      `[kill switch / account] runner's view at the kill: ${runnerView} open trades; the account: 1; after: ${JSON.stringify(after)}; check ${JSON.stringify(res.account)}`,
    );
    expect(runnerView).toBe(0);
    expect(after).toEqual({ trades: 0, positions: 0 });
    expect(res.account).toMatchObject({ ok: true, openTrades: 0, positions: [], pendingEntries: 0 });
    expect(res.account!.rounds).toBe(1);
  }, 60_000);

  it('fxflow run: when the account cannot confirm it is flat, the kill switch is a loud error and a non-zero exit (never "nothing open")', async () => {
    r = await rig();
    const kill = join(r.journalDir, 'KILL');
    run = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--journal',
      r.journalDir,
      '--kill-file',
      kill,
      '--log-file',
      join(r.journalDir, 'run.log'),
      '--flatten-timeout',
      '3',
    ]);
    await r.rest.createOrder(r.accountID, { type: 'MARKET', instrument: 'EUR_USD', units: '1000' } as never);
    // Every REST request fails from now on: the closes and the account reads.
    r.sandbox.setFaults({ errorRate: 1, seed: 1 });
    writeFileSync(kill, '');
    const code = await run.exited;
    r.sandbox.setFaults({});
    const open = (await r.rest.openTrades(r.accountID)).length;
    const out = run.out();
    const err = run.err();
    console.log(
      `[kill switch / account] account unreadable: exit ${code}; ${out.split('\n').find((l) => l.startsWith('account')) ?? '(no account line)'}; stderr: ${err.trim().split('\n').pop()}`,
    );
    expect(open).toBe(1);
    expect(code).not.toBe(0);
    expect(out).toMatch(/NOT FLAT/);
    expect(err).toMatch(/could not confirm from account/);
  }, 90_000);

  it("the kill switch's cancels pass every risk limit but go through the request budget like every call (4 requests/s here)", async () => {
    r = await rig();
    // The runner's client with a budget of 4 requests per second (burst 4); the test's own client is unlimited.
    const http = new V20Http({
      baseUrl: r.sandbox.url,
      log: quiet,
      retryBaseMs: 20,
      rate: { perSecond: 4, burst: 4 },
      connectionsPerSecond: 1000,
    });
    const runner = r.runner({
      http,
      rest: new V20Rest(http),
      limits: { maxOrdersPerMinute: 1 },
      params: { every: 1000, units: '1000' },
    });
    await runner.start();
    for (let i = 0; i < 12; i++)
      await r.rest.createOrder(r.accountID, {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '1000',
        price: (1.05 - i * 0.001).toFixed(5),
        timeInForce: 'GTC',
      } as never);
    await until(() => runner.portfolio.ledger.pendingOrders.size === 12, 'the runner to see the 12 orders');
    const before = http.stats.requests;
    const t0 = performance.now();
    const res = await runner.kill('test');
    const ms = performance.now() - t0;
    const requests = http.stats.requests - before;
    const pending = (await r.rest.pendingOrders(r.accountID)).length;
    console.log(
      `[kill switch / budget] 12 cancels past maxOrdersPerMinute 1: ${requests} requests in ${Math.round(ms)} ms at 4/s (burst 4); ${pending} pending after; risk refusals ${res.risk.breaches}`,
    );
    expect(pending).toBe(0);
    expect(res.risk.breaches).toBe(0);
    expect(requests).toBeGreaterThanOrEqual(14); // 12 cancels and at least 2 account reads
    // A budget of 4 per second with a burst of 4 cannot serve n requests in less than (n - 4) / 4 s.
    expect(ms).toBeGreaterThanOrEqual(((requests - 4) / 4) * 1000 - 50);
  }, 60_000);

  it('--flatten-on-exit closes what the account holds (a trade opened outside the runner while its stream lags) and confirms it', async () => {
    r = await rig();
    tap = await startTcpTap(r.sandbox.url);
    const http = new V20Http({
      baseUrl: r.sandbox.url,
      streamUrl: tap.url,
      log: quiet,
      retryBaseMs: 20,
      rate: { perSecond: 1000, burst: 1000 },
      connectionsPerSecond: 1000,
    });
    const runner = r.runner({
      http,
      rest: new V20Rest(http),
      flattenOnExit: true,
      params: { every: 1000, units: '1000' },
      streams: { watchdogMs: 60_000, reconnectBaseMs: 10, reconnectCapMs: 100 },
    });
    await runner.start();
    tap.hold((request) => request.includes('/transactions/stream'));
    await r.rest.createOrder(r.accountID, { type: 'MARKET', instrument: 'EUR_USD', units: '-2000' } as never);
    await r.rest.createOrder(r.accountID, {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '1000',
      price: '1.05000',
      timeInForce: 'GTC',
    } as never);
    const res = await runner.stop('SIGTERM');
    tap.release();
    const after = {
      trades: (await r.rest.openTrades(r.accountID)).length,
      pending: (await r.rest.pendingOrders(r.accountID)).length,
    };
    console.log(
      `[flatten / account] after --flatten-on-exit: ${JSON.stringify(after)}; check ${JSON.stringify(res.account)}`,
    );
    expect(after).toEqual({ trades: 0, pending: 0 });
    expect(res.account).toMatchObject({ ok: true, positions: [], pendingEntries: 0 });
  }, 60_000);
});
